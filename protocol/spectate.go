package protocol

import "time"

// Spectators.
//
// A spectator watches a room without a seat: it never appears in Players,
// costs the host no upload, and may send nothing to the room. The host sends
// one spectator stream, SpectatorFrame messages over its lobby connection
// (no id: they are not acknowledged), and the server fans each frame out to
// every spectator of the room after the room's spectator delay (Spectating.
// DelayMs), so a spectator cannot tell a player what the other side is doing
// now.
//
// Frames are opaque to the server except for Key: a keyframe is a complete
// state a spectator can render from; the frames after it (Key false) are
// deltas against it. The server keeps the last released keyframe and the
// deltas since, and sends them first to a spectator who joins mid-game, so
// it sees the game at once (a host that sends a keyframe every second or
// more often gives a joiner a picture no older than the delay plus that).
// A spectator that reads too slowly loses frames: its backlog is dropped and
// it resumes at the next keyframe, since a delta without its predecessors
// is useless.
//
// Spectator frames sent to a spectator are outside the session's numbered
// frames (resume.go): a client does not count them in Hello.Received, and a
// resume replays none of them (the spectator resumes at the next keyframe).
//
// Spectate needs the room's code (and its password, if it has one), like
// JoinRoom, and spends the same failed-join budget on a wrong code; it needs
// no name, and the room may be full or started. A spectator that joins the
// room as a player (JoinRoom, CreateRoom, QuickPlay) stops watching.
const (
	TypeSpectate       = "spectate"
	TypeSpectating     = "spectating"
	TypeStopSpectating = "stopSpectating"
	TypeSpectatorFrame = "spectatorFrame"
	TypeSpectateEnded  = "spectateEnded"
)

// SpectatorCountInterval bounds how often a room's members hear that its
// spectator count (RoomInfo.Spectators) changed: changes within it are sent
// together, as one roomUpdated, at its end. A crowd arriving at once costs
// the room one event, not one per spectator.
const SpectatorCountInterval = 250 * time.Millisecond

// MaxSpectatorData is the most bytes of SpectatorFrame.Data any server takes;
// a server may be stricter (Spectating.MaxData says what it takes). It leaves
// MaxFrame room for the envelope.
const MaxSpectatorData = MaxFrame - 64

// Spectate asks to watch the room with this code.
type Spectate struct {
	Code     string `msgpack:"code,omitempty" json:"code,omitempty"`
	Password string `msgpack:"password,omitempty" json:"password,omitempty"`
}

// Spectating answers Spectate: the room as the room list shows it, the
// delay the server holds each frame for, and the largest frame data the
// server takes from a host (for the host's tools; spectators only read).
type Spectating struct {
	Room    RoomSummary `msgpack:"room" json:"room"`
	DelayMs int         `msgpack:"delayMs,omitempty" json:"delayMs,omitempty"`
	MaxData int         `msgpack:"maxData,omitempty" json:"maxData,omitempty"`
}

// StopSpectating stops watching; the reply is OK.
type StopSpectating struct{}

// SpectatorFrame is one frame of a room's spectator stream: sent by the host
// (only the host may), delivered to each spectator as an event after the
// delay. Data is the game's own encoding.
type SpectatorFrame struct {
	Key  bool   `msgpack:"key,omitempty" json:"key,omitempty"`
	Data []byte `msgpack:"data,omitempty" json:"data,omitempty"`
}

// SpectateEnded tells a spectator it no longer watches: the room closed
// (Reason as in RoomClosed).
type SpectateEnded struct {
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// Validate checks a Spectate request and normalises its code in place.
func (m *Spectate) Validate() error {
	code, ok := NormalizeRoomCode(m.Code)
	if !ok {
		return invalid("code", "is not a room code (%d characters from %s)", RoomCodeLength, RoomCodeAlphabet)
	}
	m.Code = code
	if len(m.Password) > MaxPassword {
		return invalid("password", "is longer than %d bytes", MaxPassword)
	}
	return nil
}

// Validate checks a SpectatorFrame's size against the protocol's limit.
func (m *SpectatorFrame) Validate() error {
	if len(m.Data) == 0 {
		return invalid("data", "is empty")
	}
	if len(m.Data) > MaxSpectatorData {
		return invalid("data", "is %d bytes, past %d", len(m.Data), MaxSpectatorData)
	}
	return nil
}

func newSpectateBody(typ string) (any, bool) {
	switch typ {
	case TypeSpectate:
		return &Spectate{}, true
	case TypeSpectating:
		return &Spectating{}, true
	case TypeStopSpectating:
		return &StopSpectating{}, true
	case TypeSpectatorFrame:
		return &SpectatorFrame{}, true
	case TypeSpectateEnded:
		return &SpectateEnded{}, true
	}
	return nil, false
}
