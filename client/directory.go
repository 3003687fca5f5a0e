package client

import (
	"context"
	"slices"
	"sync"

	"github.com/hostrelay/hostrelay/protocol"
)

// RoomWatch is a live copy of the server's public room list: the server
// sends it once, then only changes.
type RoomWatch struct {
	lobby   *Lobby
	mu      sync.Mutex
	rooms   map[string]protocol.RoomSummary
	changed chan struct{}
	// early holds updates that arrive while a watch request waits for its
	// list (nil otherwise): they are newer than the list, so they apply
	// after it.
	early []protocol.RoomListUpdate
}

// WatchRooms subscribes to the public room list. Creating or joining a room
// ends the watch on the server's side.
func (l *Lobby) WatchRooms(ctx context.Context) (*RoomWatch, error) {
	w := &RoomWatch{lobby: l, rooms: map[string]protocol.RoomSummary{}, changed: make(chan struct{}, 1)}
	// Registered before the request: updates may follow the reply at once.
	l.mu.Lock()
	l.watch = w
	l.mu.Unlock()
	if err := w.load(ctx); err != nil {
		l.mu.Lock()
		l.watch = nil
		l.mu.Unlock()
		return nil, err
	}
	return w, nil
}

// load asks for the list and replaces the watch's copy with it, then
// applies the updates that came meanwhile.
func (w *RoomWatch) load(ctx context.Context) error {
	w.mu.Lock()
	w.early = []protocol.RoomListUpdate{}
	w.mu.Unlock()
	var list protocol.RoomList
	err := w.lobby.call(ctx, protocol.TypeWatchRooms, &protocol.WatchRooms{}, &list)
	w.mu.Lock()
	early := w.early
	w.early = nil
	if err == nil {
		w.rooms = make(map[string]protocol.RoomSummary, len(list.Rooms))
		for _, r := range list.Rooms {
			w.rooms[r.Code] = r
		}
		for _, u := range early {
			w.applyLocked(u)
		}
	}
	w.mu.Unlock()
	if err == nil {
		w.notify()
	}
	return err
}

// rewatch renews a watch on the node the session moved to; every node
// lists every room, so its list replaces the old node's.
func (l *Lobby) rewatch(w *RoomWatch) {
	defer l.bg.Done()
	ctx, cancel := context.WithTimeout(l.stop, l.opts.RequestTimeout)
	defer cancel()
	if err := w.load(ctx); err != nil {
		l.log.Warn("cannot watch the room list on the new node", "err", err)
		return
	}
	l.log.Debug("watching the room list on the new node")
}

// Rooms returns the current list, sorted by code.
func (w *RoomWatch) Rooms() []protocol.RoomSummary {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]protocol.RoomSummary, 0, len(w.rooms))
	for _, r := range w.rooms {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b protocol.RoomSummary) int {
		if a.Code < b.Code {
			return -1
		}
		if a.Code > b.Code {
			return 1
		}
		return 0
	})
	return out
}

// Changed receives a value after the list changes (coalesced: one pending
// notification at most).
func (w *RoomWatch) Changed() <-chan struct{} { return w.changed }

// Close ends the watch.
func (w *RoomWatch) Close(ctx context.Context) error {
	w.lobby.mu.Lock()
	if w.lobby.watch == w {
		w.lobby.watch = nil
	}
	w.lobby.mu.Unlock()
	return w.lobby.call(ctx, protocol.TypeUnwatchRooms, &protocol.UnwatchRooms{}, &protocol.OK{})
}

func (w *RoomWatch) apply(u protocol.RoomListUpdate) {
	w.mu.Lock()
	if w.early != nil {
		w.early = append(w.early, u)
		w.mu.Unlock()
		return
	}
	w.applyLocked(u)
	w.mu.Unlock()
	w.notify()
}

func (w *RoomWatch) applyLocked(u protocol.RoomListUpdate) {
	for _, code := range u.Del {
		delete(w.rooms, code)
	}
	for _, r := range u.Set {
		w.rooms[r.Code] = r
	}
}

func (w *RoomWatch) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (l *Lobby) routeListUpdate(env protocol.Envelope) {
	l.mu.Lock()
	w := l.watch
	l.mu.Unlock()
	var u protocol.RoomListUpdate
	if w == nil || protocol.DecodeBody(env, &u) != nil {
		return
	}
	w.apply(u)
}
