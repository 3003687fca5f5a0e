package protocol

// Reliability: held seats, host migration and fresh TURN credentials.
//
// Resuming. Every Welcome carries a single-use Resume token. When the
// connection drops, the server holds the session's seat for Welcome.Grace
// seconds; the others see the player with Away set. A new connection that
// sends Hello{Resume: token, Received: n} gets the seat back: the server
// answers Welcome{Resumed: true, Resume: <next token>} and then re-sends, in
// order, every frame after the n-th it had sent on that session. n counts
// every frame the client received on the session, on all its connections,
// except Welcomes with Resumed set. If too much was missed, or the token is
// unknown, used or expired, the reply is Error{CodeResumeFailed} and the
// client starts over with a plain Hello; a second resume with one token
// fails the same way, so exactly one of two racing resumes wins.
//
// Host migration. In a room created with Migrate, when the host leaves (or
// its seat expires) the longest-present connected member becomes the host:
// everyone gets PlayerLeft for the old host, then HostChanged. Clients
// connect to the new host as they did to the old one. Without Migrate the
// room closes (RoomClosed{ReasonHostLeft}).
//
// Credentials. Before the TURN credentials of RoomJoined.ICE expire the
// server sends ICERefresh with new ones for the same session; peers apply
// them (setConfiguration + restartIce) without dropping the game.
const (
	TypeHostChanged = "hostChanged"
	TypeICERefresh  = "iceRefresh"
)

// HostChanged names the room's new host after the old one left.
type HostChanged struct {
	Host     string `msgpack:"host,omitempty" json:"host,omitempty"`
	Previous string `msgpack:"prev,omitempty" json:"prev,omitempty"`
}

// ICERefresh carries fresh TURN credentials for this session.
type ICERefresh struct {
	ICE ICE `msgpack:"ice" json:"ice"`
}

func newResumeBody(typ string) (any, bool) {
	switch typ {
	case TypeHostChanged:
		return &HostChanged{}, true
	case TypeICERefresh:
		return &ICERefresh{}, true
	}
	return nil, false
}
