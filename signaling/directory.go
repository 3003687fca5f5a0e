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

// directory is the room list's side of the hub: who watches, and which rooms
// changed since the last flush. Guarded by Hub.mu.
//
// Changes are not sent as they happen: a busy server changes rooms many times
// a second, and a watcher needs only the latest state of each. flush runs
// ListInterval after the first change, compares each changed room with what
// each watcher has, and sends one merged update per watcher.
type directory struct {
	watchers  map[*Session]*watcher
	dirty     map[string]struct{} // room codes changed since the last flush
	scheduled bool
	nextSeq   uint64

	// public holds the public rooms oldest first (by seq), kept as rooms
	// change (relistLocked), so a watch reads the newest off its end rather
	// than sorting every room under Hub.mu: with 3,000 rooms and 30
	// watchers at the allowed rate the sort made other clients' round trips
	// 5-10 times slower (BenchmarkRoundTripWhileWatching).
	public []*room
	// scanned counts the rooms read from public for snapshots and refills;
	// tests hold it to what the watchers are shown.
	scanned uint64
}

// watcher is what one watching session has been told: the codes on its list.
type watcher struct {
	known map[string]struct{}
}

// roomChangedLocked notes that r changed in a way the list shows, or was
// closed (after it left h.rooms).
func (h *Hub) roomChangedLocked(r *room) {
	h.relistLocked(r)
	h.roomCodeChangedLocked(r.code)
}

// relistLocked puts r in the public index or takes it out, as it is public
// and open or not. A room's seq never changes, so a binary search finds its
// place: a new room goes at the end, and a move costs a copy of pointers,
// not a sort.
func (h *Hub) relistLocked(r *room) {
	d := &h.dir
	want := r.public && h.rooms[r.code] == r
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
	if len(d.watchers) == 0 {
		return // nobody to tell; a later watcher gets a fresh snapshot
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

// watchLocked subscribes s and sends the snapshot: the reply holds the first
// roomsPerFrame rooms, events hold the rest. Under the lock, so no update can
// overtake the snapshot.
func (h *Hub) watchLocked(s *Session, id uint32) {
	d := &h.dir
	if d.watchers == nil {
		d.watchers = make(map[*Session]*watcher)
	}
	w := &watcher{known: make(map[string]struct{})}
	d.watchers[s] = w
	sums := make([]protocol.RoomSummary, 0, min(len(d.public), h.cfg.MaxListedRooms))
	for r := range h.newestPublicLocked() {
		sums = append(sums, r.summary())
		w.known[r.code] = struct{}{}
		if len(sums) == h.cfg.MaxListedRooms {
			break
		}
	}
	first := sums[:min(len(sums), roomsPerFrame)]
	s.send(id, protocol.TypeRoomList, &protocol.RoomList{Rooms: first})
	for rest := sums[len(first):]; len(rest) > 0; {
		n := min(len(rest), roomsPerFrame)
		s.send(0, protocol.TypeRoomListUpdate, &protocol.RoomListUpdate{Set: rest[:n]})
		rest = rest[n:]
	}
}

func (h *Hub) unwatchLocked(s *Session) {
	delete(h.dir.watchers, s)
}

// flushRoomList sends every watcher what changed since the last flush.
func (h *Hub) flushRoomList() {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := &h.dir
	d.scheduled = false
	dirty := d.dirty
	d.dirty = nil
	if len(d.watchers) == 0 || len(dirty) == 0 {
		return
	}
	// A changed room is either listed (public, still here) or gone for
	// everyone. Codes are sorted so each watcher's update reads the same way.
	codes := make([]string, 0, len(dirty))
	for c := range dirty {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	for s, w := range d.watchers {
		var upd protocol.RoomListUpdate
		for _, c := range codes {
			r, ok := h.rooms[c]
			_, known := w.known[c]
			switch {
			case ok && r.public && (known || len(w.known) < h.cfg.MaxListedRooms):
				w.known[c] = struct{}{}
				upd.Set = append(upd.Set, r.summary())
			case known && (!ok || !r.public):
				delete(w.known, c)
				upd.Del = append(upd.Del, c)
			}
		}
		// A watcher whose list was full and lost rooms takes the newest
		// rooms it has not seen, so it keeps showing as many as it may.
		if len(upd.Del) > 0 && len(w.known) < h.cfg.MaxListedRooms {
			for r := range h.newestPublicLocked() {
				if _, known := w.known[r.code]; !known {
					w.known[r.code] = struct{}{}
					upd.Set = append(upd.Set, r.summary())
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

func (s *Session) handleWatchRooms(env protocol.Envelope) error {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.room != nil {
		return fail(protocol.CodeAlreadyInRoom, "the room list is for players outside a room")
	}
	h.watchLocked(s, env.ID)
	return nil
}

func (s *Session) handleUnwatchRooms(env protocol.Envelope) error {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unwatchLocked(s)
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
}
