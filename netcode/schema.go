package netcode

import (
	"fmt"
	"math"
	"slices"
)

// Limits of a schema, as in the TypeScript Schema.define.
const (
	MaxFields          = 30
	MaxEntityID        = 0xffff
	DefaultMaxEntities = 256
	maxQuantized       = 1<<31 - 1
)

// Field describes one numeric field of every entity.
type Field struct {
	Name string
	// Precision is one step on the wire (default 1): values are rounded to it.
	Precision float64
	// Velocity names the field holding this one's rate of change per
	// second: deltas are then taken against where the baseline was heading.
	Velocity string
}

// Schema is a game's entity layout: the same fields, in the same order,
// as the host's Schema.define.
type Schema struct {
	fields      []Field
	scale       []float64
	velocity    []int
	moves       bool
	maxEntities int
}

// NewSchema checks and resolves fields; maxEntities 0 means
// DefaultMaxEntities.
func NewSchema(fields []Field, maxEntities int) (*Schema, error) {
	if len(fields) == 0 || len(fields) > MaxFields {
		return nil, fmt.Errorf("netcode: a schema has 1–%d fields, not %d", MaxFields, len(fields))
	}
	if maxEntities == 0 {
		maxEntities = DefaultMaxEntities
	}
	if maxEntities < 1 || maxEntities > MaxEntityID+1 {
		return nil, fmt.Errorf("netcode: maxEntities must be 1–%d, not %d", MaxEntityID+1, maxEntities)
	}
	s := &Schema{fields: slices.Clone(fields), maxEntities: maxEntities}
	for i, f := range s.fields {
		p := f.Precision
		if p == 0 {
			p = 1
		}
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("netcode: field %s: precision must be positive", f.Name)
		}
		s.scale = append(s.scale, 1/p)
		v := -1
		if f.Velocity != "" {
			v = slices.IndexFunc(s.fields, func(g Field) bool { return g.Name == f.Velocity })
			if v < 0 || v == i {
				return nil, fmt.Errorf("netcode: field %s: velocity names no other field (%s)", f.Name, f.Velocity)
			}
			s.moves = true
		}
		s.velocity = append(s.velocity, v)
	}
	return s, nil
}

// Size is the number of fields.
func (s *Schema) Size() int { return len(s.fields) }

// MaxEntities is the most entities one snapshot may hold.
func (s *Schema) MaxEntities() int { return s.maxEntities }

// Index is the position of the named field, or -1.
func (s *Schema) Index(name string) int {
	return slices.IndexFunc(s.fields, func(f Field) bool { return f.Name == name })
}

// toInt is the integer sent for field i: the TypeScript Schema.toInt,
// operation for operation, so both ends hold the same doubles.
func (s *Schema) toInt(i int, v float64) int64 {
	q := jsRound(v * s.scale[i])
	if math.IsNaN(q) || math.IsInf(q, 0) {
		return 0
	}
	return int64(max(-maxQuantized, min(maxQuantized, q)))
}

func (s *Schema) fromInt(i int, q int64) float64 { return float64(q) / s.scale[i] }

// Entity is one entity: its id and its fields' values, in schema order.
type Entity struct {
	ID     int
	Fields []float64
}

// World is a snapshot's entities, ids ascending.
type World []Entity

// Get returns the entity with this id.
func (w World) Get(id int) (Entity, bool) {
	i, ok := slices.BinarySearchFunc(w, id, func(e Entity, id int) int { return e.ID - id })
	if !ok {
		return Entity{}, false
	}
	return w[i], true
}
