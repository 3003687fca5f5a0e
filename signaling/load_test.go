package signaling

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// heldSeat adds a session to h that has no connection, as a held seat has
// none: it lets a test have thousands of rooms without thousands of
// sockets. Requests go straight to its handlers (do); what it is sent is
// kept for a resume that never comes. Hub.Close ends it like any held seat.
func heldSeat(h *Hub, name string) *Session {
	s := newSession(h, &link{remote: netip.MustParseAddr("127.0.0.1"), host: "localhost:8080"}, newSessionID())
	h.mu.Lock()
	defer h.mu.Unlock()
	s.link, s.name, s.hello, s.away = nil, name, true, true
	h.sessions[s.id] = s
	return s
}

// do runs one request through s's handlers, as its link would.
func (s *Session) do(tb testing.TB, typ string, body any) {
	tb.Helper()
	frame, err := protocol.Encode(typ, 1, body)
	if err != nil {
		tb.Fatal(err)
	}
	env, err := protocol.Decode(frame)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.handle(env); err != nil {
		tb.Fatalf("%s: %v", typ, err)
	}
}

// seedRooms opens n rooms named "seed 0000"…, each hosted by a held seat,
// oldest first; every room whose index private(i) is true is private.
func seedRooms(tb testing.TB, h *Hub, n int, private func(i int) bool) []*Session {
	hosts := make([]*Session, n)
	for i := range hosts {
		hosts[i] = heldSeat(h, fmt.Sprintf("host %04d", i))
		hosts[i].do(tb, protocol.TypeCreateRoom, &protocol.CreateRoom{
			Name: fmt.Sprintf("seed %04d", i), MaxPlayers: 8, Public: private == nil || !private(i)})
	}
	return hosts
}

// resubscribeList has c send watchRooms every interval until ctx ends,
// reading and dropping everything it is sent; it closes c when done. It reports
// failures through errs, not the test: it runs on its own goroutine.
func resubscribeList(ctx context.Context, c *client, interval time.Duration, errs chan<- error) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if _, _, err := c.conn.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	defer wg.Wait()
	defer c.conn.CloseNow()
	frame, _ := protocol.Encode(protocol.TypeWatchRooms, 1, nil)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := c.conn.Write(ctx, websocket.MessageBinary, frame); err != nil && ctx.Err() == nil {
			errs <- fmt.Errorf("watcher: %w", err)
			return
		}
	}
}

// snapshot reads the reply to watchRooms request id and the updates that
// complete it (the first want rooms), skipping earlier frames; it returns
// the rooms in the order sent.
func readSnapshot(read func() (protocol.Envelope, error), id uint32, want int) ([]protocol.RoomSummary, error) {
	var rooms []protocol.RoomSummary
	for {
		env, err := read()
		if err != nil {
			return nil, err
		}
		if env.ID == id {
			var rl protocol.RoomList
			if err := protocol.DecodeBody(env, &rl); err != nil || env.Type != protocol.TypeRoomList {
				return nil, fmt.Errorf("reply to watchRooms: %s %w", env.Type, err)
			}
			rooms = rl.Rooms
			break
		}
	}
	for len(rooms) < want {
		env, err := read()
		if err != nil {
			return nil, err
		}
		var u protocol.RoomListUpdate
		if err := protocol.DecodeBody(env, &u); err != nil || env.Type != protocol.TypeRoomListUpdate || len(u.Del) > 0 {
			return nil, fmt.Errorf("after %d rooms of the snapshot: %s %+v %w", len(rooms), env.Type, u, err)
		}
		rooms = append(rooms, u.Set...)
	}
	return rooms, nil
}

func (h *Hub) listScanned() uint64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.dir.scanned
}

// TestRoomListWorkIsTheListNotTheServer: answering watchRooms, and filling a
// watcher's list when one of its rooms goes, reads as many rooms as the list
// shows, not every room of the server: sorting 3,000 public rooms under the
// hub's lock for every watchRooms, with 30 watchers at the allowed rate,
// slowed every other client (BenchmarkRoundTripWhileWatching has figures).
func TestRoomListWorkIsTheListNotTheServer(t *testing.T) {
	const rooms = 3000
	hub, url := testHub(t, fastList)
	hosts := seedRooms(t, hub, rooms, func(i int) bool { return i%7 == 0 })
	listed := hub.cfg.MaxListedRooms
	w := connectWith(t, url, protocol.Hello{})
	before := hub.listScanned()
	id := w.request(protocol.TypeWatchRooms, nil)
	got, err := readSnapshot(w.read, id, listed)
	if err != nil {
		t.Fatal(err)
	}
	if n := hub.listScanned() - before; n > uint64(listed) {
		t.Fatalf("a watch of %d rooms read %d rooms of the %d", listed, n, rooms)
	}
	if got[0].Name != fmt.Sprintf("seed %04d", rooms-1) {
		t.Fatalf("newest listed %q", got[0].Name)
	}
	// The newest room closes: the watcher gets the newest one it lacks.
	before = hub.listScanned()
	hosts[rooms-1].do(t, protocol.TypeLeaveRoom, nil)
	u := w.apply(roomList{})
	if len(u.Del) != 1 || u.Del[0] != got[0].Code || len(u.Set) != 1 {
		t.Fatalf("update %+v", u)
	}
	if n := hub.listScanned() - before; n > uint64(listed)+1 {
		t.Fatalf("filling one place read %d rooms of the %d", n, rooms)
	}
}

