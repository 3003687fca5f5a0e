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
}

// WatchRooms subscribes to the public room list. Creating or joining a room
// ends the watch on the server's side.
func (l *Lobby) WatchRooms(ctx context.Context) (*RoomWatch, error) {
	w := &RoomWatch{lobby: l, rooms: map[string]protocol.RoomSummary{}, changed: make(chan struct{}, 1)}
	// Registered before the request: updates may follow the reply at once.
	l.mu.Lock()
	l.watch = w
	l.mu.Unlock()
	var list protocol.RoomList
	if err := l.call(ctx, protocol.TypeWatchRooms, &protocol.WatchRooms{}, &list); err != nil {
		l.mu.Lock()
		l.watch = nil
		l.mu.Unlock()
		return nil, err
	}
	w.apply(protocol.RoomListUpdate{Set: list.Rooms})
	return w, nil
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
	for _, code := range u.Del {
		delete(w.rooms, code)
	}
	for _, r := range u.Set {
		w.rooms[r.Code] = r
	}
	w.mu.Unlock()
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
