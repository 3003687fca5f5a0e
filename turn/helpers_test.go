package turn

import (
	"context"
	"log/slog"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/leakcheck"
)

var testSecret = []byte("0123456789abcdef-test-secret-0123")

// TestMain fails the run if any TURN goroutine, server or client, outlives the tests.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m, 5*time.Second, anyTURNGoroutine)) }

// fakeSessions stands in for the lobby.
type fakeSessions struct {
	mu           sync.RWMutex
	rooms        map[string]string // live session -> room ("" = in no room)
	onRoomChange func(string)      // set through notifyingSessions.OnRoomChange
	roomOfs      atomic.Int64      // RoomOf calls
}

func newFakeSessions() *fakeSessions { return &fakeSessions{rooms: make(map[string]string)} }

// join and end report the change to a listener after making it, under the
// lock, as the hub does.
func (f *fakeSessions) join(session, room string) {
	f.mu.Lock()
	f.rooms[session] = room
	if f.onRoomChange != nil {
		f.onRoomChange(session)
	}
	f.mu.Unlock()
}

func (f *fakeSessions) end(session string) {
	f.mu.Lock()
	delete(f.rooms, session)
	if f.onRoomChange != nil {
		f.onRoomChange(session)
	}
	f.mu.Unlock()
}

// notifyingSessions is a fakeSessions that also reports room changes, so turn
// caches rooms.
type notifyingSessions struct{ *fakeSessions }

func (w notifyingSessions) OnRoomChange(fn func(string)) func() {
	w.mu.Lock()
	w.onRoomChange = fn
	w.mu.Unlock()

	return func() {
		w.mu.Lock()
		w.onRoomChange = nil
		w.mu.Unlock()
	}
}

// notifying makes newServer hand turn a notifyingSessions.
func notifying(c *Config) { c.Sessions = notifyingSessions{c.Sessions.(*fakeSessions)} } //nolint:forcetypeassert // test config

func (f *fakeSessions) SessionLive(id string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.rooms[id]

	return ok
}

func (f *fakeSessions) RoomOf(id string) (string, bool) {
	f.roomOfs.Add(1)
	f.mu.RLock()
	defer f.mu.RUnlock()
	room, ok := f.rooms[id]

	return room, ok && room != ""
}

// testLogger discards logs unless HOSTRELAY_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("HOSTRELAY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slogTrace}))
	}

	return slog.New(slog.DiscardHandler)
}

func testConfig(sessions Sessions) Config {
	cfg := DefaultConfig()
	cfg.Secret = testSecret
	cfg.PublicIP = net.IPv4(127, 0, 0, 1)
	cfg.UDPAddr, cfg.TCPAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Sessions = sessions
	cfg.Logger = testLogger()
	return cfg
}

// newServer starts a server on loopback with ephemeral ports, closed at test end.
func newServer(t *testing.T, opts ...func(*Config)) (*Server, *fakeSessions) {
	t.Helper()
	fs := newFakeSessions()
	cfg := testConfig(fs)
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	return srv, fs
}

// newClient returns a real pion TURN client over UDP, closed at test end.
func newClient(t *testing.T, srv *Server, creds Credentials) *pionturn.Client {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	return startClient(t, pc, srv.UDPAddr().String(), creds)
}

// newTCPClient returns a real pion TURN client over TCP, closed at test end.
func newTCPClient(t *testing.T, srv *Server, creds Credentials) *pionturn.Client {
	t.Helper()
	conn, err := net.Dial("tcp", srv.TCPAddr().String())
	if err != nil {
		t.Fatal(err)
	}

	return startClient(t, pionturn.NewSTUNConn(conn), srv.TCPAddr().String(), creds)
}

func startClient(t *testing.T, pc net.PacketConn, server string, creds Credentials) *pionturn.Client {
	t.Helper()
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		STUNServerAddr: server,
		TURNServerAddr: server,
		Conn:           pc,
		Username:       creds.Username,
		Password:       creds.Password,
		LoggerFactory:  pionLoggerFactory{log: testLogger()},
	})
	if err != nil {
		_ = pc.Close()
		t.Fatal(err)
	}
	if err := c.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		_ = pc.Close()
	})

	return c
}

// allocate makes an allocation that must succeed and is released at test end.
func allocate(t *testing.T, c *pionturn.Client) net.PacketConn {
	t.Helper()
	relay, err := c.Allocate()
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	t.Cleanup(func() { _ = relay.Close() })

	return relay
}

