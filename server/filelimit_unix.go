//go:build linux || darwin

package server

import "syscall"

// raiseFileLimit raises the soft limit on open files to the hard limit and
// returns the limit now in force. (Go's runtime already does this at start
// on most systems; doing it here makes the figure we budget with certain.)
// 0 means unknown.
func raiseFileLimit() (soft, hard uint64, err error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, err
	}
	if l.Cur < l.Max {
		want := l
		want.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			// macOS refuses more than kern.maxfilesperproc; keep what we have.
			return l.Cur, l.Max, err
		}
		l = want
	}
	return l.Cur, l.Max, nil
}
