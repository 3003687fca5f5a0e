package protocol

// The lobby's room features: names, ready state, room settings, kicks, the
// game start and chat. Host-only requests (UpdateRoom, Kick, StartGame) from
// anyone else are refused with CodeForbidden.
const (
	TypeSetName    = "setName"
	TypeSetReady   = "setReady"
	TypeUpdateRoom = "updateRoom"
	TypeKick       = "kick"
	TypeStartGame  = "startGame"
	TypeChat       = "chat"

	TypePlayerUpdated = "playerUpdated"
	TypeRoomUpdated   = "roomUpdated"
	TypeGameStarted   = "gameStarted"
	TypeChatMessage   = "chatMessage"
)

// SetName changes the sender's display name. In a room, the room hears it as
// PlayerUpdated (with a suffix if another member already has the name).
type SetName struct {
	Name string `msgpack:"name,omitempty" json:"name,omitempty"`
}

// SetReady marks the sender ready (or not) to start; the room hears it as
// PlayerUpdated.
type SetReady struct {
	Ready bool `msgpack:"ready,omitempty" json:"ready,omitempty"`
}

// UpdateRoom replaces the room's settings (host only). The password changes
// only when SetPassword is true, so a host can edit the rest without knowing
// it again; an empty Password with SetPassword removes it. The room hears
// RoomUpdated.
type UpdateRoom struct {
	Name        string `msgpack:"name,omitempty" json:"name,omitempty"`
	MaxPlayers  int    `msgpack:"maxPlayers,omitempty" json:"maxPlayers,omitempty"`
	Public      bool   `msgpack:"public,omitempty" json:"public,omitempty"`
	Mode        string `msgpack:"mode,omitempty" json:"mode,omitempty"`
	Password    string `msgpack:"password,omitempty" json:"password,omitempty"`
	SetPassword bool   `msgpack:"setPassword,omitempty" json:"setPassword,omitempty"`
}

// Kick removes a player from the room (host only) and bans its session and
// device from the room for the room's life. The kicked player gets
// RoomClosed{ReasonKicked}; the others PlayerLeft{ReasonKicked}.
type Kick struct {
	ID string `msgpack:"id,omitempty" json:"id,omitempty"`
	// Ban also bans the player's verified user id (any session, any name,
	// any device), and its later joinRoom answers CodeBanned rather than
	// CodeKicked. An unverified player is banned by session and device as
	// every kick does. Old servers ignore the field: a kick still bans the
	// session and device there.
	Ban bool `msgpack:"ban,omitempty" json:"ban,omitempty"`
}

// StartGame starts the game (host only) once every other member is ready.
// Every member, the host included, then gets GameStarted.
type StartGame struct{}

// Chat sends a line of text to the room. Every member, the sender included,
// gets it back as ChatMessage, in the server's order.
type Chat struct {
	Text string `msgpack:"text,omitempty" json:"text,omitempty"`
}

// PlayerUpdated tells the room a member's name, ready state or ping changed.
type PlayerUpdated struct {
	Player Player `msgpack:"player" json:"player"`
}

// RoomUpdated tells the room its settings changed.
type RoomUpdated struct {
	Room RoomInfo `msgpack:"room" json:"room"`
}

// GameStarted tells every member that the host started the game, in the
// room's game mode.
type GameStarted struct {
	Mode string `msgpack:"mode,omitempty" json:"mode,omitempty"`
}

// ChatMessage is one relayed chat line. From is the sender's player id, Name
// its display name when it spoke (it may have left since), At the server's
// time in Unix milliseconds. Text is plain text: render it as text, never as
// markup.
type ChatMessage struct {
	From string `msgpack:"from,omitempty" json:"from,omitempty"`
	Name string `msgpack:"name,omitempty" json:"name,omitempty"`
	Text string `msgpack:"text,omitempty" json:"text,omitempty"`
	At   int64  `msgpack:"at,omitempty" json:"at,omitempty"`
}

// newRoomBody is NewBody for the types of this file and directory.go.
func newRoomBody(typ string) (any, bool) {
	switch typ {
	case TypeSetName:
		return &SetName{}, true
	case TypeSetReady:
		return &SetReady{}, true
	case TypeUpdateRoom:
		return &UpdateRoom{}, true
	case TypeKick:
		return &Kick{}, true
	case TypeStartGame:
		return &StartGame{}, true
	case TypeChat:
		return &Chat{}, true
	case TypePlayerUpdated:
		return &PlayerUpdated{}, true
	case TypeRoomUpdated:
		return &RoomUpdated{}, true
	case TypeGameStarted:
		return &GameStarted{}, true
	case TypeChatMessage:
		return &ChatMessage{}, true
	case TypeWatchRooms:
		return &WatchRooms{}, true
	case TypeUnwatchRooms:
		return &UnwatchRooms{}, true
	case TypeRoomList:
		return &RoomList{}, true
	case TypeRoomListUpdate:
		return &RoomListUpdate{}, true
	}
	return nil, false
}
