package protocol

// A frozen host (issue 29). A host tab that stops running (a phone locks, the
// tab is discarded, a debugger, a long GC) keeps its lobby connection, since
// the browser answers WebSocket pings without the page. Its clients see the
// game channel go silent: each one sends HostSilent naming the host. Once a
// majority of the non-host members present has reported, the server sends
// the host HostCheck with a nonce; the host's page answers HostAlive with the
// same nonce from its WebSocket message handler, which a frozen page cannot
// run and a hidden (throttled) page still runs at once. An answer within the
// deadline refuses the vote; without one, in a room made with Migrate, the
// host is replaced as if it had left (PlayerLeft{ReasonUnresponsive}, then
// HostChanged) and the old host's session, now outside the room, gets
// HostReplaced when it runs again.
const (
	TypeHostSilent   = "hostSilent"
	TypeHostCheck    = "hostCheck"
	TypeHostAlive    = "hostAlive"
	TypeHostReplaced = "hostReplaced"
)

// ReasonUnresponsive is the PlayerLeft and HostReplaced reason of a host
// replaced because it did not answer HostCheck in time.
const ReasonUnresponsive = "unresponsive"

// HostSilent is a client's report that Host, the host it knows, has sent
// nothing on the game channel for a while. Naming the host keeps a report
// that crossed a migration from counting against the new host.
type HostSilent struct {
	Host string `msgpack:"host,omitempty" json:"host,omitempty"`
}

// HostCheck asks the host for a sign of life; answer HostAlive with Nonce.
type HostCheck struct {
	Nonce uint32 `msgpack:"nonce,omitempty" json:"nonce,omitempty"`
}

// HostAlive answers HostCheck.
type HostAlive struct {
	Nonce uint32 `msgpack:"nonce,omitempty" json:"nonce,omitempty"`
}

// HostReplaced tells a host that it was replaced in Room by Host (a player
// id) for Reason (ReasonUnresponsive); it is no longer in the room.
type HostReplaced struct {
	Room   string `msgpack:"room,omitempty" json:"room,omitempty"`
	Host   string `msgpack:"host,omitempty" json:"host,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// Validate refuses a report that names no host.
func (m *HostSilent) Validate() error {
	if m.Host == "" {
		return invalid("host", "is empty")
	}
	return nil
}

func newHostCheckBody(typ string) (any, bool) {
	switch typ {
	case TypeHostSilent:
		return &HostSilent{}, true
	case TypeHostCheck:
		return &HostCheck{}, true
	case TypeHostAlive:
		return &HostAlive{}, true
	case TypeHostReplaced:
		return &HostReplaced{}, true
	}
	return nil, false
}
