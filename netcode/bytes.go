package netcode

import (
	"encoding/binary"
	"math"
)

// maxSafe is JavaScript's Number.MAX_SAFE_INTEGER: the largest varint the
// TypeScript side writes or reads.
const maxSafe = 1<<53 - 1

// writer appends little-endian integers and LEB128 varints. Like the
// TypeScript writer, u8 and u16 keep the low bits of what they are given:
// the truncations below are the wire format.
type writer struct{ buf []byte }

func (w *writer) u8(v int) *writer {
	w.buf = append(w.buf, byte(v)) //nolint:gosec // the low byte, as TypeScript's v & 0xff
	return w
}

func (w *writer) u16(v int) *writer {
	w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(v)) //nolint:gosec // the low 16 bits, as TypeScript's
	return w
}

func (w *writer) u32(v uint32) *writer {
	w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
	return w
}

// varint writes v, which must be in 0..2^53-1 (callers keep it there).
func (w *writer) varint(v int64) *writer {
	for v >= 0x80 {
		w.buf = append(w.buf, byte(v&0x7f|0x80)) //nolint:gosec // seven bits and the continuation bit
		v >>= 7
	}
	w.buf = append(w.buf, byte(v)) //nolint:gosec // under 0x80 here
	return w
}

// svarint writes v zigzag-mapped, as the TypeScript writer does.
func (w *writer) svarint(v int64) *writer {
	if v < 0 {
		return w.varint(-2*v - 1)
	}
	return w.varint(2 * v)
}

// reader reads what writer writes, refusing to read past its bytes.
type reader struct {
	buf []byte
	pos int
}

func (r *reader) remaining() int { return len(r.buf) - r.pos }

func (r *reader) u8() (int, error) {
	if r.pos+1 > len(r.buf) {
		return 0, truncated()
	}
	r.pos++
	return int(r.buf[r.pos-1]), nil
}

func (r *reader) u16() (int, error) {
	if r.pos+2 > len(r.buf) {
		return 0, truncated()
	}
	v := int(r.buf[r.pos]) | int(r.buf[r.pos+1])<<8
	r.pos += 2
	return v, nil
}

func (r *reader) u32() (uint32, error) {
	if r.pos+4 > len(r.buf) {
		return 0, truncated()
	}
	b := r.buf[r.pos:]
	r.pos += 4
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, nil
}

// varint reads at most 8 bytes and refuses values past 2^53-1, as the
// TypeScript reader does (it cannot hold them exactly).
func (r *reader) varint() (int64, error) {
	var v int64
	for i := range 8 {
		b, err := r.u8()
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << (7 * i)
		if b < 0x80 {
			if v > maxSafe {
				return 0, malformed("netcode: varint out of range")
			}
			return v, nil
		}
	}
	return 0, malformed("netcode: varint longer than 8 bytes")
}

func (r *reader) svarint() (int64, error) {
	z, err := r.varint()
	if err != nil {
		return 0, err
	}
	if z%2 == 0 {
		return z / 2, nil
	}
	return -(z + 1) / 2, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || r.pos+n > len(r.buf) {
		return nil, truncated()
	}
	out := r.buf[r.pos : r.pos+n]
	r.pos += n
	return out, nil
}

// jsRound is JavaScript's Math.round: to the nearest integer, halves up.
// math.Floor(x+0.5) is not it: 0.49999999999999994+0.5 rounds to 1.
func jsRound(x float64) float64 {
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return f
}
