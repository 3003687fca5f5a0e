package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/netcode"
)

// The arena's game-specific half (web/games/arena/src/schema.ts and
// spectator.ts): its entity schema, its five buttons and its spectator
// keyframes. The generic wire format is package netcode.

// arenaMode is the arena's game mode, as the lobby app creates its rooms.
const arenaMode = "Arena"

const (
	arenaTickRate = 60
	arenaBallID   = 1000
)

// arenaButtons are the arena's buttons in its input codec's bit order.
var arenaButtons = []string{"up", "down", "left", "right", "kick"} //nolint:gochecknoglobals // a constant table

func arenaSchema() *netcode.Schema {
	s, err := netcode.NewSchema([]netcode.Field{
		{Name: "x", Precision: 1.0 / 16, Velocity: "vx"},
		{Name: "y", Precision: 1.0 / 16, Velocity: "vy"},
		{Name: "vx", Precision: 1.0 / 16},
		{Name: "vy", Precision: 1.0 / 16},
		{Name: "kind"}, {Name: "team"}, {Name: "scoreL"}, {Name: "scoreR"},
	}, 18)
	if err != nil {
		panic(err) // a constant schema: only a typo here reaches this
	}
	return s
}

// arenaInput is the one-byte input holding the named buttons.
func arenaInput(keys string) (byte, error) {
	var bits byte
	for k := range strings.SplitSeq(keys, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		i := -1
		for j, b := range arenaButtons {
			if b == k {
				i = j
			}
		}
		if i < 0 {
			return 0, fmt.Errorf("unknown arena key %q (keys: %s)", k, strings.Join(arenaButtons, ", "))
		}
		bits |= 1 << i
	}
	return bits, nil
}

// playArena plays the arena as a client of its host: hello until the host
// welcomes us, then one input packet a tick with the held keys, and every
// snapshot decoded. It returns when -expect snapshots have arrived (nil),
// the room ends, or ctx does.
func playArena(ctx context.Context, c config, room *client.Room, out *json.Encoder) error {
	input, err := arenaInput(c.arenaKeys)
	if err != nil {
		return err
	}
	nc, err := netcode.NewNetClient(netcode.Game{Schema: arenaSchema(), InputSize: 1, TickRate: arenaTickRate})
	if err != nil {
		return err
	}
	start := time.Now()
	tick := time.NewTicker(time.Second / arenaTickRate)
	defer tick.Stop()
	hello := time.NewTicker(time.Second)
	defer hello.Stop()
	var (
		open, started, synced bool
		snapshots, inputs     int
		lastPrint             time.Time
		last                  map[string]any // the newest snapshot, as printed
	)
	host := func() string { return room.Info().Host }
	sayHello := func() {
		if _, welcomed := nc.Slot(); open && started && !welcomed {
			_ = room.Send(host(), client.Events, nc.Hello())
		}
	}
	summary := func() {
		_ = out.Encode(map[string]any{"event": "summary", "game": arenaMode, "snapshots": snapshots, "inputs": inputs,
			"bad_packets": nc.BadPackets(), "acked": nc.AckSeq(), "seconds": time.Since(start).Seconds(), "last": last})
	}
	for {
		select {
		case <-ctx.Done():
			summary()
			if c.expect > 0 {
				return fmt.Errorf("%d of %d arena snapshots arrived before the deadline", snapshots, c.expect)
			}
			return nil
		case <-room.Done():
			summary()
			return fmt.Errorf("room ended: %w", room.Err())
		case e := <-room.Events():
			printEvent(out, room, e, start)
			switch e := e.(type) {
			case client.PeerOpen:
				open = e.ID == host()
				sayHello()
			case client.PeerClosed:
				if e.ID == host() {
					open = false
				}
			case client.GameStarted:
				started = true
				sayHello()
			}
		case m := <-room.Messages():
			if m.From != host() {
				continue
			}
			if m.Channel == client.Events {
				ev, err := nc.HandleEvent(m.Data)
				if w, ok := ev.(netcode.Welcome); ok && err == nil {
					_ = out.Encode(map[string]any{"event": "arena_welcome", "slot": w.Slot, "tick_rate": w.TickRate,
						"snapshot_rate": w.SnapshotRate})
				}
				continue
			}
			s, err := nc.HandleSnapshot(m.Data)
			if err != nil {
				_ = out.Encode(map[string]any{"event": "bad_packet", "error": err.Error()})
				continue
			}
			if s == nil {
				continue
			}
			snapshots++
			synced = true
			last = arenaSnapshotEvent(nc, s)
			if time.Since(lastPrint) >= time.Second || snapshots == 1 {
				lastPrint = time.Now()
				_ = out.Encode(last)
			}
			if c.expect > 0 && snapshots >= c.expect {
				summary()
				return nil
			}
		case <-hello.C:
			sayHello()
		case <-tick.C:
			if !synced || !open {
				continue
			}
			data, err := nc.Tick([]byte{input}, time.Since(start).Milliseconds())
			if err != nil {
				return err
			}
			if data != nil && room.Send(host(), client.Game, data) == nil {
				inputs++
			}
		}
	}
}

