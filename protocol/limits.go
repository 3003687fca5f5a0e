package protocol

import "time"

// Version is the protocol version a client announces in Hello. The server
// refuses other versions with CodeUnsupportedVersion so that a stale tab gets
// a clear message instead of undefined behaviour.
const Version = 1

// Limits shared by the server and every client. They are part of the
// protocol: a client that respects them is never refused for size by a
// server on its defaults. An operator may lower MaxFrame, MaxSDP,
// MaxCandidate, MaxChatText and MaxRoomName (signaling.Config), never raise
// them; Welcome.MaxFrame carries the frame limit in force.
const (
	// MaxFrame is the largest WebSocket frame either side may send. An SDP
	// offer for data channels only is about 1 KiB; the rest is headroom.
	MaxFrame = 16 << 10
	// MaxDepth bounds container nesting in a frame. Client messages need 3
	// (envelope, body, list); anything deeper is an attack, not a message.
	MaxDepth = 8

	MaxResumeToken = 64   // bytes
	MaxPlayerName  = 32   // runes
	MaxRoomName    = 48   // runes
	MaxPassword    = 64   // bytes
	MaxSDP         = 8192 // bytes
	MaxCandidate   = 512  // bytes
	MaxMid         = 32   // bytes
	MinPlayers     = 2
	MaxPlayers     = 16
	RoomCodeLength = 7
	MaxMode        = 24  // runes of a game mode label
	MaxChatText    = 200 // runes of one chat line
	MinDevice      = 16  // bytes of Hello.Device
	MaxDevice      = 64  // bytes of Hello.Device
	MaxPartySize   = 4   // members of one party: a few friends, who fit any room of 4 or more
	MaxRegion      = 32  // bytes of a region label: lower-case letters, digits, '-', '_', '.'
	// Identity (Hello.Token, Player.UserID, Player.Meta): a server's
	// -auth-max-token may only be lower than MaxAuthToken.
	MaxAuthToken = 4096 // bytes of Hello.Token
	MaxUserID    = 128  // bytes of Player.UserID: the token's sub
	MaxMeta      = 512  // bytes of Player.Meta: the token's meta object as compact JSON
)

// RoomCodeAlphabet leaves out 0, O, 1, I, L (read alike) and U (accidental
// words). 30 symbols over 7 places give 30^7 ≈ 2^34.3 codes.
const RoomCodeAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"

// HandshakeTimeout is how long the server waits for Hello after the
// WebSocket upgrade before closing the connection.
const HandshakeTimeout = 10 * time.Second
