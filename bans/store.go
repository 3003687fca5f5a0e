package bans

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// MaxBansLimit is the most -bans-max may be.
const MaxBansLimit = 100_000

// Config is a ban list's settings.
type Config struct {
	// File keeps the list across restarts; empty: in memory only, lost at
	// a restart.
	File string
	// MaxBans bounds the bans held; past it Add answers ErrFull.
	MaxBans int
	Now     func() time.Time // nil: time.Now
	Logger  *slog.Logger     // nil: discard
}

// DefaultMaxBans is Config.MaxBans unless set.
const DefaultMaxBans = 10_000

func (c *Config) validate() error {
	if c.MaxBans < 1 || c.MaxBans > MaxBansLimit {
		return fmt.Errorf("bans: MaxBans %d: must be 1 to %d", c.MaxBans, MaxBansLimit)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Store is the ban list. Lookups take a read lock and never touch the
// disk; Add and Lift write the file before they return.
type Store struct {
	cfg Config
	// writing serialises Add and Lift, which write outside mu.
	writing sync.Mutex
	mu      sync.RWMutex
	users   map[string]Ban
	ips     map[netip.Prefix]Ban
	// Refusals counts lookups that found a ban, by kind.
	refusedUser, refusedIP atomic.Uint64
	// shared carries changes to a cluster's other nodes (shared.go); nil
	// on a single node. onChange hears of bans they add.
	shared   Shared
	onChange func()
}

// Open loads cfg.File (a missing file is an empty list). A file that is too
// large, not a ban file, or holds an invalid ban is an error: the server
// must not start with bans silently dropped.
func Open(cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, users: make(map[string]Ban), ips: make(map[netip.Prefix]Ban)}
	if cfg.File == "" {
		return s, nil
	}
	list, err := readFile(cfg.File, cfg.MaxBans, cfg.Now())
	if err != nil {
		return nil, err
	}
	for _, b := range list {
		s.putLocked(b)
	}
	cfg.Logger.Info("bans loaded", "file", cfg.File, "bans", len(list))
	return s, nil
}

func (s *Store) putLocked(b Ban) {
	if b.User != "" {
		s.users[b.User] = b
	} else {
		s.ips[b.Prefix] = b
	}
}

// Add bans q's user or network, replacing a ban of the same one, and
// saves the list.
func (s *Store) Add(q Request) (Ban, error) {
	now := s.cfg.Now()
	b, err := newBan(q, now)
	if err != nil {
		return Ban{}, err
	}
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	s.pruneLocked(now)
	_, had := s.getLocked(b)
	full := !had && len(s.users)+len(s.ips) >= s.cfg.MaxBans
	shared := s.shared
	s.mu.Unlock()
	if full {
		return Ban{}, fmt.Errorf("%w: %d bans held (-bans-max); lift some first", ErrFull, s.cfg.MaxBans)
	}
	// Outside s.mu: hellos look bans up while the cluster takes the write.
	if err := publish(shared, &b, ""); err != nil {
		return Ban{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.getLocked(b)
	s.putLocked(b)
	if err := s.saveLocked(); err != nil {
		s.deleteLocked(b)
		if had {
			s.putLocked(old)
		}
		return Ban{}, err
	}
	s.cfg.Logger.Info("ban added", "ban", b.ID, "expires", b.Expires, "reason", b.Reason)
	return b, nil
}

// Lift removes the ban id names and saves the list.
func (s *Store) Lift(id string) error {
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	s.pruneLocked(s.cfg.Now())
	var b Ban
	for _, c := range s.allLocked() {
		if c.ID == id {
			b = c
		}
	}
	shared := s.shared
	s.mu.Unlock()
	if b.ID == "" {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err := publish(shared, nil, b.ID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteLocked(b)
	if err := s.saveLocked(); err != nil {
		s.putLocked(b)
		return err
	}
	s.cfg.Logger.Info("ban lifted", "ban", b.ID)
	return nil
}

func (s *Store) getLocked(b Ban) (Ban, bool) {
	if b.User != "" {
		o, ok := s.users[b.User]
		return o, ok
	}
	o, ok := s.ips[b.Prefix]
	return o, ok
}

func (s *Store) deleteLocked(b Ban) {
	delete(s.users, b.User)
	delete(s.ips, b.Prefix)
}

// pruneLocked drops expired bans (the next save leaves them out).
func (s *Store) pruneLocked(now time.Time) {
	maps.DeleteFunc(s.users, func(_ string, b Ban) bool { return !b.Expires.After(now) })
	maps.DeleteFunc(s.ips, func(_ netip.Prefix, b Ban) bool { return !b.Expires.After(now) })
}

func (s *Store) allLocked() []Ban {
	out := slices.AppendSeq(slices.Collect(maps.Values(s.users)), maps.Values(s.ips))
	slices.SortFunc(out, func(a, b Ban) int { return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(a.ID, b.ID)) })
	return out
}

func (s *Store) saveLocked() error {
	if s.cfg.File == "" {
		return nil
	}
	return writeFile(s.cfg.File, s.allLocked())
}

// List returns the bans in force, newest first.
func (s *Store) List() []Ban {
	now := s.cfg.Now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.DeleteFunc(s.allLocked(), func(b Ban) bool { return !b.Expires.After(now) })
}

// User returns the ban in force on user id, if any.
func (s *Store) User(id string) (Ban, bool) {
	if s == nil || id == "" {
		return Ban{}, false
	}
	s.mu.RLock()
	b, ok := s.users[id]
	s.mu.RUnlock()
	if !ok || !b.Expires.After(s.cfg.Now()) {
		return Ban{}, false
	}
	s.refusedUser.Add(1)
	return b, true
}

// IP returns the ban in force on a network holding addr, if any: of
// several, the one that ends last.
func (s *Store) IP(addr netip.Addr) (Ban, bool) {
	if s == nil || !addr.IsValid() {
		return Ban{}, false
	}
	addr = addr.Unmap()
	now := s.cfg.Now()
	var found Ban
	s.mu.RLock()
	for p, b := range s.ips {
		if p.Contains(addr) && b.Expires.After(now) && b.Expires.After(found.Expires) {
			found = b
		}
	}
	s.mu.RUnlock()
	if found.ID == "" {
		return Ban{}, false
	}
	s.refusedIP.Add(1)
	return found, true
}

// Stats are the list's figures for metrics.
type Stats struct {
	Users, IPs             int    // bans in force
	RefusedUser, RefusedIP uint64 // lookups that found a ban, since start
}

// Stats counts the bans in force and the refusals so far.
func (s *Store) Stats() Stats {
	now := s.cfg.Now()
	st := Stats{RefusedUser: s.refusedUser.Load(), RefusedIP: s.refusedIP.Load()}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, b := range s.users {
		if b.Expires.After(now) {
			st.Users++
		}
	}
	for _, b := range s.ips {
		if b.Expires.After(now) {
			st.IPs++
		}
	}
	return st
}
