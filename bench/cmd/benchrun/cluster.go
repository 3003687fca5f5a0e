package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// ClusterResult is the cluster section: joins through a node that does not
// hold the room against joins on the node that does, and the directory
// updates NATS carries between nodes.
type ClusterResult struct {
	Joins      int           `json:"joins"`
	LocalP50   time.Duration `json:"localP50"`
	LocalP99   time.Duration `json:"localP99"`
	RemoteP50  time.Duration `json:"remoteP50"`
	RemoteP99  time.Duration `json:"remoteP99"`
	Rooms      int           `json:"rooms"`
	Offered    float64       `json:"changesOfferedPerSec"` // room changes made on node a per second
	Carried    float64       `json:"kvUpdatesPerSec"`      // directory entries written per second (seen on NATS)
	Listed     float64       `json:"listUpdatesPerSec"`    // rooms updated per second on node b's room list
	LagP50     time.Duration `json:"lagP50"`               // change on a → entry on NATS
	LagP99     time.Duration `json:"lagP99"`
	ListLagP50 time.Duration `json:"listLagP50"` // change on a → b's room list
	ListLagP99 time.Duration `json:"listLagP99"`
	PerCPUSec  float64       `json:"kvUpdatesPerCPUSec"` // directory entries per CPU-second of node a
}

// cluster runs NATS and two nodes on the server core. Joins: a client dials
// a node, says hello and joins a room of node a — dialling a itself
// (local), or b, which answers room_elsewhere, and then a (remote: what the
// SDKs do). Directory: hosts on a change their public rooms' names at a
// fixed rate; a NATS watcher counts the entries written and their lag, and
// a room-list watcher on b counts what its list shows.
func (d *driver) cluster(ctx context.Context) error {
	var natsURL string
	ns, err := start(ctx, "natsd", d.serverCPU, func(l string) bool {
		if strings.HasPrefix(l, "nats://") {
			natsURL = strings.TrimSpace(l)
			return true
		}
		return false
	}, filepath.Join(d.bins, "hostrelay-natsd"))
	if err != nil {
		return err
	}
	defer ns.stop()
	policy := []string{"-nats", "", "-messages-per-second", "1000"} // a room-name change per message: policy, not capacity
	policy[1] = natsURL
	a, err := startHostrelay(ctx, d.hostrelay, d.serverCPU, append(policy, "-node-id", "a", "-region", "eu")...)
	if err != nil {
		return err
	}
	defer a.stop()
	b, err := startHostrelay(ctx, d.hostrelay, d.serverCPU, append(policy, "-node-id", "b", "-region", "us")...)
	if err != nil {
		return err
	}
	defer b.stop()
	if err := waitNodes(ctx, b.http, 2); err != nil {
		return err
	}
	res := &ClusterResult{}
	if err := d.clusterJoins(ctx, a.http, b.http, res); err != nil {
		return err
	}
	if err := d.clusterDirectory(ctx, natsURL, a, b.http, res); err != nil {
		return fmt.Errorf("%w\nnode a:\n%s", err, a.output())
	}
	d.res.Cluster = res
	return nil
}

func waitNodes(ctx context.Context, httpAddr string, n int) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+"/api/v1/nodes", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			var body struct {
				Nodes []json.RawMessage `json:"nodes"`
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err == nil && len(body.Nodes) >= n {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("node %s did not see %d nodes", httpAddr, n)
}

func (d *driver) clusterJoins(ctx context.Context, aHTTP, bHTTP string, res *ClusterResult) error {
	host, _, err := lobbytest.Connect(ctx, "ws://"+aHTTP+"/ws", "Host", lobbytest.Options{})
	if err != nil {
		return err
	}
	defer host.CloseNow()
	var rj protocol.RoomJoined
	if err := host.Call(ctx, protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "bench", MaxPlayers: protocol.MaxPlayers}, &rj); err != nil {
		return err
	}
	n := 300
	if d.quick {
		n = 20
	}
	var local, remote []time.Duration
	for i := range 2 * n {
		from := aHTTP
		if i%2 == 1 {
			from = bHTTP
		}
		took, err := joinOnce(ctx, "ws://"+from+"/ws", rj.Room.Code)
		if err != nil {
			return fmt.Errorf("join %d via %s: %w", i, from, err)
		}
		if from == aHTTP {
			local = append(local, took)
		} else {
			remote = append(remote, took)
		}
	}
	res.Joins = n
	res.LocalP50, res.LocalP99 = percentile(local, 50), percentile(local, 99)
	res.RemoteP50, res.RemoteP99 = percentile(remote, 50), percentile(remote, 99)
	d.logf("cluster joins: local p50 %s p99 %s; through the other node p50 %s p99 %s (%d each)",
		res.LocalP50, res.LocalP99, res.RemoteP50, res.RemoteP99, n)
	return nil
}

// joinOnce is one player arriving by code at url: dial, hello, join,
// following room_elsewhere as the SDKs do; then it leaves (a clean close
// frees the seat at once).
func joinOnce(ctx context.Context, url, code string) (time.Duration, error) {
	t0 := time.Now()
	for hops := 0; hops < 3; hops++ {
		c, _, err := lobbytest.Connect(ctx, url, "P", lobbytest.Options{})
		if err != nil {
			return 0, err
		}
		var rj protocol.RoomJoined
		err = c.Call(ctx, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code}, &rj)
		var re lobbytest.ReplyError
		if errors.As(err, &re) && re.Code == protocol.CodeRoomElsewhere {
			_ = c.WS().Close(websocket.StatusNormalClosure, "")
			url = re.URL
			continue
		}
		took := time.Since(t0)
		_ = c.WS().Close(websocket.StatusNormalClosure, "")
		return took, err
	}
	return 0, errors.New("more than two moves")
}

