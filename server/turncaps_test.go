package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pion/logging"
	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestTURNAllocationsEndWithSessions is the red team's attack shape against
// a live server: many short lobby sessions from one IP, each allocating and
// then going, half cleanly and half by dropping the connection (their seats
// are held for -seat-grace). Every allocation is gone once the sessions and
// their graces have ended (pion would have kept each for 10 minutes), the
// held ones stay while their seats are held, and a fresh player allocates.
func TestTURNAllocationsEndWithSessions(t *testing.T) {
	const sessions, perSession = 30, 2
	s := startServer(t, "-seat-grace", "2s", "-max-conns-per-ip", "200")
	a := s.Addrs()
	allocs := func() int { return s.turn.Stats().Allocations }

	for i := range sessions {
		l := dialLobby(t, a.HTTP, fmt.Sprintf("p%d", i))
		rj := l.create(fmt.Sprintf("r%d", i), 2, "")
		for range perSession {
			allocate(t, a.TURNUDP, rj.ICE)
		}
		if i%2 == 0 {
			if err := l.WS().Close(websocket.StatusNormalClosure, "bye"); err != nil {
				t.Fatal(err)
			}
		} else {
			l.CloseNow() // no close frame: the seat is held
		}
	}
	// The last session dropped its connection a moment ago: its seat, and so
	// its allocations, are still held.
	if n := allocs(); n < perSession {
		t.Fatalf("%d allocations right after the last drop, want at least the %d of its held seat", n, perSession)
	}
	testwait.For(t, "every allocation of the ended sessions to close", func() bool { return allocs() == 0 })

	host := dialLobby(t, a.HTTP, "Fresh")
	allocate(t, a.TURNUDP, host.create("fresh", 2, "").ICE)
	if n := allocs(); n != 1 {
		t.Fatalf("%d allocations, want the fresh player's 1", n)
	}
}

// TestTURNCapFlags: -turn-allocations-per-ip and -turn-max-allocations-total
// reach the live TURN server, at and past each: 486 Allocation Quota
// Reached for one IP, another IP unaffected; 508 Insufficient Capacity for
// the whole server.
func TestTURNCapFlags(t *testing.T) {
	t.Run("per IP", func(t *testing.T) {
		s := startServer(t, "-turn-allocations-per-ip", "3")
		a := s.Addrs()
		host := dialLobby(t, a.HTTP, "Host")
		ice := host.create("r", 4, "").ICE
		for range 3 {
			allocateFrom(t, "127.0.0.1", a.TURNUDP, ice)
		}
		if _, err := tryAllocateFrom(t, "127.0.0.1", a.TURNUDP, ice); turnCode(err) != stun.CodeAllocQuotaReached {
			t.Fatalf("4th allocation from one IP: %v, want 486 Allocation Quota Reached", err)
		}
		allocateFrom(t, "127.0.0.2", a.TURNUDP, ice)
	})
	t.Run("total", func(t *testing.T) {
		s := startServer(t, "-turn-max-allocations-total", "2")
		a := s.Addrs()
		host := dialLobby(t, a.HTTP, "Host")
		rj := host.create("r", 4, "")
		allocate(t, a.TURNUDP, rj.ICE)
		mate, err := dialLobby(t, a.HTTP, "Mate").join(rj.Room.Code, "")
		if err != nil {
			t.Fatal(err)
		}
		allocateFrom(t, "127.0.0.2", a.TURNUDP, mate.ICE)
		if _, err := tryAllocateFrom(t, "127.0.0.3", a.TURNUDP, mate.ICE); turnCode(err) != stun.CodeInsufficientCapacity {
			t.Fatalf("3rd allocation on the server: %v, want 508 Insufficient Capacity", err)
		}
	})
}

// TestTURNLifetimeAndChannelFlags: -turn-max-lifetime is the lifetime a
// live server grants when asked for an hour, and -turn-max-channels the
// channels one allocation may bind (the next: 508).
func TestTURNLifetimeAndChannelFlags(t *testing.T) {
	s := startServer(t, "-turn-max-lifetime", "90s", "-turn-max-channels", "4")
	a := s.Addrs()
	ice := dialLobby(t, a.HTTP, "Host").create("r", 2, "").ICE
	user, pass := ice.Servers[0].Username, ice.Servers[0].Credential
	c := turnClient(t, "127.0.0.1", a.TURNUDP, user, "")

	res := signedRequest(t, c, user, pass, stun.MethodAllocate, rawAttr{stun.AttrRequestedTransport, []byte{17, 0, 0, 0}},
		rawAttr{stun.AttrLifetime, binary.BigEndian.AppendUint32(nil, 3600-1)})
	if res.Type.Class != stun.ClassSuccessResponse {
		t.Fatalf("Allocate: %s", res)
	}
	if v, err := res.Get(stun.AttrLifetime); err != nil || binary.BigEndian.Uint32(v) != 90 {
		t.Fatalf("asked for an hour, granted %v (%v), want 90s", v, err)
	}
	for i := range 5 {
		peer := stun.XORMappedAddress{IP: net.IPv4(127, 0, 0, 1), Port: 20000 + i}
		res := signedRequest(t, c, user, pass, stun.MethodChannelBind,
			rawAttr{stun.AttrChannelNumber, []byte{0x40, byte(i), 0, 0}}, xorPeer(peer))
		var code stun.ErrorCodeAttribute
		switch {
		case i < 4 && res.Type.Class != stun.ClassSuccessResponse:
			t.Fatalf("channel %d of 4: %s", i+1, res)
		case i == 4 && (code.GetFrom(res) != nil || code.Code != stun.CodeInsufficientCapacity):
			t.Fatalf("channel 5 past -turn-max-channels 4: %s, want 508 Insufficient Capacity", res)
		}
	}
}

