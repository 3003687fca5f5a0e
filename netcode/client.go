package netcode

import (
	"errors"
	"fmt"
)

// Baselines is how many decoded snapshots a client keeps: the host encodes
// against the newest it has heard we hold, which may be a little old.
const Baselines = 64

// RedundancyMs is the input history every packet carries at least, so a
// lost packet costs nothing.
const RedundancyMs = 100

// Game is what the client must know of a game: its entity schema, the
// size of one input (the game's input codec) and its tick rate.
type Game struct {
	Schema    *Schema
	InputSize int
	TickRate  int // default 60
}

// Snapshot is one decoded snapshot.
type Snapshot struct {
	Header SnapshotHeader
	World  World
	// HashOK reports whether our reconstruction hashes as the host's did
	// (nil when the host sent no hash).
	HashOK *bool
}

// NetClient is the client side of the netcode's wire protocol, without a
// clock or a transport of its own: the caller calls Tick once per game
// tick and sends what it returns on the game channel, and hands it every
// packet from the host. It is not safe for concurrent use.
type NetClient struct {
	game      Game
	baselines map[int64]World
	order     []int64 // baseline ticks, oldest first

	slot        int64
	welcomed    bool
	snapRate    int64
	roster      []RosterPlayer
	nextSeq     int64
	pending     [][]byte // inputs after ackSeq, oldest first
	firstSeq    int64    // sequence of pending[0]
	recent      [][]byte // the newest inputs, for redundancy
	ackSeq      int64
	newestTick  int64
	packetSeq   int
	stickyTotal int64
	bad         uint64
}

// NewNetClient makes a client for game.
func NewNetClient(game Game) (*NetClient, error) {
	if game.Schema == nil || game.InputSize < 1 {
		return nil, errors.New("netcode: a game needs a schema and an input size")
	}
	if game.TickRate == 0 {
		game.TickRate = 60
	}
	return &NetClient{game: game, baselines: map[int64]World{}, nextSeq: 1, firstSeq: 1}, nil
}

// Hello is the events-channel message that asks the host for our Welcome:
// send it when the channels open and when the game starts, as a tab does.
func (c *NetClient) Hello() []byte { return EncodeEvent(Hello{}) }

// Slot is the slot the host gave us; ok is false before its Welcome.
func (c *NetClient) Slot() (slot int64, ok bool) { return c.slot, c.welcomed }

// Roster is the players the host last listed.
func (c *NetClient) Roster() []RosterPlayer { return c.roster }

// NewestTick is the newest snapshot tick applied (0: none yet).
func (c *NetClient) NewestTick() int64 { return c.newestTick }

// AckSeq is the newest of our inputs the host says it applied.
func (c *NetClient) AckSeq() int64 { return c.ackSeq }

// BadPackets counts snapshots dropped as malformed or past a limit.
func (c *NetClient) BadPackets() uint64 { return c.bad }

// HandleEvent applies an events-channel message from the host and
// returns it for the game (User payloads are the game's).
func (c *NetClient) HandleEvent(data []byte) (Event, error) {
	e, err := DecodeEvent(data)
	if err != nil {
		return nil, err
	}
	switch e := e.(type) {
	case Welcome:
		if !c.welcomed { // a repeat, after our hello crossed it, changes nothing
			c.slot, c.snapRate, c.welcomed = e.Slot, e.SnapshotRate, true
		}
	case Roster:
		c.roster = e.Players
	}
	return e, nil
}

// HandleSnapshot decodes a game-channel packet from the host. It returns
// nil and no error for a packet that is no snapshot, one already held, one
// whose baseline is gone, or one before our Welcome; an error (wrapping
// ErrMalformed) for a malformed one, which is counted and dropped.
func (c *NetClient) HandleSnapshot(data []byte) (*Snapshot, error) {
	if len(data) == 0 || data[0] != TypeSnapshot || !c.welcomed {
		return nil, nil
	}
	s, err := c.decode(data)
	if err != nil {
		c.bad++
		return nil, err
	}
	if s == nil {
		return nil, nil
	}
	if s.Header.Tick > c.newestTick {
		c.newestTick = s.Header.Tick
		c.stickyTotal = s.Header.StickyTotal
		if s.Header.AckSeq > c.ackSeq {
			c.ack(s.Header.AckSeq)
		}
	}
	return s, nil
}

// decode rebuilds a snapshot from its delta against a baseline we hold.
func (c *NetClient) decode(data []byte) (*Snapshot, error) {
	r := reader{buf: data}
	h, err := readSnapshotHeader(&r)
	if err != nil {
		return nil, err
	}
	if _, ok := c.baselines[h.Tick]; ok {
		return nil, nil
	}
	var base World
	dt := 0.0
	if h.BaseTick != 0 {
		b, ok := c.baselines[h.BaseTick]
		if !ok {
			return nil, nil
		}
		base = b
		if base == nil {
			base = World{} // an empty baseline is still a baseline
		}
		dt = float64(h.Tick-h.BaseTick) / float64(c.game.TickRate)
	}
	w, err := c.game.Schema.decodeDelta(base, &r, dt)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Header: h, World: w}
	if h.Hash != nil {
		ok := c.game.Schema.Hash(w) == *h.Hash
		s.HashOK = &ok
	}
	c.baselines[h.Tick] = w
	c.order = append(c.order, h.Tick)
	for len(c.order) > Baselines {
		delete(c.baselines, c.order[0])
		c.order = c.order[1:]
	}
	return s, nil
}

func (c *NetClient) ack(seq int64) {
	c.ackSeq = seq
	drop := min(max(0, int(seq-c.firstSeq+1)), len(c.pending))
	c.pending = c.pending[drop:]
	c.firstSeq += int64(drop)
}

// Tick takes this tick's input and returns the input packet to send on the
// game channel: every input the host has not applied, and at least the
// last RedundancyMs of them. nowMs is the client's clock in ms (echoed for
// the RTT). It returns nil once MaxInputsPerPacket inputs wait unacknowledged:
// the host has stopped applying them, and running ahead of it gains nothing.
func (c *NetClient) Tick(input []byte, nowMs int64) ([]byte, error) {
	if len(input) != c.game.InputSize {
		return nil, fmt.Errorf("netcode: an input is %d bytes, not %d", c.game.InputSize, len(input))
	}
	if len(c.pending) >= MaxInputsPerPacket {
		return nil, nil
	}
	in := append([]byte(nil), input...)
	c.pending = append(c.pending, in)
	c.recent = append(c.recent, in)
	if len(c.recent) > 16 {
		c.recent = c.recent[1:]
	}
	c.nextSeq++
	atLeast := (RedundancyMs*c.game.TickRate + 999) / 1000
	list, first := c.pending, c.firstSeq
	if len(list) < atLeast {
		n := min(atLeast, len(c.recent))
		list, first = c.recent[len(c.recent)-n:], c.nextSeq-int64(n)
	}
	list = list[:min(len(list), MaxInputsPerPacket)]
	p := EncodeInputPacket(InputPacket{
		PacketSeq:  c.packetSeq,
		AckTick:    c.newestTick,
		SentAt:     int(nowMs & 0xffff),
		ViewTick16: c.newestTick * 16,
		FirstSeq:   first,
		Inputs:     list,
	})
	c.packetSeq = (c.packetSeq + 1) & 0xffff
	return p, nil
}
