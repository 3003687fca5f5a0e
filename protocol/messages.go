package protocol

// Message type tags. Client requests: Hello, CreateRoom, JoinRoom,
// LeaveRoom, Signal. Server replies: Welcome, RoomJoined, OK, Error. Server
// events (id 0): PlayerJoined, PlayerLeft, RoomClosed, Signal. The lobby's
// room features (ready, kick, chat, start, the room list) are in room.go and
// directory.go.
const (
	TypeHello        = "hello"
	TypeWelcome      = "welcome"
	TypeError        = "error"
	TypeOK           = "ok"
	TypeCreateRoom   = "createRoom"
	TypeJoinRoom     = "joinRoom"
	TypeRoomJoined   = "roomJoined"
	TypeLeaveRoom    = "leaveRoom"
	TypePlayerJoined = "playerJoined"
	TypePlayerLeft   = "playerLeft"
	TypeRoomClosed   = "roomClosed"
	TypeSignal       = "signal"
)

// Signal kinds. The joining client sends the offer, the host answers, and
// both trickle candidates.
const (
	SignalOffer     = "offer"
	SignalAnswer    = "answer"
	SignalCandidate = "candidate"
)

// Hello is the first frame a client sends. Name may be empty (a page can
// browse rooms before its player picks a name); CreateRoom and JoinRoom need
// one, set here or later with SetName. Device is a random id the client keeps
// across connections (a browser keeps it in localStorage): a room bans it when
// the host kicks its player, so the same browser cannot walk back in. Pings
// asks for PlayerUpdated events whenever a member's measured ping changes;
// without it pings arrive only with other changes, so a client that reads
// events strictly in order is not surprised by a stream it did not ask for.
type Hello struct {
	Version int    `msgpack:"v,omitempty" json:"v,omitempty"`
	Name    string `msgpack:"name,omitempty" json:"name,omitempty"`
	Device  string `msgpack:"device,omitempty" json:"device,omitempty"`
	Pings   bool   `msgpack:"pings,omitempty" json:"pings,omitempty"`
	// Resume, with the resume token of an earlier Welcome, takes that
	// session's seat back after its connection dropped. Received is how many
	// frames the client had received on it (see resume.go).
	Resume   string `msgpack:"resume,omitempty" json:"resume,omitempty"`
	Received uint64 `msgpack:"received,omitempty" json:"received,omitempty"`
	// Token is an identity token from the game's backend (a JWT; see
	// docs/identity.md), at most MaxAuthToken bytes. A server with -auth
	// off ignores it; otherwise a valid one makes the player verified and a
	// bad one refuses the hello with auth_invalid or auth_unavailable.
	// Send it again on a resume: the identity is checked each time.
	Token string `msgpack:"token,omitempty" json:"token,omitempty"`
}

// Welcome answers Hello. Session names this lobby session in logs and in the
// TURN username; it is not a secret and not a player id. Token is a secret
// bearer token for the HTTP API (/api/v1), valid while this session is
// connected: it is how a program proves it owns the session.
type Welcome struct {
	Version  int    `msgpack:"v,omitempty" json:"v,omitempty"`
	Session  string `msgpack:"session,omitempty" json:"session,omitempty"`
	MaxFrame int    `msgpack:"maxFrame,omitempty" json:"maxFrame,omitempty"`
	Token    string `msgpack:"token,omitempty" json:"token,omitempty"`
	// Resume is the single-use token that takes this seat back after a
	// dropped connection, within Grace seconds. Resumed is set on the
	// Welcome that answers a resume.
	Resume  string `msgpack:"resume,omitempty" json:"resume,omitempty"`
	Grace   int    `msgpack:"grace,omitempty" json:"grace,omitempty"`
	Resumed bool   `msgpack:"resumed,omitempty" json:"resumed,omitempty"`
	// Node and Region name the server that answered, in a cluster (empty
	// on a single node). A resume must go back to this node.
	Node   string `msgpack:"node,omitempty" json:"node,omitempty"`
	Region string `msgpack:"region,omitempty" json:"region,omitempty"`
	// ICE is TURN credentials for this session, as a join would give, on
	// a new session's Welcome (nil on a resumed one): a client about to join
	// can gather relay candidates during the join's round trip. Out of a
	// room they make allocations that reach nobody: TURN relays only between
	// members of one room.
	ICE *ICE `msgpack:"ice,omitempty" json:"ice,omitempty"`
}

