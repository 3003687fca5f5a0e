package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/hostrelay/hostrelay/protocol"
)

// Everything a node reads from NATS is checked here before use: the
// buckets and subjects are shared with every node (and anyone else the
// NATS operator lets in), so an entry is bytes from the network like any
// other. Each is bounded by maxEntry (the buckets' MaxValueSize too).

// maxEntry bounds a node or room entry and a subject's payload.
const maxEntry = 4096

// errMalformed reports an entry or message that is not what a node writes.
var errMalformed = errors.New("cluster: malformed entry")

// parseNode reads a node's presence under key id.
func parseNode(id string, b []byte) (Node, error) {
	var n Node
	if len(b) > maxEntry {
		return n, fmt.Errorf("%w: %d bytes", errMalformed, len(b))
	}
	if err := json.Unmarshal(b, &n); err != nil {
		return n, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if n.ID != id || ValidateNodeID(id) != nil {
		return n, fmt.Errorf("%w: node id %q under key %q", errMalformed, n.ID, id)
	}
	if n.Region != "" && protocol.ValidateRegion(n.Region) != nil {
		return n, fmt.Errorf("%w: region %q", errMalformed, n.Region)
	}
	for _, u := range []string{n.URL, n.WS} {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") &&
			!strings.HasPrefix(u, "ws://") && !strings.HasPrefix(u, "wss://") {
			return n, fmt.Errorf("%w: url %q", errMalformed, u)
		}
	}
	if !strings.HasPrefix(n.WS, "ws") || strings.HasPrefix(n.URL, "ws") {
		return n, fmt.Errorf("%w: url %q / ws %q", errMalformed, n.URL, n.WS)
	}
	for _, s := range n.STUN {
		if !strings.HasPrefix(s, "stun:") {
			return n, fmt.Errorf("%w: stun %q", errMalformed, s)
		}
	}
	if len(n.STUN) == 0 {
		n.STUN = nil // "stun": [] and no "stun" are one thing (found by FuzzParseNode)
	}
	return n, nil
}

// parseEntry reads a room's entry under key code. A listing must be of
// that code and pass the protocol's own checks on what a room list shows.
func parseEntry(code string, b []byte) (entry, error) {
	var e entry
	if len(b) > maxEntry {
		return e, fmt.Errorf("%w: %d bytes", errMalformed, len(b))
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if err := ValidateNodeID(e.Node); err != nil {
		return e, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if c, ok := protocol.NormalizeRoomCode(code); !ok || c != code {
		return e, fmt.Errorf("%w: key %q is not a room code", errMalformed, code)
	}
	if e.Listing != nil {
		if !e.Public || e.Listing.Code != code {
			return e, fmt.Errorf("%w: listing of %q under %q", errMalformed, e.Listing.Code, code)
		}
		if err := validListing(e.Listing); err != nil {
			return e, fmt.Errorf("%w: %w", errMalformed, err)
		}
	}
	return e, nil
}

func validListing(s *protocol.RoomSummary) error {
	if err := protocol.ValidateText("name", s.Name, protocol.MaxRoomName); err != nil {
		return err
	}
	if s.Host != "" {
		if err := protocol.ValidateText("host", s.Host, protocol.MaxPlayerName+8); err != nil { // + " (16)" a duplicate name gets
			return err
		}
	}
	if s.Mode != "" {
		if err := protocol.ValidateText("mode", s.Mode, protocol.MaxMode); err != nil {
			return err
		}
	}
	if s.MaxPlayers < protocol.MinPlayers || s.MaxPlayers > protocol.MaxPlayers || s.Players < 0 || s.Players > s.MaxPlayers {
		return fmt.Errorf("players %d of %d", s.Players, s.MaxPlayers)
	}
	if s.Region != "" {
		return protocol.ValidateRegion(s.Region)
	}
	return nil
}

// parseJoinFail reads a failed-join event: "<node> <address>".
func parseJoinFail(b []byte) (string, netip.Addr, error) {
	if len(b) > maxEntry {
		return "", netip.Addr{}, fmt.Errorf("%w: %d bytes", errMalformed, len(b))
	}
	from, addr, ok := strings.Cut(string(b), " ")
	if !ok || ValidateNodeID(from) != nil {
		return "", netip.Addr{}, fmt.Errorf("%w: failed join %q", errMalformed, b)
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return "", netip.Addr{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return from, a, nil
}
