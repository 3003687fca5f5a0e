package turn

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"
)

// ask sends c's TURN server a request of method carrying attrs, signed as a
// client does: an unsigned try first for the server's NONCE and REALM, then
// the same request with USERNAME, REALM, NONCE and MESSAGE-INTEGRITY for
// password. It returns the server's answer to the signed request.
func ask(t *testing.T, c *pionturn.Client, username, password string, method stun.Method, attrs ...stun.Setter) *stun.Message {
	t.Helper()
	res := transact(t, c, append([]stun.Setter{stun.TransactionID, stun.NewType(method, stun.ClassRequest)}, attrs...)...)
	var (
		nonce stun.Nonce
		realm stun.Realm
	)
	if err := nonce.GetFrom(res); err != nil {
		t.Fatalf("%s without credentials: no NONCE in %s", method, res)
	}
	if err := realm.GetFrom(res); err != nil {
		t.Fatalf("%s without credentials: no REALM in %s", method, res)
	}

	return askWith(t, c, username, password, realm, nonce, method, attrs...)
}

// askWith is ask with a known realm and nonce.
func askWith(t *testing.T, c *pionturn.Client, username, password string, realm stun.Realm, nonce stun.Nonce,
	method stun.Method, attrs ...stun.Setter,
) *stun.Message {
	t.Helper()
	signed := append([]stun.Setter{stun.TransactionID, stun.NewType(method, stun.ClassRequest)}, attrs...)
	signed = append(signed, stun.NewUsername(username), realm, nonce,
		stun.NewLongTermIntegrity(username, realm.String(), password), stun.Fingerprint)

	return transact(t, c, signed...)
}

// transact sends one STUN request from c's socket and returns the answer.
func transact(t *testing.T, c *pionturn.Client, setters ...stun.Setter) *stun.Message {
	t.Helper()
	msg, err := stun.Build(setters...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.PerformTransaction(msg, c.TURNServerAddr(), false)
	if err != nil {
		t.Fatalf("%s: %v", msg.Type, err)
	}

	return res.Msg
}

// codeOf is the ERROR-CODE of an error response, 0 for a success.
func codeOf(t *testing.T, m *stun.Message) stun.ErrorCode {
	t.Helper()
	if m.Type.Class == stun.ClassSuccessResponse {
		return 0
	}
	var code stun.ErrorCodeAttribute
	if err := code.GetFrom(m); err != nil {
		t.Fatalf("error response without ERROR-CODE: %s", m)
	}

	return code.Code
}

// turnCode is the STUN error code in an error from pion's client, 0 if none.
func turnCode(err error) stun.ErrorCode {
	var te *stun.TurnError
	if errors.As(err, &te) {
		return te.ErrorCodeAttr.Code
	}

	return 0
}

// channelNumber is a CHANNEL-NUMBER attribute.
type channelNumber uint16

func (n channelNumber) AddTo(m *stun.Message) error {
	var v [4]byte
	binary.BigEndian.PutUint16(v[:], uint16(n))
	m.Add(stun.AttrChannelNumber, v[:])

	return nil
}

// lifetime is a LIFETIME attribute, in seconds.
type lifetime uint32

func (l lifetime) AddTo(m *stun.Message) error {
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], uint32(l))
	m.Add(stun.AttrLifetime, v[:])

	return nil
}

// lifetimeOf is the LIFETIME of a response, in seconds.
func lifetimeOf(t *testing.T, m *stun.Message) uint32 {
	t.Helper()
	v, err := m.Get(stun.AttrLifetime)
	if err != nil || len(v) != 4 {
		t.Fatalf("no LIFETIME in %s", m)
	}

	return binary.BigEndian.Uint32(v)
}

// udpTransport is REQUESTED-TRANSPORT UDP, which Allocate needs.
var udpTransport = requestedTransport{} //nolint:gochecknoglobals // a constant attribute

type requestedTransport struct{}

func (requestedTransport) AddTo(m *stun.Message) error {
	m.Add(stun.AttrRequestedTransport, []byte{17, 0, 0, 0})

	return nil
}

// newClientFrom is newClient on a socket bound to ip (any of 127.0.0.0/8
// reaches a loopback server), so a test can be clients of several IPs.
func newClientFrom(t *testing.T, srv *Server, ip string, creds Credentials) *pionturn.Client {
	t.Helper()
	pc, err := net.ListenPacket("udp4", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}

	return startClient(t, pc, srv.UDPAddr().String(), creds)
}

// transport is one of the ways a client reaches TURN, for tests that must
// hold over both.
type transport struct {
	name   string
	client func(t *testing.T, srv *Server, creds Credentials) *pionturn.Client
}

// transports are UDP and TCP, each with pion's client.
func transports() []transport {
	return []transport{{"udp", newClient}, {"tcp", newTCPClient}}
}
