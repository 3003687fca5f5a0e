package signaling

import (
	"cmp"
	"iter"
	"slices"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// roomsPerFrame bounds the rooms in one RoomList or RoomListUpdate frame. A
// summary is at most about 500 bytes (48-rune room name, 32-rune host name
// and 24-rune mode at 4 bytes a rune, plus keys), so 24 stay under MaxFrame;
// TestRoomsPerFrameFits checks the worst case.
const roomsPerFrame = 24

// directory is the room list's side of the hub: who is subscribed to the
// public room list (watchRooms on the wire), and which rooms changed since
// the last flush. Guarded by Hub.mu.
//
// Changes are not sent as they happen: a busy server changes rooms many times
// a second, and a subscriber needs only the latest state of each. flush runs
// ListInterval after the first change, compares each changed room with what
// each subscriber has, and sends one merged update per subscriber.
type directory struct {
	subscribers map[*Session]*listSubscriber
	dirty       map[string]struct{} // room codes changed since the last flush
	scheduled   bool
	nextSeq     uint64

	// public holds the public rooms oldest first (by seq), kept as rooms
	// change (relistLocked), so a subscription reads the newest off its end
	// rather than sorting every room under Hub.mu: with 3,000 rooms and 30
	// subscribers at the allowed rate the sort made other clients' round trips
	// 5-10 times slower (BenchmarkRoundTripWhileWatching).
	public []*room
	// scanned counts the rooms read from public for snapshots and refills;
	// tests hold it to what the subscribers are shown.
	scanned uint64
}

// listSubscriber is what one session subscribed to the room list has been
// told: the codes on its list.
type listSubscriber struct {
	known map[string]struct{}
}

// roomChangedLocked notes that r changed in a way the list shows, or was
// closed (after it left h.rooms).
func (h *Hub) roomChangedLocked(r *room) {
	h.relistLocked(r)
	h.roomCodeChangedLocked(r.code)
	if r.listing == nil && h.cfg.Cluster != nil {
		h.cfg.Cluster.RoomChanged(r.code)
	}
}

// relistLocked puts r in the public index or takes it out, as it is public
// and open or not. A room's seq never changes, so a binary search finds its
// place: a new room goes at the end, and a move costs a copy of pointers,
// not a sort.
func (h *Hub) relistLocked(r *room) {
	d := &h.dir
	want := r.public && (h.rooms[r.code] == r || h.remote[r.code] == r)
	i, listed := slices.BinarySearchFunc(d.public, r.seq, func(x *room, seq uint64) int { return cmp.Compare(x.seq, seq) })
	switch {
	case want && !listed:
		d.public = slices.Insert(d.public, i, r)
	case !want && listed:
		d.public = slices.Delete(d.public, i, i+1)
	}
}

// newestPublicLocked yields the public rooms, newest first.
func (h *Hub) newestPublicLocked() iter.Seq[*room] {
	return func(yield func(*room) bool) {
		d := &h.dir
		for i := len(d.public) - 1; i >= 0; i-- {
			d.scanned++
			if !yield(d.public[i]) {
				return
			}
		}
	}
}

func (h *Hub) roomCodeChangedLocked(code string) {
	d := &h.dir
	if len(d.subscribers) == 0 {
		return // nobody to tell; a later subscriber gets a fresh snapshot
	}
	if d.dirty == nil {
		d.dirty = make(map[string]struct{})
	}
	d.dirty[code] = struct{}{}
	if !d.scheduled {
		d.scheduled = true
		// AfterFunc, not a goroutine with a ticker: nothing runs while the
		// list is quiet, and nothing needs stopping when the hub closes.
		time.AfterFunc(h.cfg.ListInterval, h.flushRoomList)
	}
}

// subscribeRoomListLocked subscribes s to the room list and returns its
// snapshot, newest first: the first roomsPerFrame rooms for the reply, the
// rest for the events after it. Under the lock, so no update can overtake
// the snapshot.
func (h *Hub) subscribeRoomListLocked(s *Session) (first, rest []protocol.RoomSummary) {
	d := &h.dir
	if d.subscribers == nil {
		d.subscribers = make(map[*Session]*listSubscriber)
	}
	sub := &listSubscriber{known: make(map[string]struct{})}
	d.subscribers[s] = sub
	sums := make([]protocol.RoomSummary, 0, min(len(d.public), h.cfg.MaxListedRooms))
	for r := range h.newestPublicLocked() {
		sums = append(sums, h.summaryLocked(r))
		sub.known[r.code] = struct{}{}
		if len(sums) == h.cfg.MaxListedRooms {
			break
		}
	}
	n := min(len(sums), roomsPerFrame)
	return sums[:n], sums[n:]
}

func (h *Hub) unsubscribeRoomListLocked(s *Session) {
	delete(h.dir.subscribers, s)
}

// flushRoomList sends every subscriber what changed since the last flush.
func (h *Hub) flushRoomList() {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := &h.dir
	d.scheduled = false
	dirty := d.dirty
	d.dirty = nil
	if len(d.subscribers) == 0 || len(dirty) == 0 {
		return
	}
	// A changed room is either listed (public, still here) or gone for
	// everyone. Codes are sorted so each subscriber's update reads the same way.
	codes := make([]string, 0, len(dirty))
	for c := range dirty {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	for s, w := range d.subscribers {
		var upd protocol.RoomListUpdate
		for _, c := range codes {
			r, ok := h.listedLocked(c)
			_, known := w.known[c]
			switch {
			case ok && r.public && (known || len(w.known) < h.cfg.MaxListedRooms):
				w.known[c] = struct{}{}
				upd.Set = append(upd.Set, h.summaryLocked(r))
			case known && (!ok || !r.public):
				delete(w.known, c)
				upd.Del = append(upd.Del, c)
			}
		}
		// A subscriber whose list was full and lost rooms takes the newest
		// rooms it has not seen, so it keeps showing as many as it may.
		if len(upd.Del) > 0 && len(w.known) < h.cfg.MaxListedRooms {
			for r := range h.newestPublicLocked() {
				if _, known := w.known[r.code]; !known {
					w.known[r.code] = struct{}{}
					upd.Set = append(upd.Set, h.summaryLocked(r))
				}
				if len(w.known) >= h.cfg.MaxListedRooms {
					break
				}
			}
		}
		sendListUpdate(s, upd)
	}
}

// delsPerFrame bounds the codes in one update's Del (8 bytes each): with
// roomsPerFrame worst-case rooms beside them the frame still fits.
const delsPerFrame = 400

// sendListUpdate sends upd in frames of at most roomsPerFrame rooms and
// delsPerFrame deletions.
func sendListUpdate(s *Session, upd protocol.RoomListUpdate) {
	for len(upd.Set) > 0 || len(upd.Del) > 0 {
		n, m := min(len(upd.Set), roomsPerFrame), min(len(upd.Del), delsPerFrame)
		s.send(0, protocol.TypeRoomListUpdate, &protocol.RoomListUpdate{Set: upd.Set[:n], Del: upd.Del[:m]})
		upd.Set, upd.Del = upd.Set[n:], upd.Del[m:]
	}
}

// subscribeRoomList answers watchRooms: the reply holds the first
// roomsPerFrame rooms, events after it the rest.
func subscribeRoomList(q req[protocol.WatchRooms]) (reply, error) {
	first, rest := q.h.subscribeRoomListLocked(q.s)
	return reply{typ: protocol.TypeRoomList, body: &protocol.RoomList{Rooms: first}, then: func() {
		for len(rest) > 0 {
			n := min(len(rest), roomsPerFrame)
			q.s.send(0, protocol.TypeRoomListUpdate, &protocol.RoomListUpdate{Set: rest[:n]})
			rest = rest[n:]
		}
	}}, nil
}

// unsubscribeRoomList answers unwatchRooms.
func unsubscribeRoomList(q req[protocol.UnwatchRooms]) (reply, error) {
	q.h.unsubscribeRoomListLocked(q.s)
	return okReply(), nil
}
