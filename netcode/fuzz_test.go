package netcode

import (
	"errors"
	"slices"
	"testing"
)

// The decoders take bytes from another player's tab: whatever they are
// given, they must return an error wrapping ErrMalformed or a value within
// the limits, never panic, and never do work the bytes do not pay for.

func seedFuzz(f *testing.F, kind string) {
	v := loadVectors(f)
	switch kind {
	case "input":
		for _, in := range v.Inputs {
			f.Add(unhex(f, in.Hex))
		}
	case "event":
		for _, e := range v.Events {
			f.Add(unhex(f, e.Hex))
		}
	case "snapshot":
		for _, s := range v.Snapshots {
			for _, st := range s.Steps {
				f.Add(unhex(f, st.Hex))
			}
		}
	}
	for _, b := range v.Bad {
		if b.Kind == kind {
			f.Add(unhex(f, b.Hex))
		}
	}
}

func FuzzSnapshot(f *testing.F) {
	seedFuzz(f, "snapshot")
	v := loadVectors(f)
	arena, _ := v.schema(f, "arena")
	capped, _ := v.schema(f, "capped")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, schema := range []*Schema{arena, capped} {
			c, err := NewNetClient(Game{Schema: schema, InputSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = c.HandleEvent(EncodeEvent(Welcome{}))
			// Twice: the second decodes against the first as its baseline
			// when the packet names its own tick's predecessor.
			for range 2 {
				s, err := c.HandleSnapshot(data)
				if err != nil {
					if !errors.Is(err, ErrMalformed) {
						t.Fatalf("error %v does not wrap ErrMalformed", err)
					}
					continue
				}
				if s == nil {
					continue
				}
				if len(s.World) > schema.MaxEntities() {
					t.Fatalf("%d entities past the cap %d", len(s.World), schema.MaxEntities())
				}
				if !slices.IsSortedFunc(s.World, func(a, b Entity) int { return a.ID - b.ID }) {
					t.Fatal("entity ids do not ascend")
				}
				if s.Header.Tick > MaxTick {
					t.Fatalf("tick %d past MaxTick", s.Header.Tick)
				}
			}
		}
	})
}

func FuzzInputPacket(f *testing.F) {
	seedFuzz(f, "input")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeInputPacket(data, 1)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if len(p.Inputs) > MaxInputsPerPacket {
			t.Fatalf("%d inputs", len(p.Inputs))
		}
		// What decodes re-encodes to something that decodes the same.
		again, err := DecodeInputPacket(EncodeInputPacket(p), 1)
		if err != nil || again.FirstSeq != p.FirstSeq || again.AckTick != p.AckTick ||
			!slices.EqualFunc(again.Inputs, p.Inputs, slices.Equal) {
			t.Fatalf("round trip: %+v %v, want %+v", again, err, p)
		}
	})
}

func FuzzEvent(f *testing.F) {
	seedFuzz(f, "event")
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEvent(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if r, ok := e.(Roster); ok && len(r.Players) > MaxRoster {
			t.Fatalf("roster of %d", len(r.Players))
		}
		if _, err := DecodeEvent(EncodeEvent(e)); err != nil {
			t.Fatalf("re-encoded %T does not decode: %v", e, err)
		}
	})
}