func (d *driver) clusterDirectory(ctx context.Context, natsURL string, a *hostrelay, bHTTP string, res *ClusterResult) error {
	rooms, perRoom, window := 500, 20.0, 10*time.Second
	if d.quick {
		rooms, window = 20, 2*time.Second
	}
	aWS := "ws://" + a.http + "/ws"
	hosts := make([]*lobbytest.Conn, 0, rooms)
	defer func() {
		for _, h := range hosts {
			_ = h.CloseNow()
		}
	}()
	codes := make([]string, 0, rooms)
	for i := range rooms {
		h, _, err := lobbytest.Connect(ctx, aWS, "Host", lobbytest.Options{})
		if err != nil {
			return err
		}
		hosts = append(hosts, h)
		var rj protocol.RoomJoined
		if err := h.Call(ctx, protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r" + strconv.Itoa(i) + " 0", MaxPlayers: 4, Public: true}, &rj); err != nil {
			return err
		}
		codes = append(codes, rj.Room.Code)
	}
	// Each rename is answered (ok, roomUpdated): read them, or the node
	// drops the host as a slow consumer.
	drain, stopDrain := context.WithCancel(ctx)
	defer stopDrain()
	for _, h := range hosts {
		go func() {
			for {
				if _, err := h.Read(drain); err != nil {
					return
				}
			}
		}()
	}

	// sent[code][seq] is when room code got the name "rI seq".
	var mu sync.Mutex
	sent := make(map[string]map[int]time.Time, rooms)
	for _, c := range codes {
		sent[c] = map[int]time.Time{}
	}
	seqOf := func(name string) (int, bool) {
		_, s, ok := strings.Cut(name, " ")
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(s)
		return n, err == nil
	}

	// What NATS carries: every room entry written, seen by a watcher of
	// the bucket (what each node's mirror reads).
	nc, err := nats.Connect(natsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, "hostrelay_rooms")
	if err != nil {
		return err
	}
	wctx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	w, err := kv.WatchAll(wctx, jetstream.UpdatesOnly())
	if err != nil {
		return err
	}
	var carried int
	var lags []time.Duration
	go func() {
		for e := range w.Updates() {
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var en struct {
				Listing *protocol.RoomSummary `json:"listing"`
			}
			if json.Unmarshal(e.Value(), &en) != nil || en.Listing == nil {
				continue
			}
			now := time.Now()
			mu.Lock()
			if seq, ok := seqOf(en.Listing.Name); ok {
				if t, ok := sent[e.Key()][seq]; ok {
					carried++
					lags = append(lags, now.Sub(t))
				}
			}
			mu.Unlock()
		}
	}()

	// What b's room list shows.
	watcher, _, err := lobbytest.Connect(ctx, "ws://"+bHTTP+"/ws", "Watch", lobbytest.Options{})
	if err != nil {
		return err
	}
	defer watcher.CloseNow()
	var list protocol.RoomList
	if err := watcher.Call(ctx, protocol.TypeWatchRooms, &protocol.WatchRooms{}, &list); err != nil {
		return err
	}
	var listed int
	var listLags []time.Duration
	go func() {
		for {
			env, err := watcher.Read(wctx)
			if err != nil {
				return
			}
			var upd protocol.RoomListUpdate
			if env.Type != protocol.TypeRoomListUpdate || protocol.DecodeBody(env, &upd) != nil {
				continue
			}
			now := time.Now()
			mu.Lock()
			for _, s := range upd.Set {
				if seq, ok := seqOf(s.Name); ok {
					if t, ok := sent[s.Code][seq]; ok {
						listed++
						listLags = append(listLags, now.Sub(t))
					}
				}
			}
			mu.Unlock()
		}
	}()

	// The load: each host renames its room perRoom times a second, spread
	// evenly over the window.
	cpu0, err := loadgen.CPUTime(a.pid)
	if err != nil {
		return err
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / (perRoom * float64(rooms)))
	changes := 0
	for seq := 1; time.Since(start) < window; seq++ {
		for i, h := range hosts {
			next := start.Add(time.Duration(changes) * interval)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
			mu.Lock()
			sent[codes[i]][seq] = time.Now()
			mu.Unlock()
			id := h.NewID()
			if err := h.SendID(ctx, id, protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "r" + strconv.Itoa(i) + " " + strconv.Itoa(seq),
				MaxPlayers: 4, Public: true}); err != nil {
				return err
			}
			changes++
		}
	}
	elapsed := time.Since(start)
	time.Sleep(time.Second) // the last changes reach NATS and b
	cpu1, err := loadgen.CPUTime(a.pid)
	if err != nil {
		return err
	}
	cancelWatch()
	mu.Lock()
	defer mu.Unlock()
	res.Rooms = rooms
	res.Offered = float64(changes) / elapsed.Seconds()
	res.Carried = float64(carried) / elapsed.Seconds()
	res.Listed = float64(listed) / elapsed.Seconds()
	res.LagP50, res.LagP99 = percentile(lags, 50), percentile(lags, 99)
	res.ListLagP50, res.ListLagP99 = percentile(listLags, 50), percentile(listLags, 99)
	if cpu := (cpu1 - cpu0).Seconds(); cpu > 0 {
		res.PerCPUSec = float64(carried) / cpu
	}
	d.logf("cluster directory: %d rooms, %.0f changes/s offered on a; %.0f entries/s written (lag p50 %s p99 %s); b's list %.0f rooms/s (lag p50 %s p99 %s)",
		rooms, res.Offered, res.Carried, res.LagP50, res.LagP99, res.Listed, res.ListLagP50, res.ListLagP99)
	return nil
}

// percentile is the p-th percentile of ds (0 if empty).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// millis prints d in milliseconds without ms's histogram cap.
func millis(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
