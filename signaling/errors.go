package signaling

import (
	"errors"

	"github.com/hostrelay/hostrelay/protocol"
)

var (
	// ErrSlowConsumer is why a session whose outgoing queue overflowed was closed.
	ErrSlowConsumer = errors.New("signaling: outgoing queue full (slow consumer)")
	// ErrClosed reports a send to a session that has already gone.
	ErrClosed = errors.New("signaling: session closed")
)

// replyError is a failed request: the code and message go back to the client
// in an Error frame. It is an error so handlers can return it like any other.
type replyError struct {
	code string
	msg  string
	// url and region say where to go, with room_elsewhere.
	url, region string
}

func (e *replyError) Error() string { return "signaling: " + e.code + ": " + e.msg }

func fail(code, msg string) error { return &replyError{code: code, msg: msg} }

// asReply maps any handler error to the Error frame the client sees. Errors
// that are not replyErrors are our bugs: the client gets "internal" and the
// details stay in the log.
func asReply(err error) protocol.Error {
	var re *replyError
	if errors.As(err, &re) {
		return protocol.Error{Code: re.code, Message: re.msg, URL: re.url, Region: re.region}
	}
	var ve *protocol.ValidationError
	if errors.As(err, &ve) {
		return protocol.Error{Code: protocol.CodeInvalidArgument, Message: ve.Field + " " + ve.Reason}
	}
	if errors.Is(err, protocol.ErrMalformed) || errors.Is(err, protocol.ErrTooDeep) ||
		errors.Is(err, protocol.ErrTooLarge) || errors.Is(err, protocol.ErrNoType) {
		return protocol.Error{Code: protocol.CodeBadMessage, Message: err.Error()}
	}
	return protocol.Error{Code: protocol.CodeInternal, Message: "internal error"}
}
