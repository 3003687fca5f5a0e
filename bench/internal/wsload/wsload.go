// Package wsload drives lobby WebSockets for the benchmarks: idle sessions
// for memory, and room chat for fan-out, against hostrelay's lobby ("ours")
// or the bare coder/websocket harness (bench/cmd/wsbare).
package wsload

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/protocol"
)

// Kind names the server under test.
type Kind string

// The servers the lobby benchmarks compare.
const (
	Ours Kind = "ours" // hostrelay's lobby protocol
	Bare Kind = "bare" // bench/cmd/wsbare
)

// member is one client connection, whichever the server.
type member struct {
	ours *loadgen.LobbySession
	bare *websocket.Conn
}

func (m *member) close() {
	if m.ours != nil {
		m.ours.Close()
	}
	if m.bare != nil {
		_ = m.bare.CloseNow()
	}
}

// Group is a set of open sessions.
type Group struct {
	members []*member
	onClose []func()
}

// Len is the number of open sessions.
func (g *Group) Len() int { return len(g.members) }

// Close closes every session.
func (g *Group) Close() {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, m := range g.members {
		wg.Add(1)
		sem <- struct{}{}
		go func() { defer wg.Done(); m.close(); <-sem }()
	}
	wg.Wait()
	for _, f := range g.onClose {
		f()
	}
	g.members = nil
}

// dialAll opens n connections with up to 64 handshakes in flight.
func dialAll(ctx context.Context, n int, dial func(i int) (*member, error)) (*Group, error) {
	g := &Group{members: make([]*member, n)}
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	sem := make(chan struct{}, 64)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m, err := dial(i)
			if err != nil {
				once.Do(func() { firstErr = err })

				return
			}
			g.members[i] = m
		}()
		if ctx.Err() != nil {
			break
		}
	}
	wg.Wait()
	live := g.members[:0]
	for _, m := range g.members {
		if m != nil {
			live = append(live, m)
		}
	}
	g.members = live
	if firstErr != nil {
		g.Close()

		return nil, firstErr
	}

	return g, nil
}

// Idle opens n sessions that say hello (ours) or join a lobby room (bare)
// and then do nothing.
func Idle(ctx context.Context, kind Kind, url string, client *http.Client, n int) (*Group, error) {
	return dialAll(ctx, n, func(i int) (*member, error) {
		switch kind {
		case Ours:
			l, err := loadgen.DialLobbyWith(ctx, client, url, "idle "+strconv.Itoa(i), nil)
			if err != nil {
				return nil, err
			}

			return &member{ours: l}, nil
		default:
			c, err := dialBare(ctx, url, "lobby")
			if err != nil {
				return nil, err
			}

			return &member{bare: c}, nil
		}
	})
}

func dialBare(ctx context.Context, url, room string) (*websocket.Conn, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("wsload: dial: %w", err)
	}
	c.SetReadLimit(32 << 10)
	if err := c.Write(ctx, websocket.MessageBinary, []byte(room)); err != nil {
		_ = c.CloseNow()

		return nil, fmt.Errorf("wsload: join: %w", err)
	}

	return c, nil
}

// FanoutResult is what one fan-out run measured.
type FanoutResult struct {
	Rate       float64       `json:"linesPerSession"` // offered, per session per second
	Sent       uint64        `json:"sent"`
	Expected   uint64        `json:"expected"`  // deliveries the sent lines should make
	Delivered  uint64        `json:"delivered"` // deliveries received in time
	Refused    uint64        `json:"refused"`   // lines the server refused (rate limit)
	Closed     uint64        `json:"closed"`    // sessions the server closed (slow consumer)
	PerSecond  float64       `json:"perSecond"` // deliveries per second
	P50        time.Duration `json:"p50"`
	P99        time.Duration `json:"p99"`
	ServerCPU  float64       `json:"serverCPU"`  // server CPU-seconds per second
	CoreBusy   float64       `json:"coreBusy"`   // the server core's busy fraction (-1: not pinned)
	PerCPUSec  float64       `json:"perCPUSec"`  // deliveries per server CPU-second
	Drops      float64       `json:"drops"`      // 1 - delivered/expected
	SendErrors uint64        `json:"sendErrors"` // writes that failed on the client
}

// Fanout is a set of rooms whose members chat.
type Fanout struct {
	kind     Kind
	g        *Group
	roomSize int
	run      atomic.Pointer[fanoutRun]
	closed   atomic.Uint64
}

type fanoutRun struct {
	delivered atomic.Uint64
	refused   atomic.Uint64
	hist      *loadgen.Hist
	start     int64
}

// Close closes every session.
func (f *Fanout) Close() { f.g.Close() }

// OpenFanout opens rooms of roomSize: in ours the first member creates the
// room and the others join it; in bare they name the same room.
func OpenFanout(ctx context.Context, kind Kind, url string, sessions, roomSize int) (*Fanout, error) {
	f := &Fanout{kind: kind, roomSize: roomSize}
	rooms := sessions / roomSize
	codes := make([]string, rooms)
	var codesMu sync.Mutex
	ready := make([]chan struct{}, rooms)
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	g, err := dialAll(ctx, rooms*roomSize, func(i int) (*member, error) {
		room, seat := i/roomSize, i%roomSize
		if kind == Bare {
			c, err := dialBare(ctx, url, "room "+strconv.Itoa(room))
			if err != nil {
				return nil, err
			}
			go f.readBare(ctx, c)

			return &member{bare: c}, nil
		}
		l, err := loadgen.DialLobby(ctx, url, fmt.Sprintf("p%d.%d", room, seat), f.onOurs)
		if err != nil {
			return nil, err
		}
		if seat == 0 {
			var rj protocol.RoomJoined
			if err := l.Call(ctx, protocol.TypeCreateRoom, &protocol.CreateRoom{
				Name: "fanout " + strconv.Itoa(room), MaxPlayers: roomSize,
			}, &rj); err != nil {
				l.Close()

				return nil, err
			}
			codesMu.Lock()
			codes[room] = rj.Room.Code
			codesMu.Unlock()
			close(ready[room])
		} else {
			select {
			case <-ready[room]:
			case <-ctx.Done():
				l.Close()

				return nil, ctx.Err()
			}
			codesMu.Lock()
			code := codes[room]
			codesMu.Unlock()
			if err := l.Call(ctx, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code}, nil); err != nil {
				l.Close()

				return nil, err
			}
		}

		l.SetRaw(f.rawOurs)
		go func() { <-l.Done(); f.closed.Add(1) }()

		return &member{ours: l}, nil
	})
	if err != nil {
		return nil, err
	}
	f.g = g

	return f, nil
}