// allocated is newClient + allocate for a session.
func allocated(t *testing.T, srv *Server, session string) net.PacketConn {
	t.Helper()

	return allocate(t, newClient(t, srv, srv.Credentials(session, time.Now())))
}

// deliver sends msg from→to every 20ms until rx reads it or within passes.
func deliver(from net.PacketConn, to net.Addr, rx net.PacketConn, msg string, within time.Duration) bool {
	got := receive(rx, msg, within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _ = from.WriteTo([]byte(msg), to)
		select {
		case ok := <-got:
			return ok
		case <-tick.C:
		}
	}
}

// neverArrives sends msg from→to for window and reports whether rx never read it.
func neverArrives(from net.PacketConn, to net.Addr, rx net.PacketConn, msg string, window time.Duration) bool {
	got := receive(rx, msg, window+200*time.Millisecond)
	end := time.Now().Add(window)
	for time.Now().Before(end) {
		_, _ = from.WriteTo([]byte(msg), to)
		time.Sleep(20 * time.Millisecond)
	}

	return !<-got
}

// receive reads rx until msg arrives (true) or within passes (false).
func receive(rx net.PacketConn, msg string, within time.Duration) <-chan bool {
	got := make(chan bool, 1)
	_ = rx.SetReadDeadline(time.Now().Add(within))
	go func() {
		buf := make([]byte, 1500)
		for {
			n, _, err := rx.ReadFrom(buf)
			if err != nil {
				got <- false

				return
			}
			if string(buf[:n]) == msg {
				got <- true

				return
			}
		}
	}()

	return got
}

// eventually polls cond every 10ms until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverGoroutine matches goroutines of a TURN server, ours or pion's.
func serverGoroutine(stack string) bool {
	for _, s := range []string{
		"github.com/pion/turn/v4.(*Server)",
		"github.com/pion/turn/v4.NewServer",
		"github.com/pion/turn/v4/internal/allocation",
		"github.com/pion/turn/v4/internal/server",
		"github.com/hostrelay/hostrelay/turn.(*",
	} {
		if strings.Contains(stack, s) {
			return true
		}
	}

	return false
}

// anyTURNGoroutine also matches pion's client goroutines.
func anyTURNGoroutine(stack string) bool {
	return serverGoroutine(stack) || strings.Contains(stack, "github.com/pion/turn/v4")
}

// logBuffer collects a server's text logs for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.buf.String()
}

// recordLogs makes the server log everything, pion's trace lines included, into b.
func recordLogs(b *logBuffer) func(*Config) {
	return func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slogTrace}))
	}
}

// plainPion's realm and its one user.
const (
	canaryRealm    = "canary"
	canaryUser     = "canary"
	canaryPassword = "canary"
)

// plainPion starts pion/turn as it comes, with none of this package's
// patches: one UDP listener on loopback, relays on 127.0.0.1, one user. The
// canary tests (TestUpstreamCanary_*, pionfix_*_test.go) ask it whether
// upstream still behaves as a patch assumes. It returns a client of it
// with password.
func plainPion(t *testing.T, password string) *pionturn.Client {
	t.Helper()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	key := pionturn.GenerateAuthKey(canaryUser, canaryRealm, canaryPassword)
	srv, err := pionturn.NewServer(pionturn.ServerConfig{
		Realm: canaryRealm,
		AuthHandler: func(username, _ string, _ net.Addr) ([]byte, bool) {
			return key, username == canaryUser
		},
		LoggerFactory: pionLoggerFactory{log: testLogger()},
		PacketConnConfigs: []pionturn.PacketConnConfig{{
			PacketConn: udp,
			RelayAddressGenerator: &pionturn.RelayAddressGeneratorStatic{
				RelayAddress: net.IPv4(127, 0, 0, 1),
				Address:      "127.0.0.1",
			},
		}},
	})
	if err != nil {
		_ = udp.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	return startClient(t, pc, udp.LocalAddr().String(), Credentials{Username: canaryUser, Password: password})
}

// upstreamGone fails t with the news that a patch may go.
func upstreamGone(t *testing.T, patch, news string) {
	t.Helper()
	t.Fatalf("pion/turn changed: %s. The patch in %s may no longer be needed: "+
		"read its header and delete it if so.", news, patch)
}

// pionConfigFields names the fields of pion's ServerConfig, for canaries
// that watch for a setting that would replace a patch.
func pionConfigFields() []string {
	typ := reflect.TypeFor[pionturn.ServerConfig]()
	names := make([]string, typ.NumField())
	for i := range names {
		names[i] = typ.Field(i).Name
	}

	return names
}
