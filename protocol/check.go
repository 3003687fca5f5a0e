package protocol

import (
	"encoding/binary"
	"fmt"
)

// Check reports whether b holds exactly one well-formed MessagePack value
// whose declared lengths all fit in the bytes present and whose containers nest
// at most maxDepth deep. It allocates nothing.
//
// It exists because msgpack/v5 trusts declared lengths: `dd ff ff ff ff` (an
// array header claiming 2^32 elements) makes it allocate gigabytes and the
// process dies of OOM before recover can help. Every array or map element takes
// at least one byte, so after Check no declared count exceeds len(b) and a
// decode of b is bounded by its size. Extension types are refused: the protocol
// uses none, and they are the other way a decoder can be made to build
// arbitrary values.
func Check(b []byte, maxDepth int) error {
	n, err := checkValue(b, 0, maxDepth)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-n)
	}
	return nil
}

// checkValue validates the value starting at b[off] and returns the offset
// just past it.
func checkValue(b []byte, off, depthLeft int) (int, error) {
	if off >= len(b) {
		return 0, fmt.Errorf("%w: truncated at byte %d", ErrMalformed, off)
	}
	c := b[off]
	off++
	switch {
	case c <= 0x7f || c >= 0xe0: // fixint
		return off, nil
	case c <= 0x8f: // fixmap
		return checkContainer(b, off, int(c&0x0f), 2, depthLeft)
	case c <= 0x9f: // fixarray
		return checkContainer(b, off, int(c&0x0f), 1, depthLeft)
	case c <= 0xbf: // fixstr
		return skip(b, off, int(c&0x1f))
	}
	switch c {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return off, nil
	case 0xcc, 0xd0:
		return skip(b, off, 1)
	case 0xcd, 0xd1:
		return skip(b, off, 2)
	case 0xca, 0xce, 0xd2:
		return skip(b, off, 4)
	case 0xcb, 0xcf, 0xd3:
		return skip(b, off, 8)
	case 0xc4, 0xd9: // bin8, str8
		n, off, err := readLen(b, off, 1)
		if err != nil {
			return 0, err
		}
		return skip(b, off, n)
	case 0xc5, 0xda: // bin16, str16
		n, off, err := readLen(b, off, 2)
		if err != nil {
			return 0, err
		}
		return skip(b, off, n)
	case 0xc6, 0xdb: // bin32, str32
		n, off, err := readLen(b, off, 4)
		if err != nil {
			return 0, err
		}
		return skip(b, off, n)
	case 0xdc, 0xde: // array16, map16
		n, off, err := readLen(b, off, 2)
		if err != nil {
			return 0, err
		}
		return checkContainer(b, off, n, perElement(c), depthLeft)
	case 0xdd, 0xdf: // array32, map32
		n, off, err := readLen(b, off, 4)
		if err != nil {
			return 0, err
		}
		return checkContainer(b, off, n, perElement(c), depthLeft)
	case 0xc1:
		return 0, fmt.Errorf("%w: reserved byte 0xc1 at %d", ErrMalformed, off-1)
	default: // 0xc7-0xc9, 0xd4-0xd8: extensions
		return 0, fmt.Errorf("%w: extension type 0x%02x at %d not allowed", ErrMalformed, c, off-1)
	}
}

func perElement(c byte) int {
	if c == 0xde || c == 0xdf {
		return 2
	}
	return 1
}

func checkContainer(b []byte, off, n, per, depthLeft int) (int, error) {
	if depthLeft <= 0 {
		return 0, ErrTooDeep
	}
	// Each element is at least one byte: refuse counts the bytes cannot hold
	// before looking at any element. n*per cannot overflow: n < 2^32.
	if n*per > len(b)-off {
		return 0, fmt.Errorf("%w: container of %d elements in %d bytes", ErrMalformed, n, len(b)-off)
	}
	var err error
	for i := 0; i < n*per; i++ {
		if off, err = checkValue(b, off, depthLeft-1); err != nil {
			return 0, err
		}
	}
	return off, nil
}

func readLen(b []byte, off, size int) (int, int, error) {
	if len(b)-off < size {
		return 0, 0, fmt.Errorf("%w: truncated length at byte %d", ErrMalformed, off)
	}
	switch size {
	case 1:
		return int(b[off]), off + 1, nil
	case 2:
		return int(binary.BigEndian.Uint16(b[off:])), off + 2, nil
	default:
		return int(binary.BigEndian.Uint32(b[off:])), off + 4, nil
	}
}

func skip(b []byte, off, n int) (int, error) {
	if n > len(b)-off {
		return 0, fmt.Errorf("%w: %d bytes declared, %d present", ErrMalformed, n, len(b)-off)
	}
	return off + n, nil
}
