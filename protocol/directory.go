package protocol

// The room list: a client watches the public rooms, gets them once, then
// only what changed.
const (
	TypeWatchRooms     = "watchRooms"
	TypeUnwatchRooms   = "unwatchRooms"
	TypeRoomList       = "roomList"
	TypeRoomListUpdate = "roomListUpdate"
)

// WatchRooms subscribes the sender to the public room list. The reply is a
// RoomList; RoomListUpdate events follow with the rest of a list too long
// for one frame, then with every change. Creating or joining a room ends the
// watch: players in a room do not need the list.
type WatchRooms struct{}

// UnwatchRooms ends the sender's watch.
type UnwatchRooms struct{}

// RoomSummary is one public room as the list shows it. Host is the host's
// display name (not a player id: watchers are not in the room).
type RoomSummary struct {
	Code        string `msgpack:"code,omitempty" json:"code,omitempty"`
	Name        string `msgpack:"name,omitempty" json:"name,omitempty"`
	Host        string `msgpack:"host,omitempty" json:"host,omitempty"`
	Players     int    `msgpack:"players,omitempty" json:"players,omitempty"`
	MaxPlayers  int    `msgpack:"maxPlayers,omitempty" json:"maxPlayers,omitempty"`
	Mode        string `msgpack:"mode,omitempty" json:"mode,omitempty"`
	HasPassword bool   `msgpack:"hasPassword,omitempty" json:"hasPassword,omitempty"`
	Started     bool   `msgpack:"started,omitempty" json:"started,omitempty"`
	// Region is the region of the node hosting the room (cluster only).
	Region string `msgpack:"region,omitempty" json:"region,omitempty"`
}

// RoomList answers WatchRooms with the first public rooms. It replaces
// whatever list the client had.
type RoomList struct {
	Rooms []RoomSummary `msgpack:"rooms,omitempty" json:"rooms,omitempty"`
}

// RoomListUpdate changes a watched list: Set adds or replaces rooms (by
// code), Del removes codes. Del applies before Set.
type RoomListUpdate struct {
	Set []RoomSummary `msgpack:"set,omitempty" json:"set,omitempty"`
	Del []string      `msgpack:"del,omitempty" json:"del,omitempty"`
}
