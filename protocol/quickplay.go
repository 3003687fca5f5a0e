package protocol

// Quick play and parties.
//
// QuickPlay puts the sender in the fullest public room of a game mode that
// has a free seat: not started, without a password, and with seats for the
// sender's whole party. With none, the server creates a public room of that
// mode with the sender as host. The reply is RoomJoined, as for JoinRoom;
// the choice is made under the server's lock, so concurrent quick-players
// fill one room before another is made.
//
// A party is a few friends who play together. One player creates it
// (CreateParty) and shares its code (the lobby app's link is /?party=CODE);
// friends join with JoinParty. Every member hears PartyUpdated on each
// change. When the leader sends QuickPlay the whole party is placed in one
// room, seats for all or a new room: the leader gets RoomJoined as the
// reply, every other member RoomJoined as an event (id 0). Only the leader
// may send QuickPlay while in a party (forbidden otherwise), and every member
// must be outside a room (already_in_room names who is not). The party
// outlives the game: its members can play again together.
//
// A member leaves with LeaveParty or when its session ends (a dropped
// connection whose seat is held stays a member until the seat expires).
// When the leader leaves, the longest-present member leads; the last member
// to leave ends the party, and its code stops working.
const (
	TypeQuickPlay    = "quickPlay"
	TypeCreateParty  = "createParty"
	TypeJoinParty    = "joinParty"
	TypeLeaveParty   = "leaveParty"
	TypePartyJoined  = "partyJoined"
	TypePartyUpdated = "partyUpdated"
)

// DefaultQuickPlayers is the size of a room QuickPlay creates when its
// MaxPlayers is 0.
const DefaultQuickPlayers = 8

// Error codes of parties.
const (
	CodePartyNotFound  = "party_not_found"  // no party with that code
	CodePartyFull      = "party_full"       // the party has MaxPartySize members
	CodeAlreadyInParty = "already_in_party" // leave your party first
	CodeNotInParty     = "not_in_party"     // LeaveParty outside a party
)

// QuickPlay asks for a seat in a room of Mode (see above). MaxPlayers and
// Migrate are the settings of the room made when none has a seat (0:
// DefaultQuickPlayers); they do not narrow the rooms chosen from.
type QuickPlay struct {
	Mode       string `msgpack:"mode,omitempty" json:"mode,omitempty"`
	MaxPlayers int    `msgpack:"maxPlayers,omitempty" json:"maxPlayers,omitempty"`
	Migrate    bool   `msgpack:"migrate,omitempty" json:"migrate,omitempty"`
}

// CreateParty makes a party with the sender as its leader and only member.
type CreateParty struct{}

// JoinParty joins the party with this code.
type JoinParty struct {
	Code string `msgpack:"code,omitempty" json:"code,omitempty"`
}

// LeaveParty leaves the sender's party.
type LeaveParty struct{}

// PartyMember is one member of a party. ID is unique within the party.
type PartyMember struct {
	ID   string `msgpack:"id,omitempty" json:"id,omitempty"`
	Name string `msgpack:"name,omitempty" json:"name,omitempty"`
}

// Party is a party as its members see it: Leader is a member id, Members
// oldest first.
type Party struct {
	Code    string        `msgpack:"code,omitempty" json:"code,omitempty"`
	Leader  string        `msgpack:"leader,omitempty" json:"leader,omitempty"`
	Members []PartyMember `msgpack:"members,omitempty" json:"members,omitempty"`
}

// PartyJoined answers CreateParty and JoinParty. You is the receiver's
// member id.
type PartyJoined struct {
	Party Party  `msgpack:"party" json:"party"`
	You   string `msgpack:"you,omitempty" json:"you,omitempty"`
}

// PartyUpdated tells every member the party's new state: someone joined or
// left, the leader changed, a member changed name.
type PartyUpdated struct {
	Party Party `msgpack:"party" json:"party"`
}

// Validate checks a QuickPlay request and normalises its mode.
func (m *QuickPlay) Validate() error {
	m.Mode = NormalizeName(m.Mode)
	if err := ValidateText("mode", m.Mode, MaxMode); err != nil {
		return err
	}
	if m.MaxPlayers != 0 && (m.MaxPlayers < MinPlayers || m.MaxPlayers > MaxPlayers) {
		return invalid("maxPlayers", "must be 0 (%d) or between %d and %d", DefaultQuickPlayers, MinPlayers, MaxPlayers)
	}
	return nil
}

// Validate checks a JoinParty request and normalises its code in place.
// Party codes have the form of room codes.
func (m *JoinParty) Validate() error {
	code, ok := NormalizeRoomCode(m.Code)
	if !ok {
		return invalid("code", "is not a party code (%d characters from %s)", RoomCodeLength, RoomCodeAlphabet)
	}
	m.Code = code
	return nil
}

func newPartyBody(typ string) (any, bool) {
	switch typ {
	case TypeQuickPlay:
		return &QuickPlay{}, true
	case TypeCreateParty:
		return &CreateParty{}, true
	case TypeJoinParty:
		return &JoinParty{}, true
	case TypeLeaveParty:
		return &LeaveParty{}, true
	case TypePartyJoined:
		return &PartyJoined{}, true
	case TypePartyUpdated:
		return &PartyUpdated{}, true
	}
	return nil, false
}
