package netcode

import (
	"fmt"
	"math"
	"slices"
)

// The entity delta of docs/netcode.md "Snapshots":
//
//	count varint, then per changed entity, ids ascending:
//	  id gap varint | header varint (0 = removed, else 2·mask+1) | svarint(new − predicted) per set bit
//
// "predicted" is the baseline's value, or for a field with a velocity the
// baseline's value moved on by that velocity for dt seconds, rounded.

// predicted is field i of baseline entity b as the next value is coded
// against (b nil: no baseline).
func (s *Schema) predicted(b []float64, i int, dt float64) int64 {
	if b == nil {
		return 0
	}
	q := s.toInt(i, b[i])
	v := s.velocity[i]
	if v < 0 || dt == 0 {
		return q
	}
	return q + s.toInt(i, b[v]*dt)
}

// EncodeDelta appends the delta from base (nil: none) to next. Both must
// ascend by id and hold values already rounded to the schema.
func (s *Schema) EncodeDelta(dst []byte, base, next World, dt float64) []byte {
	type change struct {
		id      int
		removed bool
		mask    int64
		deltas  []int64
	}
	var changed []change
	i, j := 0, 0
	for i < len(base) || j < len(next) {
		switch {
		case j == len(next) || (i < len(base) && base[i].ID < next[j].ID):
			changed = append(changed, change{id: base[i].ID, removed: true})
			i++
			continue
		}
		n := next[j]
		var b []float64
		if i < len(base) && base[i].ID == n.ID {
			b = base[i].Fields
			i++
		}
		j++
		c := change{id: n.ID}
		for f := range s.fields {
			if d := s.toInt(f, n.Fields[f]) - s.predicted(b, f, dt); d != 0 {
				c.mask |= 1 << f
				c.deltas = append(c.deltas, d)
			}
		}
		// An unchanged entity costs nothing; a new all-zero one still needs its header.
		if c.mask != 0 || b == nil {
			changed = append(changed, c)
		}
	}
	w := writer{buf: dst}
	w.varint(int64(len(changed)))
	prev := -1
	for _, c := range changed {
		w.varint(int64(c.id - prev - 1))
		prev = c.id
		if c.removed {
			w.varint(0)
			continue
		}
		w.varint(2*c.mask + 1)
		for _, d := range c.deltas {
			w.svarint(d)
		}
	}
	return w.buf
}

func tooMany(limit int) error {
	return malformed(fmt.Sprintf("netcode: a snapshot of more than %d entities (the schema's maxEntities)", limit))
}

// decodeDelta applies the delta in r to base (nil: a full snapshot). The
// work is bounded as in the TypeScript decoder: a count the bytes cannot
// hold or past 2·MaxEntities is refused before any work, the result is
// capped at MaxEntities, and one ascending merge builds it.
func (s *Schema) decodeDelta(base World, r *reader, dt float64) (World, error) {
	limit := s.maxEntities
	count, err := r.varint()
	if err != nil {
		return nil, err
	}
	if count*2 > int64(r.remaining()) {
		return nil, malformed(fmt.Sprintf("netcode: a delta of %d entities in %d bytes", count, r.remaining()))
	}
	if count > 2*int64(limit) {
		return nil, tooMany(limit)
	}
	moving := base != nil && dt != 0 && s.moves
	out := make(World, 0, min(limit, len(base)+int(count)))
	put := func(e Entity) error {
		out = append(out, e)
		if len(out) > limit {
			return tooMany(limit)
		}
		return nil
	}
	next := 0 // the first baseline entity not yet carried over or replaced
	carryBelow := func(id int64) error {
		for ; next < len(base) && int64(base[next].ID) < id; next++ {
			b := base[next]
			if moving {
				b = s.movedOn(b, dt)
			}
			if err := put(b); err != nil {
				return err
			}
		}
		return nil
	}
	prev := int64(-1)
	for range count {
		gap, err := r.varint()
		if err != nil {
			return nil, err
		}
		id := prev + 1 + gap
		if id > MaxEntityID {
			return nil, malformed("netcode: entity id out of range")
		}
		prev = id
		if err := carryBelow(id); err != nil {
			return nil, err
		}
		var b []float64
		if next < len(base) && int64(base[next].ID) == id {
			b = base[next].Fields
			next++
		}
		header, err := r.varint()
		if err != nil {
			return nil, err
		}
		if header == 0 {
			continue // removed
		}
		if header%2 == 0 || (header-1)/2 >= 1<<len(s.fields) {
			return nil, malformed("netcode: bad field mask")
		}
		mask := (header - 1) / 2
		e := Entity{ID: int(id), Fields: make([]float64, len(s.fields))}
		for f := range s.fields {
			// Unchanged fields of a moving entity still move: the prediction was exact.
			q := s.predicted(b, f, dt)
			if mask&(1<<f) != 0 {
				d, err := r.svarint()
				if err != nil {
					return nil, err
				}
				q += d
			}
			e.Fields[f] = s.fromInt(f, q)
		}
		if err := put(e); err != nil {
			return nil, err
		}
	}
	if err := carryBelow(math.MaxInt64); err != nil {
		return nil, err
	}
	return out, nil
}

// movedOn is an entity the delta does not mention, moved exactly as predicted.
func (s *Schema) movedOn(b Entity, dt float64) Entity {
	e := Entity{ID: b.ID, Fields: make([]float64, len(b.Fields))}
	for f := range s.fields {
		e.Fields[f] = s.fromInt(f, s.predicted(b.Fields, f, dt))
	}
	if slices.Equal(e.Fields, b.Fields) {
		return b
	}
	return e
}

// Hash is FNV-1a over every entity's id and rounded field integers, ids
// ascending: the snapshot header's hash when the host sends one.
func (s *Schema) Hash(w World) uint32 {
	h := uint32(0x811c9dc5)
	mix := func(v int64) {
		u := uint32(v) //nolint:gosec // the 32-bit two's complement, as JavaScript's >>>
		for k := range 4 {
			h ^= (u >> (8 * k)) & 0xff
			h *= 0x01000193
		}
	}
	for _, e := range w {
		mix(int64(e.ID))
		for f := range s.fields {
			mix(s.toInt(f, e.Fields[f]))
		}
	}
	return h
}
