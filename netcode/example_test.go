package netcode_test

import (
	"fmt"

	"github.com/hostrelay/hostrelay/netcode"
)

// A client of a game with one moving field: the host's Welcome gives it a
// slot, a snapshot arrives, and each tick's input goes out in a packet.
func ExampleNetClient() {
	schema, err := netcode.NewSchema([]netcode.Field{
		{Name: "x", Precision: 1.0 / 16, Velocity: "vx"},
		{Name: "vx", Precision: 1.0 / 16},
	}, 16)
	if err != nil {
		panic(err)
	}
	nc, err := netcode.NewNetClient(netcode.Game{Schema: schema, InputSize: 1, TickRate: 60})
	if err != nil {
		panic(err)
	}
	// From the host, on the events channel: our slot.
	if _, err := nc.HandleEvent(netcode.EncodeEvent(netcode.Welcome{Slot: 1, TickRate: 60, SnapshotRate: 30})); err != nil {
		panic(err)
	}
	// From the host, on the game channel: a full snapshot (as a host writes one).
	world := netcode.World{{ID: 1, Fields: []float64{100.5, 30}}}
	packet := schema.EncodeDelta(netcode.AppendSnapshotHeader(nil, netcode.SnapshotHeader{Tick: 2}), nil, world, 0)
	snap, err := nc.HandleSnapshot(packet)
	if err != nil {
		panic(err)
	}
	me, _ := snap.World.Get(1)
	fmt.Println("tick", snap.Header.Tick, "x", me.Fields[0])
	// To the host, on the game channel: this tick's input (bit 3: "right").
	input, err := nc.Tick([]byte{1 << 3}, 0)
	if err != nil {
		panic(err)
	}
	p, _ := netcode.DecodeInputPacket(input, 1)
	fmt.Println("inputs from", p.FirstSeq, "acking tick", p.AckTick)
	// Output:
	// tick 2 x 100.5
	// inputs from 1 acking tick 2
}
