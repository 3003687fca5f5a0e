package client

import "github.com/hostrelay/hostrelay/protocol"

// Channel names one of the two data channels between a client and its host.
type Channel uint8

const (
	// Game is negotiated id 0, label "game": unordered, no retransmissions.
	// For inputs and snapshots: a late packet is worth less than a new one.
	Game Channel = 0
	// Events is negotiated id 1, label "events": reliable and ordered.
	Events Channel = 1
)

func (c Channel) String() string {
	if c == Game {
		return "game"
	}
	return "events"
}

// Event is one of PlayerJoined, PlayerLeft, PlayerUpdated, RoomUpdated,
// GameStarted, ChatMessage, HostChanged, Resumed, PeerOpen, PeerClosed,
// RoomClosed.
type Event interface{ event() }

// PlayerJoined: a player arrived in the room.
type PlayerJoined struct{ Player protocol.Player }

// PlayerLeft: a player left; Reason is protocol.ReasonLeft or ReasonDisconnect.
type PlayerLeft struct{ ID, Reason string }

// PeerOpen: both data channels to this player are open.
type PeerOpen struct{ ID string }

// PeerClosed: the connection to this player ended; Err says why if it failed.
type PeerClosed struct {
	ID  string
	Err error
}

// HostChanged: the host left a migrating room and Host took over. A client
// reconnects to the new host by itself; if Host is you, clients will offer.
type HostChanged struct{ Host, Previous string }

// Resumed: the lobby connection dropped and the session took its held seat
// back; no event was lost.
type Resumed struct{}

// RoomClosed: the room is gone (the host left, or the lobby connection
// closed). It is the last event.
type RoomClosed struct{ Reason string }

func (PlayerJoined) event() {}
func (PlayerLeft) event()   {}
func (PeerOpen) event()     {}
func (PeerClosed) event()   {}
func (RoomClosed) event()   {}
func (HostChanged) event()  {}
func (Resumed) event()      {}

// Message is one data-channel message from a peer.
type Message struct {
	From    string
	Channel Channel
	Data    []byte
}
