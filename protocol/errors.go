package protocol

import "errors"

// Error codes carried in Error.Code. They are stable: clients switch on them
// and show their own words; Error.Message is for logs and developers.
const (
	CodeBadMessage         = "bad_message"         // not a well-formed envelope or body
	CodeUnknownType        = "unknown_type"        // a type this server does not handle
	CodeUnsupportedVersion = "unsupported_version" // Hello.Version is not Version
	CodeHelloRequired      = "hello_required"      // a request before Hello
	CodeInvalidArgument    = "invalid_argument"    // a field is out of range or malformed
	CodeRoomNotFound       = "room_not_found"
	CodeRoomFull           = "room_full"
	CodeWrongPassword      = "wrong_password"
	CodeAlreadyInRoom      = "already_in_room"
	CodeNotInRoom          = "not_in_room"
	CodePeerNotFound       = "peer_not_found" // signal to someone not in your room
	CodeForbidden          = "forbidden"      // e.g. client-to-client signalling, a host-only request from a client
	CodeKicked             = "kicked"         // the host kicked you from this room; you cannot rejoin it
	CodeNotReady           = "not_ready"      // StartGame while a player is not ready
	CodeNameRequired       = "name_required"  // CreateRoom or JoinRoom before a name was set
	CodeResumeFailed       = "resume_failed"  // the seat is gone or the token is not valid: send a plain hello
	CodeRateLimited        = "rate_limited"
	CodeServerFull         = "server_full" // the server's room limit is reached
	CodeInternal           = "internal"
	// CodeRoomElsewhere: in a cluster, the room (or the region asked for)
	// lives on another node. Error.URL is that node's lobby WebSocket URL:
	// connect there, say hello again and send the same request.
	CodeRoomElsewhere = "room_elsewhere"
	// CodeRoomLost: the node that held the room stopped; the room is gone
	// with it (a room cannot move between nodes: its TURN allocations live
	// on its node).
	CodeRoomLost = "room_lost"
	// CodeUnavailable: the cluster's directory, or the game's backend that
	// checks joins (a fail-closed join hook), cannot be reached just now;
	// the request changed nothing and may be tried again.
	CodeUnavailable = "unavailable"
	// Identity tokens (Hello.Token). CodeAuthRequired: this server wants a
	// token and the hello had none. CodeAuthInvalid: the token was refused;
	// Error.Message names the cause (expired, signature, audience, ...).
	// CodeAuthUnavailable: the keys to check it could not be fetched just
	// now; try again. CodeMembersOnly: the room takes verified players only.
	CodeAuthRequired    = "auth_required"
	CodeAuthInvalid     = "auth_invalid"
	CodeAuthUnavailable = "auth_unavailable"
	CodeMembersOnly     = "members_only"
	// CodeJoinRefused: the game's backend (the operator's join hook)
	// refused this join or create; Error.Message is its reason, at most 200
	// bytes, to show the player.
	CodeJoinRefused = "join_refused"
	// CodeBanned: a ban refuses you. From joinRoom: the host banned your
	// user (kick with ban). From hello, or unasked before the connection
	// closes: the server's operator banned your user id or network;
	// Error.Message says for how long and why, for the player.
	CodeBanned = "banned"
)

// Close reasons for RoomClosed and PlayerLeft.
const (
	ReasonLeft       = "left"         // the player asked to leave
	ReasonDisconnect = "disconnected" // the player's WebSocket closed
	ReasonHostLeft   = "host_left"    // the host left, so the room closed
	ReasonKicked     = "kicked"       // the host kicked the player
	// The server's operator removed the player (it may not rejoin the
	// room) or closed the whole room, from the admin page.
	ReasonOperatorKicked = "operator_kicked"
	ReasonOperatorClosed = "operator_closed"
	// ReasonRoomLost closes a room whose node left the cluster.
	ReasonRoomLost = "room_lost"
	// ReasonReplaced: the same verified user joined the room from another
	// session, which takes the seat (the older session is out of the room).
	ReasonReplaced = "replaced"
)

var (
	// ErrTooLarge reports a frame over MaxFrame.
	ErrTooLarge = errors.New("protocol: frame too large")
	// ErrMalformed reports bytes that are not one well-formed MessagePack value.
	ErrMalformed = errors.New("protocol: malformed msgpack")
	// ErrTooDeep reports nesting beyond MaxDepth.
	ErrTooDeep = errors.New("protocol: nesting too deep")
	// ErrNoType reports an envelope without a type tag.
	ErrNoType = errors.New("protocol: envelope has no type")
)
