package netcode

import "fmt"

// Packet type bytes (the first byte of every netcode packet).
const (
	TypeInput    = 0x81
	TypeSnapshot = 0x82
	TypeWelcome  = 0x91
	TypeRoster   = 0x92
	TypeKicked   = 0x93
	TypeUser     = 0x94
	TypeHello    = 0x95
)

// Limits the decoders hold the other side to (the TypeScript ones).
const (
	// MaxInputsPerPacket: no honest client sends more (2 s at 60 Hz).
	MaxInputsPerPacket = 120
	// MaxTick is the largest snapshot tick a client accepts.
	MaxTick = 1 << 40
	// MaxStringBytes is the longest string an event carries.
	MaxStringBytes = 1024
	// MaxRoster is the most players a roster event lists.
	MaxRoster = 256
)

// InputPacket is a client's inputs from the oldest the host has not
// applied, each Size bytes (the game's input codec).
type InputPacket struct {
	PacketSeq  int // u16
	AckTick    int64
	SentAt     int // client ms mod 2^16
	ViewTick16 int64
	FirstSeq   int64
	Inputs     [][]byte
}

// EncodeInputPacket encodes p; equal consecutive inputs go once with a count.
func EncodeInputPacket(p InputPacket) []byte {
	w := writer{buf: make([]byte, 0, 16)}
	w.u8(TypeInput).u16(p.PacketSeq).varint(p.AckTick).u16(p.SentAt).varint(p.ViewTick16).varint(p.FirstSeq)
	type run struct {
		input []byte
		count int64
	}
	var runs []run
	for _, in := range p.Inputs {
		if n := len(runs); n > 0 && string(runs[n-1].input) == string(in) {
			runs[n-1].count++
		} else {
			runs = append(runs, run{in, 1})
		}
	}
	w.varint(int64(len(runs)))
	for _, r := range runs {
		w.varint(r.count)
		w.buf = append(w.buf, r.input...)
	}
	return w.buf
}

// DecodeInputPacket decodes an input packet whose inputs are size bytes
// each; at most MaxInputsPerPacket inputs.
func DecodeInputPacket(data []byte, size int) (InputPacket, error) {
	r := reader{buf: data}
	var p InputPacket
	t, err := r.u8()
	if err != nil {
		return p, err
	}
	if t != TypeInput {
		return p, malformed("netcode: not an input packet")
	}
	var runs int64
	err = firstErr(
		u16(&r, &p.PacketSeq), v(&r, &p.AckTick), u16(&r, &p.SentAt), v(&r, &p.ViewTick16), v(&r, &p.FirstSeq), v(&r, &runs))
	if err != nil {
		return p, err
	}
	for range runs {
		count, err := r.varint()
		if err != nil {
			return p, err
		}
		if count == 0 || int64(len(p.Inputs))+count > MaxInputsPerPacket {
			return p, malformed("netcode: bad input run")
		}
		in, err := r.bytes(size)
		if err != nil {
			return p, err
		}
		for range count {
			p.Inputs = append(p.Inputs, in)
		}
	}
	if p.FirstSeq < 1 && len(p.Inputs) > 0 {
		return p, malformed("netcode: input sequences start at 1")
	}
	return p, nil
}

// Echo is the client's sentAt from its newest input packet and how long
// the host held it.
type Echo struct {
	SentAt int
	HoldMs int64
}

// SnapshotHeader precedes a snapshot's entity delta.
type SnapshotHeader struct {
	PacketSeq   int
	Tick        int64
	BaseTick    int64 // 0: a full snapshot
	AckSeq      int64 // this client's last input the host applied
	StickyTotal int64
	Echo        *Echo
	InputSlack  int
	UpLoss255   int
	Hash        *uint32
}

const (
	flagEcho = 1
	flagHash = 2
)

// AppendSnapshotHeader appends h; the entity delta follows.
func AppendSnapshotHeader(dst []byte, h SnapshotHeader) []byte {
	w := writer{buf: dst}
	w.u8(TypeSnapshot).u16(h.PacketSeq).varint(h.Tick).varint(h.BaseTick).varint(h.AckSeq).varint(h.StickyTotal)
	flags := 0
	if h.Echo != nil {
		flags |= flagEcho
	}
	if h.Hash != nil {
		flags |= flagHash
	}
	w.u8(flags)
	if h.Echo != nil {
		w.u16(h.Echo.SentAt).varint(max(0, h.Echo.HoldMs))
	}
	w.u8(min(255, max(0, h.InputSlack))).u8(h.UpLoss255)
	if h.Hash != nil {
		w.u32(*h.Hash)
	}
	return w.buf
}