// Error is the reply to a request that failed, or (id 0) a notice before the
// server closes the connection.
type Error struct {
	Code    string `msgpack:"code,omitempty" json:"code,omitempty"`
	Message string `msgpack:"msg,omitempty" json:"msg,omitempty"`
	// URL and Region come with room_elsewhere: the lobby WebSocket URL of
	// the node that owns the room (ws:// or wss://, path /ws) and its region.
	URL    string `msgpack:"url,omitempty" json:"url,omitempty"`
	Region string `msgpack:"region,omitempty" json:"region,omitempty"`
}

// OK acknowledges a request that has nothing else to say.
type OK struct{}

// CreateRoom makes the sender the host of a new room. Mode is a free label
// for the game mode, shown in the room list.
type CreateRoom struct {
	Name       string `msgpack:"name,omitempty" json:"name,omitempty"`
	MaxPlayers int    `msgpack:"maxPlayers,omitempty" json:"maxPlayers,omitempty"`
	Public     bool   `msgpack:"public,omitempty" json:"public,omitempty"`
	Password   string `msgpack:"password,omitempty" json:"password,omitempty"`
	Mode       string `msgpack:"mode,omitempty" json:"mode,omitempty"`
	// Migrate asks the server to promote a client when the host leaves,
	// instead of closing the room. Set it when the game can continue on a
	// new host (the netcode SDK can).
	Migrate bool `msgpack:"migrate,omitempty" json:"migrate,omitempty"`
	// Region, in a cluster, asks for the room on a node of that region:
	// a node elsewhere answers room_elsewhere with one that is. A region
	// with no live node is ignored (the room is made here).
	Region string `msgpack:"region,omitempty" json:"region,omitempty"`
	// MembersOnly admits verified players only (a valid Hello.Token);
	// others are refused with members_only. Only a verified player may
	// create such a room.
	MembersOnly bool `msgpack:"membersOnly,omitempty" json:"membersOnly,omitempty"`
}

// JoinRoom joins the room with this code as a client.
type JoinRoom struct {
	Code     string `msgpack:"code,omitempty" json:"code,omitempty"`
	Password string `msgpack:"password,omitempty" json:"password,omitempty"`
}

// LeaveRoom leaves the current room. If the host leaves, the room closes.
type LeaveRoom struct{}

// Player is one member of a room. ID is assigned by the server and unique
// within the room; it is what Signal.To and Signal.From name. Name is unique
// in the room too: the server adds " (2)", " (3)"... to a name already taken.
// Ping is the player's round trip to the server in milliseconds, rounded up
// (0: not measured yet).
type Player struct {
	ID    string `msgpack:"id,omitempty" json:"id,omitempty"`
	Name  string `msgpack:"name,omitempty" json:"name,omitempty"`
	Ready bool   `msgpack:"ready,omitempty" json:"ready,omitempty"`
	Ping  int    `msgpack:"ping,omitempty" json:"ping,omitempty"`
	// Away is set while the player's connection is down and its seat held.
	Away bool `msgpack:"away,omitempty" json:"away,omitempty"`
	// Verified is set when the player's hello carried a valid identity
	// token; UserID is then its sub, the game's stable user id, and Meta
	// the token's meta object as compact JSON (at most MaxMeta bytes), for
	// the host to read. All three are empty for an unverified player.
	Verified bool   `msgpack:"verified,omitempty" json:"verified,omitempty"`
	UserID   string `msgpack:"userId,omitempty" json:"userId,omitempty"`
	Meta     string `msgpack:"meta,omitempty" json:"meta,omitempty"`
}