// arenaSnapshotEvent describes a snapshot: its tick, our player and the ball.
func arenaSnapshotEvent(nc *netcode.NetClient, s *netcode.Snapshot) map[string]any {
	ev := map[string]any{"event": "arena_snapshot", "tick": s.Header.Tick, "entities": len(s.World),
		"acked": s.Header.AckSeq}
	if slot, ok := nc.Slot(); ok {
		if me, ok := s.World.Get(int(slot)); ok {
			ev["me"] = map[string]float64{"x": me.Fields[0], "y": me.Fields[1]}
		}
	}
	if b, ok := s.World.Get(arenaBallID); ok {
		ev["ball"] = map[string]float64{"x": b.Fields[0], "y": b.Fields[1]}
	}
	if s.HashOK != nil {
		ev["hash_ok"] = *s.HashOK
	}
	return ev
}

// arenaKeyframe is one frame of the arena's spectator stream.
type arenaKeyframe struct {
	Tick     uint32
	Entities int
	Ball     *[2]float32
	Names    map[int]string
}

const (
	keyframeVersion  = 1
	keyframeFields   = 8
	keyframeEntitySz = 2 + 4*keyframeFields
)

var errKeyframe = errors.New("not an arena keyframe")

// decodeArenaKeyframe reads the arena's keyframe (spectator.ts
// encodeKeyframe): version u8, tick u32, entity count u16, per entity id
// u16 and 8 float32, then names (count u8; slot u8, length u8, UTF-8); big
// endian. Every count is checked against the bytes left before use.
func decodeArenaKeyframe(b []byte) (arenaKeyframe, error) {
	var k arenaKeyframe
	if len(b) < 7 || b[0] != keyframeVersion {
		return k, errKeyframe
	}
	k.Tick = binary.BigEndian.Uint32(b[1:])
	k.Entities = int(binary.BigEndian.Uint16(b[5:]))
	at := 7
	if len(b)-at < k.Entities*keyframeEntitySz {
		return k, fmt.Errorf("%w: %d entities in %d bytes", errKeyframe, k.Entities, len(b)-at)
	}
	for range k.Entities {
		id := binary.BigEndian.Uint16(b[at:])
		if id == arenaBallID {
			x := math.Float32frombits(binary.BigEndian.Uint32(b[at+2:]))
			y := math.Float32frombits(binary.BigEndian.Uint32(b[at+6:]))
			k.Ball = &[2]float32{x, y}
		}
		at += keyframeEntitySz
	}
	if at >= len(b) {
		return k, fmt.Errorf("%w: no name count", errKeyframe)
	}
	n := int(b[at])
	at++
	k.Names = make(map[int]string, n)
	for range n {
		if len(b)-at < 2 || len(b)-at-2 < int(b[at+1]) {
			return k, fmt.Errorf("%w: names truncated", errKeyframe)
		}
		slot, size := int(b[at]), int(b[at+1])
		k.Names[slot] = string(b[at+2 : at+2+size])
		at += 2 + size
	}
	return k, nil
}
