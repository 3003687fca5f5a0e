package client

import (
	"errors"
	"fmt"
)

// Error is a request the server refused. Code is one of protocol's Code*
// constants; switch on it, show Message to developers.
type Error struct {
	Code    string
	Message string
	// URL and Region come with room_elsewhere (the Lobby follows it
	// itself; a caller sees it only past maxMoves).
	URL    string
	Region string
}

func (e *Error) Error() string {
	return fmt.Sprintf("client: server refused: %s: %s", e.Code, e.Message)
}

var (
	// ErrClosed reports a call on a lobby or room that has closed.
	ErrClosed = errors.New("client: closed")
	// ErrNoPeer reports a send to a player with no open connection.
	ErrNoPeer = errors.New("client: no open connection to that player")
	// ErrRoomClosed reports that the host left and the room is gone.
	ErrRoomClosed = errors.New("client: room closed")
	// ErrHostReplaced reports that we hosted the room, did not answer the
	// server's check in time, and another member took it over.
	ErrHostReplaced = errors.New("client: replaced as host for not answering")
)

// IsCode reports whether err is a server refusal with this code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