func (f *Fanout) record(sentNanos int64) {
	r := f.run.Load()
	if r == nil || sentNanos < r.start {
		return
	}
	r.delivered.Add(1)
	r.hist.Add(time.Duration(time.Now().UnixNano() - sentNanos))
}

// chatText marks the text field of a ChatMessage frame as the server
// encodes it: the key "text" then a 19-digit string (fixstr 0xb3), the
// sender's clock in unix nanoseconds.
var chatText = []byte("\xa4text\xb3") //nolint:gochecknoglobals // a constant pattern

// okFrame is {"t":"ok","b":{}}, the server's answer to a line sent with id 0.
var okFrame = func() []byte { //nolint:gochecknoglobals // a constant frame
	f, _ := protocol.Encode(protocol.TypeOK, 0, &protocol.OK{})

	return f
}()

// rawOurs picks the send time out of a ChatMessage frame without decoding
// it, so the generator's cost per delivery stays near the bare harness's.
// Anything else goes on to be decoded.
func (f *Fanout) rawOurs(frame []byte) bool {
	if bytes.Equal(frame, okFrame) {
		return true // the ack of a chat line sent with id 0
	}
	i := bytes.Index(frame, chatText)
	if i < 0 || len(frame) < i+len(chatText)+19 {
		return false
	}
	var ns int64
	for _, c := range frame[i+len(chatText) : i+len(chatText)+19] {
		if c < '0' || c > '9' {
			return false
		}
		ns = ns*10 + int64(c-'0')
	}
	f.record(ns)

	return true
}

func (f *Fanout) onOurs(env protocol.Envelope) {
	switch env.Type {
	case protocol.TypeChatMessage:
		var m protocol.ChatMessage
		if protocol.DecodeBody(env, &m) != nil {
			return
		}
		if ns, err := strconv.ParseInt(m.Text, 10, 64); err == nil {
			f.record(ns)
		}
	case protocol.TypeError:
		if r := f.run.Load(); r != nil {
			r.refused.Add(1)
		}
	}
}

func (f *Fanout) readBare(ctx context.Context, c *websocket.Conn) {
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			f.closed.Add(1)

			return
		}
		if len(msg) >= 8 {
			f.record(int64(binary.BigEndian.Uint64(msg))) //nolint:gosec // a unix time
		}
	}
}

// Run has every member send lines at perSession lines/s for d, paced evenly
// across members, and counts deliveries (each line goes to the whole room,
// sender included) until drain after the last send.
func (f *Fanout) Run(ctx context.Context, perSession float64, d, drain time.Duration, window func(bool)) FanoutResult {
	r := &fanoutRun{hist: new(loadgen.Hist), start: time.Now().UnixNano()}
	f.run.Store(r)
	defer f.run.CompareAndSwap(r, nil)
	closedBefore := f.closed.Load()
	n := len(f.g.members)
	interval := time.Duration(float64(time.Second) / (perSession * float64(n)))
	var sent, sendErrs atomic.Uint64
	if window != nil {
		window(true)
	}
	start := time.Now()
	// A few writers share the members so one slow write does not stall the pacing.
	const writers = 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pad := make([]byte, 48)
			for k := 0; ; k++ {
				i := k*writers + w
				at := start.Add(time.Duration(i) * interval)
				if at.Sub(start) >= d || ctx.Err() != nil {
					return
				}
				time.Sleep(time.Until(at))
				m := f.g.members[i%n]
				now := time.Now().UnixNano()
				var err error
				wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				if m.ours != nil {
					err = m.ours.Send(wctx, protocol.TypeChat, &protocol.Chat{Text: strconv.FormatInt(now, 10)})
				} else {
					msg := make([]byte, 8+len(pad))
					binary.BigEndian.PutUint64(msg, uint64(now)) //nolint:gosec // a unix time
					err = m.bare.Write(wctx, websocket.MessageBinary, msg)
				}
				cancel()
				if err != nil {
					sendErrs.Add(1)

					continue
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case <-time.After(drain):
	case <-ctx.Done():
	}
	if window != nil {
		window(false)
	}
	res := FanoutResult{
		Sent: sent.Load(), Delivered: r.delivered.Load(), Refused: r.refused.Load(),
		Closed: f.closed.Load() - closedBefore, SendErrors: sendErrs.Load(),
		P50: r.hist.Quantile(0.5), P99: r.hist.Quantile(0.99),
	}
	res.Expected = (res.Sent - res.Refused) * uint64(f.roomSize) //nolint:gosec // small
	res.PerSecond = float64(res.Delivered) / elapsed.Seconds()
	if res.Expected > 0 && res.Delivered < res.Expected {
		res.Drops = 1 - float64(res.Delivered)/float64(res.Expected)
	}

	return res
}

// ErrNoSessions is returned when nothing could be opened.
var ErrNoSessions = errors.New("wsload: no sessions")