// TestRoomListUnderChurn: 30 watchers re-watch a list of 3,000 rooms at the
// allowed message rate while rooms are made, closed and turned private and
// public (among them one older than every other, deep in the order). Every
// snapshot is exactly the newest public rooms, newest first; after the
// churn one more matches the rooms as they are.
func TestRoomListUnderChurn(t *testing.T) {
	const rooms, watchers, watches, churners = 3000, 30, 20, 4
	hub, url := testHub(t, func(c *Config) {
		c.ListInterval = time.Millisecond
		c.MaxConnsPerIP = watchers + churners + 2
		// The watchers keep to the default rate themselves; the churn and
		// the rooms it makes are not limited.
		c.MessagesPerSecond, c.MessageBurst = 1e6, 1<<20
		c.RoomsPerMinute = 1 << 20
		// The test's clients read only while they wait for an answer, and
		// under load a round of churn keeps deep (and the watchers between
		// snapshots) from reading for longer than the ping timeout: not what
		// this test is about, and it once lost deep's connection in CI.
		c.PingInterval = time.Hour
	})
	// A room older than all the others, private for now.
	deep := connectWith(t, url, protocol.Hello{Name: "Deep"})
	deep.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "deep", MaxPlayers: 2})
	deep.expect(protocol.TypeRoomJoined, &protocol.RoomJoined{})
	private := func(i int) bool { return i%7 == 0 }
	seedRooms(t, hub, rooms, private)
	listed := hub.cfg.MaxListedRooms
	// The newest public seeds, newest first: what every snapshot ends with.
	var newestSeeds []string
	for i := rooms - 1; len(newestSeeds) < listed; i-- {
		if !private(i) {
			newestSeeds = append(newestSeeds, fmt.Sprintf("seed %04d", i))
		}
	}
	check := func(got []protocol.RoomSummary) error {
		churn := 0
		for churn < len(got) && got[churn].Name == "churn" {
			churn++
		}
		if churn > churners {
			return fmt.Errorf("%d churn rooms listed, at most %d are open", churn, churners)
		}
		seen := make(map[string]bool)
		for i, r := range got {
			if seen[r.Code] {
				return fmt.Errorf("room %s listed twice", r.Code)
			}
			seen[r.Code] = true
			if i >= churn && r.Name != newestSeeds[i-churn] {
				return fmt.Errorf("room %d of the list is %q, want %q (after %d new rooms)", i, r.Name, newestSeeds[i-churn], churn)
			}
		}
		return nil
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errs := make(chan error, watchers)
	var wg sync.WaitGroup
	for range watchers {
		c := connectWith(t, url, protocol.Hello{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Second / 50) // the default message rate
			defer tick.Stop()
			read := func() (protocol.Envelope, error) {
				rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
				defer rcancel()
				_, frame, err := c.conn.Read(rctx)
				if err != nil {
					return protocol.Envelope{}, err
				}
				return protocol.Decode(frame)
			}
			for i := range watches {
				frame, _ := protocol.Encode(protocol.TypeWatchRooms, uint32(i+1), nil)
				if err := c.conn.Write(ctx, websocket.MessageBinary, frame); err != nil {
					errs <- err
					return
				}
				got, err := readSnapshot(read, uint32(i+1), listed)
				if err == nil {
					err = check(got)
				}
				if err != nil {
					errs <- fmt.Errorf("watch %d: %w", i+1, err)
					return
				}
				<-tick.C
			}
		}()
	}
	churn := make([]*client, churners)
	for i := range churn {
		churn[i] = connectWith(t, url, protocol.Hello{Name: "C"})
	}
	watching := make(chan struct{})
	go func() { wg.Wait(); close(watching) }()
	for round := 0; ; round++ {
		select {
		case <-watching:
			t.Logf("%d rounds of churn while watching", round)
		default:
			for _, c := range churn {
				if env, e := c.reply(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "churn", MaxPlayers: 2, Public: true}); env.Type != protocol.TypeRoomJoined {
					t.Fatalf("create: %s %+v", env.Type, e)
				}
			}
			deep.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "deep", MaxPlayers: 2, Public: round%2 == 0})
			for _, c := range churn {
				c.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "churn", MaxPlayers: 2, Public: false})
				c.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "churn", MaxPlayers: 2, Public: true})
				c.ok(protocol.TypeLeaveRoom, nil)
				c.Discard() // roomUpdated echoes
			}
			deep.Discard()
			continue
		}
		break
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Quiet now: a watch lists exactly the newest public rooms.
	hub.mu.RLock()
	var want []*room
	for _, r := range hub.rooms {
		if r.public {
			want = append(want, r)
		}
	}
	hub.mu.RUnlock()
	slices.SortFunc(want, func(a, b *room) int { return cmp.Compare(b.seq, a.seq) })
	w := connectWith(t, url, protocol.Hello{})
	id := w.request(protocol.TypeWatchRooms, nil)
	got, err := readSnapshot(w.read, id, listed)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r.Code != want[i].code {
			t.Fatalf("room %d of the list is %s (%s), want %s", i, r.Code, r.Name, want[i].code)
		}
	}
}
