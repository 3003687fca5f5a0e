package bare

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Fanout is the bare coder/websocket fan-out: the shape of coder/websocket's
// chat example (a reader per connection, a bounded queue and a writer per
// subscriber, slow subscribers dropped) and nothing else. A client's first
// message names its room; every later message goes to every member of that
// room, the sender included, and the sender then gets a one-byte ack, as
// hostrelay's lobby answers each chat line with ok.
type Fanout struct {
	// Queue is the messages queued per subscriber; default 64.
	Queue int

	mu    sync.Mutex
	rooms map[string]map[*member]struct{}
}

var ack = []byte{'k'} //nolint:gochecknoglobals // a constant frame

type member struct {
	conn *websocket.Conn
	out  chan []byte
}

// ServeHTTP accepts one WebSocket and serves it until it closes.
func (f *Fanout) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(32 << 10)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	_, name, err := conn.Read(ctx)
	if err != nil {
		_ = conn.CloseNow()

		return
	}
	room := string(name)
	queue := f.Queue
	if queue == 0 {
		queue = 64
	}
	m := &member{conn: conn, out: make(chan []byte, queue)}
	f.mu.Lock()
	if f.rooms == nil {
		f.rooms = make(map[string]map[*member]struct{})
	}
	if f.rooms[room] == nil {
		f.rooms[room] = make(map[*member]struct{})
	}
	f.rooms[room][m] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.rooms[room], m)
		if len(f.rooms[room]) == 0 {
			delete(f.rooms, room)
		}
		f.mu.Unlock()
		_ = conn.CloseNow()
	}()
	go func() {
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-m.out:
				wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
				err := conn.Write(wctx, websocket.MessageBinary, msg)
				wcancel()
				if err != nil {
					return
				}
			}
		}
	}()
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		f.mu.Lock()
		for o := range f.rooms[room] {
			select {
			case o.out <- msg:
			default:
				go func() { _ = o.conn.CloseNow() }() // slow subscriber
			}
		}
		select {
		case m.out <- ack:
		default:
			go func() { _ = conn.CloseNow() }()
		}
		f.mu.Unlock()
	}
}