// RoomInfo describes a room. Host is the player id of the host. Started is
// set once the host has started the game. Spectators is how many watch the
// room (spectate.go), so a host can stop producing a spectator stream nobody
// sees; the server sends roomUpdated when it changes, at most once per
// SpectatorCountInterval per room. Older clients skip the field (Decode
// ignores unknown fields).
type RoomInfo struct {
	Code        string `msgpack:"code,omitempty" json:"code,omitempty"`
	Name        string `msgpack:"name,omitempty" json:"name,omitempty"`
	MaxPlayers  int    `msgpack:"maxPlayers,omitempty" json:"maxPlayers,omitempty"`
	Public      bool   `msgpack:"public,omitempty" json:"public,omitempty"`
	HasPassword bool   `msgpack:"hasPassword,omitempty" json:"hasPassword,omitempty"`
	Host        string `msgpack:"host,omitempty" json:"host,omitempty"`
	Mode        string `msgpack:"mode,omitempty" json:"mode,omitempty"`
	Started     bool   `msgpack:"started,omitempty" json:"started,omitempty"`
	Migrate     bool   `msgpack:"migrate,omitempty" json:"migrate,omitempty"`
	Spectators  int    `msgpack:"spectators,omitempty" json:"spectators,omitempty"`
	// MembersOnly: the room admits verified players only (CreateRoom).
	MembersOnly bool `msgpack:"membersOnly,omitempty" json:"membersOnly,omitempty"`
}

// ICEServer has the shape of the WebRTC RTCIceServer dictionary.
type ICEServer struct {
	URLs       []string `msgpack:"urls,omitempty" json:"urls,omitempty"`
	Username   string   `msgpack:"username,omitempty" json:"username,omitempty"`
	Credential string   `msgpack:"credential,omitempty" json:"credential,omitempty"`
}

// ICE is what a peer needs to reach the embedded TURN: the servers and how
// long (seconds) the credential stays valid.
type ICE struct {
	Servers []ICEServer `msgpack:"servers,omitempty" json:"servers,omitempty"`
	TTL     int         `msgpack:"ttl,omitempty" json:"ttl,omitempty"`
}

// RoomJoined answers CreateRoom and JoinRoom. Players lists everyone in the
// room including the receiver, oldest first.
type RoomJoined struct {
	Room    RoomInfo `msgpack:"room" json:"room"`
	You     string   `msgpack:"you,omitempty" json:"you,omitempty"`
	Players []Player `msgpack:"players,omitempty" json:"players,omitempty"`
	ICE     ICE      `msgpack:"ice" json:"ice"`
}

// PlayerJoined tells the room's members that a player arrived.
type PlayerJoined struct {
	Player Player `msgpack:"player" json:"player"`
}

// PlayerLeft tells the room's members that a player is gone and why.
type PlayerLeft struct {
	ID     string `msgpack:"id,omitempty" json:"id,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// RoomClosed tells the remaining members that the room no longer exists.
type RoomClosed struct {
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// Signal carries WebRTC negotiation between a client and its room's host.
// The sender sets To; the server replaces From with the sender's real id, so
// From can be trusted by the receiver and is ignored when a client sets it.
type Signal struct {
	To        string `msgpack:"to,omitempty" json:"to,omitempty"`
	From      string `msgpack:"from,omitempty" json:"from,omitempty"`
	Kind      string `msgpack:"kind,omitempty" json:"kind,omitempty"`
	SDP       string `msgpack:"sdp,omitempty" json:"sdp,omitempty"`
	Candidate string `msgpack:"cand,omitempty" json:"cand,omitempty"`
	Mid       string `msgpack:"mid,omitempty" json:"mid,omitempty"`
}

// NewBody returns a pointer to a zero message for a type tag, or false for a
// tag this package does not know.
func NewBody(typ string) (any, bool) {
	if b, ok := newResumeBody(typ); ok {
		return b, true
	}
	if b, ok := newHostCheckBody(typ); ok {
		return b, true
	}
	if b, ok := newPartyBody(typ); ok {
		return b, true
	}
	if b, ok := newSpectateBody(typ); ok {
		return b, true
	}
	switch typ {
	case TypeHello:
		return &Hello{}, true
	case TypeWelcome:
		return &Welcome{}, true
	case TypeError:
		return &Error{}, true
	case TypeOK:
		return &OK{}, true
	case TypeCreateRoom:
		return &CreateRoom{}, true
	case TypeJoinRoom:
		return &JoinRoom{}, true
	case TypeRoomJoined:
		return &RoomJoined{}, true
	case TypeLeaveRoom:
		return &LeaveRoom{}, true
	case TypePlayerJoined:
		return &PlayerJoined{}, true
	case TypePlayerLeft:
		return &PlayerLeft{}, true
	case TypeRoomClosed:
		return &RoomClosed{}, true
	case TypeSignal:
		return &Signal{}, true
	}
	return newRoomBody(typ)
}