func readSnapshotHeader(r *reader) (SnapshotHeader, error) {
	var h SnapshotHeader
	t, err := r.u8()
	if err != nil {
		return h, err
	}
	if t != TypeSnapshot {
		return h, malformed("netcode: not a snapshot")
	}
	var flags int
	if err := firstErr(u16(r, &h.PacketSeq), v(r, &h.Tick), v(r, &h.BaseTick), v(r, &h.AckSeq), v(r, &h.StickyTotal), u8(r, &flags)); err != nil {
		return h, err
	}
	if flags&flagEcho != 0 {
		h.Echo = &Echo{}
		if err := firstErr(u16(r, &h.Echo.SentAt), v(r, &h.Echo.HoldMs)); err != nil {
			return h, err
		}
	}
	if err := firstErr(u8(r, &h.InputSlack), u8(r, &h.UpLoss255)); err != nil {
		return h, err
	}
	if flags&flagHash != 0 {
		x, err := r.u32()
		if err != nil {
			return h, err
		}
		h.Hash = &x
	}
	if h.BaseTick >= h.Tick && h.BaseTick != 0 {
		return h, malformed("netcode: baseline after snapshot")
	}
	// A tick whose 1/16ths the client cannot echo back would stop its inputs.
	if h.Tick > MaxTick {
		return h, malformed("netcode: tick out of range")
	}
	return h, nil
}

// Event is a netcode message on the reliable events channel: one of
// Welcome, Roster, Kicked, User, Hello.
type Event interface{ appendTo(w *writer) }

// Welcome: the host accepted this client and gave it a slot.
type Welcome struct{ Slot, TickRate, SnapshotRate int64 }

// Roster: the players in the game and their slots.
type Roster struct{ Players []RosterPlayer }

// RosterPlayer is one player of a Roster.
type RosterPlayer struct {
	Slot int64
	ID   string
}

// Kicked: the host removed this client from the game.
type Kicked struct{ Reason string }

// User is a game event, the game's own bytes.
type User struct{ Payload []byte }

// Hello asks the host for (another) Welcome: the client listens now.
type Hello struct{}

func (e Welcome) appendTo(w *writer) {
	w.u8(TypeWelcome).varint(e.Slot).varint(e.TickRate).varint(e.SnapshotRate)
}

func (e Roster) appendTo(w *writer) {
	w.u8(TypeRoster).varint(int64(len(e.Players)))
	for _, p := range e.Players {
		w.varint(p.Slot)
		writeString(w, p.ID)
	}
}

func (e Kicked) appendTo(w *writer) { w.u8(TypeKicked); writeString(w, e.Reason) }
func (e User) appendTo(w *writer)   { w.u8(TypeUser).buf = append(w.buf, e.Payload...) }
func (Hello) appendTo(w *writer)    { w.u8(TypeHello) }

// writeString writes s cut to MaxStringBytes at a character boundary.
func writeString(w *writer, s string) {
	b := []byte(s)
	if len(b) > MaxStringBytes {
		end := MaxStringBytes
		for end > 0 && b[end]&0xc0 == 0x80 {
			end--
		}
		b = b[:end]
	}
	w.varint(int64(len(b)))
	w.buf = append(w.buf, b...)
}

func readString(r *reader) (string, error) {
	n, err := r.varint()
	if err != nil {
		return "", err
	}
	if n > MaxStringBytes {
		return "", malformed("netcode: string too long")
	}
	b, err := r.bytes(int(n))
	return string(b), err
}

// EncodeEvent encodes an event for the events channel.
func EncodeEvent(e Event) []byte {
	w := writer{buf: make([]byte, 0, 16)}
	e.appendTo(&w)
	return w.buf
}

// DecodeEvent decodes an events-channel message.
func DecodeEvent(data []byte) (Event, error) {
	r := reader{buf: data}
	t, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch t {
	case TypeWelcome:
		var e Welcome
		if err := firstErr(v(&r, &e.Slot), v(&r, &e.TickRate), v(&r, &e.SnapshotRate)); err != nil {
			return nil, err
		}
		return e, nil
	case TypeRoster:
		n, err := r.varint()
		if err != nil {
			return nil, err
		}
		if n > MaxRoster {
			return nil, malformed("netcode: roster too long")
		}
		e := Roster{Players: make([]RosterPlayer, 0, n)}
		for range n {
			var p RosterPlayer
			if err := v(&r, &p.Slot)(); err != nil {
				return nil, err
			}
			if p.ID, err = readString(&r); err != nil {
				return nil, err
			}
			e.Players = append(e.Players, p)
		}
		return e, nil
	case TypeKicked:
		s, err := readString(&r)
		if err != nil {
			return nil, err
		}
		return Kicked{Reason: s}, nil
	case TypeUser:
		return User{Payload: append([]byte(nil), data[1:]...)}, nil
	case TypeHello:
		return Hello{}, nil
	}
	return nil, malformed("netcode: unknown event type")
}

// Small readers for firstErr: each reads one value when called.
func u8(r *reader, out *int) func() error {
	return func() (err error) { *out, err = r.u8(); return err }
}
func u16(r *reader, out *int) func() error {
	return func() (err error) { *out, err = r.u16(); return err }
}
func v(r *reader, out *int64) func() error {
	return func() (err error) { *out, err = r.varint(); return err }
}

// firstErr runs reads in order and stops at the first error.
func firstErr(reads ...func() error) error {
	for _, read := range reads {
		if err := read(); err != nil {
			return err
		}
	}
	return nil
}

// String names an event for logs.
func (e Welcome) String() string { return fmt.Sprintf("welcome(slot %d)", e.Slot) }
