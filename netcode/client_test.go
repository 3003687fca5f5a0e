package netcode

import (
	"testing"
)

func testClient(t *testing.T) (*NetClient, *Schema) {
	t.Helper()
	s, err := NewSchema([]Field{{Name: "x", Precision: 1.0 / 16, Velocity: "vx"}, {Name: "vx", Precision: 1.0 / 16}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewNetClient(Game{Schema: s, InputSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func snapshot(s *Schema, tick, base, ackSeq int64, baseWorld, w World) []byte {
	dt := 0.0
	if base != 0 {
		dt = float64(tick-base) / 60
	}
	return s.EncodeDelta(AppendSnapshotHeader(nil, SnapshotHeader{Tick: tick, BaseTick: base, AckSeq: ackSeq}), baseWorld, w, dt)
}

// TestTickRedundancyAndAcks: every packet repeats at least the last 100 ms
// (6 inputs at 60 Hz) and everything the host has not applied; a snapshot's
// ackSeq drops what it applied; 120 unacknowledged inputs stop the client.
func TestTickRedundancyAndAcks(t *testing.T) {
	c, s := testClient(t)
	if _, err := c.Tick([]byte{1, 2}, 0); err == nil {
		t.Fatal("a 2-byte input for a 1-byte game was taken")
	}
	var last InputPacket
	for i := range 10 {
		data, err := c.Tick([]byte{byte(i)}, int64(70000+i))
		if err != nil || data == nil {
			t.Fatal(err)
		}
		if last, err = DecodeInputPacket(data, 1); err != nil {
			t.Fatal(err)
		}
	}
	if last.FirstSeq != 1 || len(last.Inputs) != 10 || last.PacketSeq != 9 || last.SentAt != (70009&0xffff) {
		t.Fatalf("tenth packet %+v", last)
	}
	// Before the welcome a snapshot is not ours to read.
	w := World{{ID: 0, Fields: []float64{10, 0}}}
	if got, err := c.HandleSnapshot(snapshot(s, 2, 0, 8, nil, w)); got != nil || err != nil {
		t.Fatalf("snapshot before the welcome: %+v %v", got, err)
	}
	if _, err := c.HandleEvent(EncodeEvent(Welcome{Slot: 2, TickRate: 60, SnapshotRate: 30})); err != nil {
		t.Fatal(err)
	}
	if slot, ok := c.Slot(); !ok || slot != 2 {
		t.Fatalf("slot %d %v", slot, ok)
	}
	if _, err := c.HandleSnapshot(snapshot(s, 2, 0, 8, nil, w)); err != nil {
		t.Fatal(err)
	}
	data, _ := c.Tick([]byte{10}, 0)
	p, _ := DecodeInputPacket(data, 1)
	// Inputs 9..11 are unapplied (3), fewer than 6: the last 6 go, 6..11.
	if c.AckSeq() != 8 || p.FirstSeq != 6 || len(p.Inputs) != 6 || p.AckTick != 2 || p.ViewTick16 != 32 {
		t.Fatalf("after ack 8: ack %d, packet %+v", c.AckSeq(), p)
	}

	for range MaxInputsPerPacket - 3 {
		if data, _ = c.Tick([]byte{1}, 0); data == nil {
			t.Fatal("stopped before 120 unacknowledged inputs")
		}
	}
	// At the limit: one packet carries all 120, within the decoder's bound.
	if p, err := DecodeInputPacket(data, 1); err != nil || len(p.Inputs) != MaxInputsPerPacket || p.FirstSeq != 9 {
		t.Fatalf("packet at the limit: %d inputs from %d, %v", len(p.Inputs), p.FirstSeq, err)
	}
	if data, err := c.Tick([]byte{1}, 0); data != nil || err != nil {
		t.Fatalf("tick past 120 unacknowledged inputs: %x %v", data, err)
	}
}

// TestDeltaAgainstOwnBaseline: a delta against a snapshot the client holds
// moves unmentioned entities by their velocity, and a packet naming a
// baseline it does not hold is skipped.
func TestDeltaAgainstOwnBaseline(t *testing.T) {
	c, s := testClient(t)
	_, _ = c.HandleEvent(EncodeEvent(Welcome{}))
	full := World{{ID: 1, Fields: []float64{100, 60}}, {ID: 3, Fields: []float64{5, 0}}}
	if _, err := c.HandleSnapshot(snapshot(s, 10, 0, 0, nil, full)); err != nil {
		t.Fatal(err)
	}
	moved := World{{ID: 1, Fields: []float64{102, 60}}, {ID: 3, Fields: []float64{5, 0}}} // 60/s for 2 ticks
	data := snapshot(s, 12, 10, 0, full, moved)
	got, err := c.HandleSnapshot(data)
	if err != nil || got == nil || len(got.World) != 2 || got.World[0].Fields[0] != 102 {
		t.Fatalf("delta: %+v %v", got, err)
	}
	if len(data) > 12 { // header + a count of 0: nothing moved otherwise than predicted
		t.Fatalf("a steady delta took %d bytes", len(data))
	}
	if got, err := c.HandleSnapshot(snapshot(s, 20, 19, 0, nil, moved)); got != nil || err != nil {
		t.Fatalf("snapshot against a baseline never held: %+v %v", got, err)
	}
}
