package netcode

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// testdata/vectors.json is written from the TypeScript netcode by
// testdata/generate.ts; web/packages/netcode/src/wire/go-vectors.test.ts
// fails when the TypeScript side stops producing it. These tests fail when
// the Go side stops reading or writing the same bytes.

type vectors struct {
	Schemas map[string]struct {
		Fields []struct {
			Name      string  `json:"name"`
			Precision float64 `json:"precision"`
			Velocity  string  `json:"velocity"`
		} `json:"fields"`
		MaxEntities int `json:"maxEntities"`
		TickRate    int `json:"tickRate"`
	} `json:"schemas"`
	Inputs []struct {
		Name   string `json:"name"`
		Size   int    `json:"size"`
		Packet struct {
			PacketSeq  int      `json:"packetSeq"`
			AckTick    int64    `json:"ackTick"`
			SentAt     int      `json:"sentAt"`
			ViewTick16 int64    `json:"viewTick16"`
			FirstSeq   int64    `json:"firstSeq"`
			Inputs     []string `json:"inputs"`
		} `json:"packet"`
		Hex string `json:"hex"`
	} `json:"inputs"`
	Snapshots []struct {
		Name   string `json:"name"`
		Schema string `json:"schema"`
		Steps  []struct {
			Hex    string `json:"hex"`
			Skip   bool   `json:"skip"`
			Error  string `json:"error"`
			Header *struct {
				PacketSeq   int     `json:"packetSeq"`
				Tick        int64   `json:"tick"`
				BaseTick    int64   `json:"baseTick"`
				AckSeq      int64   `json:"ackSeq"`
				StickyTotal int64   `json:"stickyTotal"`
				Echo        *Echo   `json:"echo"`
				InputSlack  int     `json:"inputSlack"`
				UpLoss255   int     `json:"upLoss255"`
				Hash        *uint32 `json:"hash"`
			} `json:"header"`
			Entities [][2]json.RawMessage `json:"entities"`
			HashOK   *bool                `json:"hashOk"`
		} `json:"steps"`
	} `json:"snapshots"`
	Events []struct {
		Name  string          `json:"name"`
		Hex   string          `json:"hex"`
		Event json.RawMessage `json:"event"`
	} `json:"events"`
	Bad []struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Schema string `json:"schema"`
		Hex    string `json:"hex"`
		Error  string `json:"error"`
	} `json:"bad"`
}