// TestTURNWrongPassword: the live server answers a wrong TURN password 401
// Unauthorized (RFC 5389 section 10.2.2), not pion's 400.
func TestTURNWrongPassword(t *testing.T) {
	s := startServer(t)
	a := s.Addrs()
	ice := dialLobby(t, a.HTTP, "Host").create("r", 2, "").ICE
	ice.Servers[0].Credential = "wrong"
	if _, err := tryAllocate(t, a.TURNUDP, ice); turnCode(err) != stun.CodeUnauthorized {
		t.Fatalf("wrong password: %v, want 401 Unauthorized", err)
	}
}

func TestTURNCapFlagsValidated(t *testing.T) {
	for _, ok := range [][]string{
		{"-turn-allocations-per-ip", "2", "-turn-max-allocations-total", "2", "-turn-max-lifetime", "1m", "-turn-max-channels", "4"},
		{"-turn-max-lifetime", "1h", "-turn-max-channels", "16384"},
	} {
		if _, err := LoadConfig(ok, noEnv, io.Discard); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
	for _, bad := range [][]string{
		{"-turn-allocations-per-ip", "1"},
		{"-turn-max-allocations-total", "1"},
		{"-turn-max-lifetime", "59s"},
		{"-turn-max-lifetime", "61m"},
		{"-turn-max-channels", "3"},
		{"-turn-max-channels", "16385"},
	} {
		if _, err := LoadConfig(bad, noEnv, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	cfg, err := LoadConfig(nil, func(k string) string {
		return map[string]string{"HOSTRELAY_TURN_ALLOCATIONS_PER_IP": "7", "HOSTRELAY_TURN_MAX_ALLOCATIONS_TOTAL": "9",
			"HOSTRELAY_TURN_MAX_LIFETIME": "2m", "HOSTRELAY_TURN_MAX_CHANNELS": "8"}[k]
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.TURN; c.MaxAllocationsPerIP != 7 || c.MaxAllocations != 9 || c.MaxAllocationLifetime != 2*time.Minute || c.MaxChannelsPerAllocation != 8 {
		t.Fatalf("environment not applied: %+v", cfg)
	}
}

func turnCode(err error) stun.ErrorCode {
	if te, ok := err.(*stun.TurnError); ok { //nolint:errorlint // pion returns it unwrapped
		return te.ErrorCodeAttr.Code
	}
	return 0
}

// allocateFrom is allocate from a client socket on IP from.
func allocateFrom(t *testing.T, from, turnAddr string, ice protocol.ICE) net.PacketConn {
	t.Helper()
	relay, err := tryAllocateFrom(t, from, turnAddr, ice)
	if err != nil {
		t.Fatalf("allocate from %s: %v", from, err)
	}
	return relay
}

// tryAllocateFrom is tryAllocate from a client socket on IP from (any of
// 127.0.0.0/8 reaches a loopback server).
func tryAllocateFrom(t *testing.T, from, turnAddr string, ice protocol.ICE) (net.PacketConn, error) {
	t.Helper()
	c := turnClient(t, from, turnAddr, ice.Servers[0].Username, ice.Servers[0].Credential)
	relay, err := c.Allocate()
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { relay.Close() })
	return relay, nil
}

// turnClient is a listening pion TURN client on a socket on IP from, closed
// at test end.
func turnClient(t *testing.T, from, turnAddr, user, pass string) *pionturn.Client {
	t.Helper()
	conn, err := net.ListenPacket("udp4", net.JoinHostPort(from, "0"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		STUNServerAddr: turnAddr, TURNServerAddr: turnAddr, Conn: conn,
		Username: user, Password: pass, LoggerFactory: logging.NewDefaultLoggerFactory(),
	})
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); conn.Close() })
	if err := c.Listen(); err != nil {
		t.Fatal(err)
	}
	return c
}

// signedRequest sends a request of method from c, signed as a TURN client
// signs (an unsigned try first for the server's NONCE and REALM), and
// returns the answer.
func signedRequest(t *testing.T, c *pionturn.Client, user, pass string, method stun.Method, attrs ...stun.Setter) *stun.Message {
	t.Helper()
	do := func(setters ...stun.Setter) *stun.Message {
		t.Helper()
		msg, err := stun.Build(append([]stun.Setter{stun.TransactionID, stun.NewType(method, stun.ClassRequest)}, setters...)...)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.PerformTransaction(msg, c.TURNServerAddr(), false)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return res.Msg
	}
	var (
		nonce stun.Nonce
		realm stun.Realm
	)
	challenge := do(attrs...)
	if nonce.GetFrom(challenge) != nil || realm.GetFrom(challenge) != nil {
		t.Fatalf("%s without credentials: %s, want a 401 with NONCE and REALM", method, challenge)
	}
	return do(append(attrs, stun.NewUsername(user), realm, nonce,
		stun.NewLongTermIntegrity(user, realm.String(), pass), stun.Fingerprint)...)
}

type rawAttr struct {
	typ stun.AttrType
	v   []byte
}

func (a rawAttr) AddTo(m *stun.Message) error {
	m.Add(a.typ, a.v)
	return nil
}

type xorPeer stun.XORMappedAddress

func (p xorPeer) AddTo(m *stun.Message) error {
	return stun.XORMappedAddress(p).AddToAs(m, stun.AttrXORPeerAddress)
}
