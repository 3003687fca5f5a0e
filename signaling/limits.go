package signaling

import (
	"fmt"

	"github.com/hostrelay/hostrelay/protocol"
)

// Size limits an operator may lower. The protocol's constants stay the
// maximum every client may rely on, so a hub may only be stricter: a client
// built against protocol.MaxSDP is never refused for size by a default
// server. The hub applies its own limits after the protocol's Validate,
// with the same invalid_argument reply.

const (
	// MinFrame is the smallest MaxFrame a hub accepts. Every request but an
	// offer or answer fits in it with each field at its protocol maximum
	// (TestMinFrameHoldsEveryRequest), so a lower frame limit refuses only
	// SDP, and that by MaxSDP with a reply rather than by a 1009 close.
	MinFrame = 2 << 10
	// SignalFrameOverhead is what an offer's frame holds besides its SDP
	// (envelope, keys, kind, the peer's id), with room to spare. MaxSDP
	// plus this must fit MaxFrame, or an SDP under its limit could still
	// close the connection for the frame's size.
	SignalFrameOverhead = 256
)

// validateLimits checks the size limits: each between 1 and the protocol's.
func (c Config) validateLimits() []error {
	var errs []error
	for _, l := range []struct {
		name   string
		v, max int
	}{
		{"MaxFrame", c.MaxFrame, protocol.MaxFrame},
		{"MaxSDP", c.MaxSDP, protocol.MaxSDP},
		{"MaxCandidate", c.MaxCandidate, protocol.MaxCandidate},
		{"MaxChatText", c.MaxChatText, protocol.MaxChatText},
		{"MaxRoomName", c.MaxRoomName, protocol.MaxRoomName},
	} {
		if l.v < 1 || l.v > l.max {
			errs = append(errs, fmt.Errorf("%s %d: must be between 1 and the protocol's %d", l.name, l.v, l.max))
		}
	}
	if c.MaxFrame > 0 && c.MaxFrame < MinFrame {
		errs = append(errs, fmt.Errorf("MaxFrame %d: must be at least %d", c.MaxFrame, MinFrame))
	}
	if frame, sdp := c.MaxFrame, c.MaxSDP; sdp+SignalFrameOverhead > frame {
		errs = append(errs, fmt.Errorf("MaxSDP %d: with %d bytes for the rest of the signal it must fit MaxFrame %d (at most %d)",
			sdp, SignalFrameOverhead, frame, frame-SignalFrameOverhead))
	}
	return errs
}

// The hub's own limits, applied after the protocol's Validate with the
// protocol's counting and wording: only the number differs. Text is scanned
// again only when the hub is stricter than the protocol.

func (c Config) checkRoomName(name string) error {
	if c.MaxRoomName >= protocol.MaxRoomName {
		return nil
	}
	return protocol.ValidateText("name", name, c.MaxRoomName)
}

func (c Config) checkChat(text string) error {
	if c.MaxChatText >= protocol.MaxChatText {
		return nil
	}
	return protocol.ValidateText("text", text, c.MaxChatText)
}

func (c Config) checkSignal(m *protocol.Signal) error {
	if err := protocol.ValidateBytes("sdp", m.SDP, c.MaxSDP); err != nil {
		return err
	}
	return protocol.ValidateBytes("cand", m.Candidate, c.MaxCandidate)
}