func (e *Echo) UnmarshalJSON(b []byte) error {
	var v struct {
		SentAt int   `json:"sentAt"`
		HoldMs int64 `json:"holdMs"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Echo{SentAt: v.SentAt, HoldMs: v.HoldMs}
	return nil
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Inputs) == 0 || len(v.Snapshots) == 0 || len(v.Events) == 0 || len(v.Bad) == 0 {
		t.Fatal("vectors.json is missing a section")
	}
	return v
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (v vectors) schema(t testing.TB, name string) (*Schema, int) {
	t.Helper()
	spec, ok := v.Schemas[name]
	if !ok {
		t.Fatalf("no schema %q", name)
	}
	var fields []Field
	for _, f := range spec.Fields {
		fields = append(fields, Field{Name: f.Name, Precision: f.Precision, Velocity: f.Velocity})
	}
	s, err := NewSchema(fields, spec.MaxEntities)
	if err != nil {
		t.Fatal(err)
	}
	return s, spec.TickRate
}

func TestInputVectors(t *testing.T) {
	for _, vec := range loadVectors(t).Inputs {
		p := vec.Packet
		want := InputPacket{PacketSeq: p.PacketSeq, AckTick: p.AckTick, SentAt: p.SentAt, ViewTick16: p.ViewTick16, FirstSeq: p.FirstSeq}
		for _, in := range p.Inputs {
			want.Inputs = append(want.Inputs, unhex(t, in))
		}
		if got := hex.EncodeToString(EncodeInputPacket(want)); got != vec.Hex {
			t.Errorf("%s: encoded %s, TypeScript %s", vec.Name, got, vec.Hex)
		}
		got, err := DecodeInputPacket(unhex(t, vec.Hex), vec.Size)
		if err != nil {
			t.Fatalf("%s: %v", vec.Name, err)
		}
		if got.PacketSeq != want.PacketSeq || got.AckTick != want.AckTick || got.SentAt != want.SentAt ||
			got.ViewTick16 != want.ViewTick16 || got.FirstSeq != want.FirstSeq ||
			!slices.EqualFunc(got.Inputs, want.Inputs, slices.Equal) {
			t.Errorf("%s: decoded %+v, want %+v", vec.Name, got, want)
		}
	}
}

// TestSnapshotVectors feeds each sequence to a NetClient, as a host's
// packets would arrive, and re-encodes every decoded snapshot from its
// baseline: the Go encoder must write the TypeScript host's bytes.
func TestSnapshotVectors(t *testing.T) {
	v := loadVectors(t)
	for _, seq := range v.Snapshots {
		schema, tickRate := v.schema(t, seq.Schema)
		c, err := NewNetClient(Game{Schema: schema, InputSize: 1, TickRate: tickRate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.HandleEvent(EncodeEvent(Welcome{Slot: 0, TickRate: int64(tickRate), SnapshotRate: 30})); err != nil {
			t.Fatal(err)
		}
		worlds := map[int64]World{}
		for i, step := range seq.Steps {
			data := unhex(t, step.Hex)
			s, err := c.HandleSnapshot(data)
			switch {
			case step.Error != "":
				if err == nil || err.Error() != step.Error || !errors.Is(err, ErrMalformed) {
					t.Errorf("%s step %d: error %v, want %q", seq.Name, i, err, step.Error)
				}
				continue
			case step.Skip:
				if s != nil || err != nil {
					t.Errorf("%s step %d: %+v %v, want it skipped", seq.Name, i, s, err)
				}
				continue
			case err != nil || s == nil:
				t.Fatalf("%s step %d: %v", seq.Name, i, err)
			}
			h := step.Header
			want := SnapshotHeader{PacketSeq: h.PacketSeq, Tick: h.Tick, BaseTick: h.BaseTick, AckSeq: h.AckSeq,
				StickyTotal: h.StickyTotal, Echo: h.Echo, InputSlack: h.InputSlack, UpLoss255: h.UpLoss255, Hash: h.Hash}
			if !sameHeader(s.Header, want) {
				t.Errorf("%s step %d: header %+v, want %+v", seq.Name, i, s.Header, want)
			}
			var entities World
			for _, e := range step.Entities {
				var ent Entity
				if err := json.Unmarshal(e[0], &ent.ID); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(e[1], &ent.Fields); err != nil {
					t.Fatal(err)
				}
				entities = append(entities, ent)
			}
			if !slices.EqualFunc(s.World, entities, func(a, b Entity) bool { return a.ID == b.ID && slices.Equal(a.Fields, b.Fields) }) {
				t.Errorf("%s step %d: entities\n%v\nwant\n%v", seq.Name, i, s.World, entities)
			}
			if (s.HashOK == nil) != (step.HashOK == nil) || (s.HashOK != nil && *s.HashOK != *step.HashOK) {
				t.Errorf("%s step %d: hash ok %v, want %v", seq.Name, i, s.HashOK, step.HashOK)
			}
			worlds[h.Tick] = s.World
			dt := 0.0
			if h.BaseTick != 0 {
				dt = float64(h.Tick-h.BaseTick) / float64(tickRate)
			}
			again := schema.EncodeDelta(AppendSnapshotHeader(nil, want), worlds[h.BaseTick], s.World, dt)
			if got := hex.EncodeToString(again); got != step.Hex {
				t.Errorf("%s step %d: re-encoded\n%s\nTypeScript\n%s", seq.Name, i, got, step.Hex)
			}
		}
	}
}

func sameHeader(a, b SnapshotHeader) bool {
	eqEcho := (a.Echo == nil) == (b.Echo == nil) && (a.Echo == nil || *a.Echo == *b.Echo)
	eqHash := (a.Hash == nil) == (b.Hash == nil) && (a.Hash == nil || *a.Hash == *b.Hash)
	a.Echo, b.Echo, a.Hash, b.Hash = nil, nil, nil, nil
	return eqEcho && eqHash && a == b
}

func TestEventVectors(t *testing.T) {
	for _, vec := range loadVectors(t).Events {
		data := unhex(t, vec.Hex)
		e, err := DecodeEvent(data)
		if err != nil {
			t.Fatalf("%s: %v", vec.Name, err)
		}
		var got any
		switch e := e.(type) {
		case Welcome:
			got = map[string]any{"type": "welcome", "slot": e.Slot, "tickRate": e.TickRate, "snapshotRate": e.SnapshotRate}
		case Roster:
			players := []any{}
			for _, p := range e.Players {
				players = append(players, map[string]any{"slot": p.Slot, "id": p.ID})
			}
			got = map[string]any{"type": "roster", "players": players}
		case Kicked:
			got = map[string]any{"type": "kicked", "reason": e.Reason}
		case User:
			got = map[string]any{"type": "user", "payload": hex.EncodeToString(e.Payload)}
		case Hello:
			got = map[string]any{"type": "hello"}
		}
		var want any
		if err := json.Unmarshal(vec.Event, &want); err != nil {
			t.Fatal(err)
		}
		gotJSON, _ := json.Marshal(got)
		var gotBack any
		_ = json.Unmarshal(gotJSON, &gotBack)
		if !jsonEqual(gotBack, want) {
			t.Errorf("%s: decoded %s, want %s", vec.Name, gotJSON, vec.Event)
		}
		// The decoded event re-encodes to the same bytes (kicked: already cut).
		if again := hex.EncodeToString(EncodeEvent(e)); again != vec.Hex {
			t.Errorf("%s: re-encoded %s, want %s", vec.Name, again, vec.Hex)
		}
	}
	// Encoding cuts a long string at a character boundary, as TypeScript does.
	long := Kicked{Reason: string(slices.Repeat([]rune{'é'}, 600))}
	for _, vec := range loadVectors(t).Events {
		if vec.Name == "kicked with a long reason, cut at a character" {
			if got := hex.EncodeToString(EncodeEvent(long)); got != vec.Hex {
				t.Errorf("long kick reason: %s, want %s", got, vec.Hex)
			}
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestBadVectors: every refusal of the TypeScript decoders is a refusal
// here, with the same message.
func TestBadVectors(t *testing.T) {
	v := loadVectors(t)
	for _, vec := range v.Bad {
		data := unhex(t, vec.Hex)
		var err error
		switch vec.Kind {
		case "input":
			_, err = DecodeInputPacket(data, 1)
		case "event":
			_, err = DecodeEvent(data)
		case "snapshot":
			schema, tickRate := v.schema(t, vec.Schema)
			c, _ := NewNetClient(Game{Schema: schema, InputSize: 1, TickRate: tickRate})
			_, _ = c.HandleEvent(EncodeEvent(Welcome{}))
			if len(data) == 0 || data[0] != TypeSnapshot {
				// NetClient ignores what is no snapshot; the decoder refuses it.
				_, err = c.decode(data)
			} else {
				_, err = c.HandleSnapshot(data)
				if c.BadPackets() != 1 {
					t.Errorf("%s: %d bad packets counted", vec.Name, c.BadPackets())
				}
			}
		}
		if err == nil || err.Error() != vec.Error || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s %s: error %v, want %q", vec.Kind, vec.Name, err, vec.Error)
		}
	}
}
