package signaling

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// Cluster is the rest of a multi-node deployment as the lobby needs it:
// the methods the lobby calls and nothing more, in the lobby's own types,
// so *cluster.Cluster satisfies it as it is (asserted there) with no
// adapter between them. A nil Config.Cluster is a single node: every
// lookup is local, as it always was.
//
// A room lives on the node that made it. Every code is claimed cluster-wide
// before a room takes it; a request naming a room of another node is
// answered room_elsewhere with that node's URL (the client goes there and
// asks again), a room of a node that died room_lost; other nodes' public
// rooms are listed here beside this node's.
type Cluster interface {
	// Self is this node's id and region.
	Self() (node, region string)
	// ClaimRoom takes code for this node cluster-wide; taken reports that
	// another room holds it.
	ClaimRoom(ctx context.Context, code string) (taken bool, err error)
	// RoomChanged says a local room's listing changed, the room closed, or a
	// claimed code went unused. Called under Hub.mu: it must not block.
	RoomChanged(code string)
	// Locate finds a room this node does not have.
	Locate(ctx context.Context, code string) (Location, error)
	// LocateNode says where a node is (a resume token names its node).
	LocateNode(node string) Location
	// RegionNode is where a room in region belongs: ok false when no live
	// node is in region, Location{} (no URL) when this node is.
	RegionNode(region string) (loc Location, ok bool)
	// JoinFailed shares a failed join of addr with the other nodes.
	JoinFailed(addr netip.Addr)
	// Origins are the hosts of every node's public URL (WebSocket origins
	// to allow: a page from one node may open another's lobby).
	Origins() []string
}

// Location is where a room or node is: on another live node (URL, its
// lobby WebSocket URL), lost with its node, or nowhere (zero).
type Location struct {
	URL    string
	Region string
	Lost   bool
	// Base is the node's public base URL (https://eu1.example.com), where
	// a share link is sent on to.
	Base string
}

// elsewhere is the reply that sends a client to loc, or says the room is
// lost; nil when loc is nowhere.
func elsewhere(what, code string, loc Location) error {
	switch {
	case loc.Lost:
		return fail(protocol.CodeRoomLost, what+" "+code+" was lost: the server holding it stopped")
	case loc.URL != "":
		return &replyError{code: protocol.CodeRoomElsewhere, msg: what + " " + code + " is on another server; connect there",
			url: loc.URL, region: loc.Region}
	}
	return nil
}

// clusterCallTimeout bounds one wait for the cluster in a request.
const clusterCallTimeout = 3 * time.Second

var errUnavailable = fail(protocol.CodeUnavailable, "the cluster directory cannot be reached just now; try again")

// maxCodeClaims bounds the codes tried when claiming: with 30^7 codes a
// second collision means something other than chance.
const maxCodeClaims = 4

// claimCode draws a code no room in the cluster holds and claims it for
// this node; "" on a single node, where newRoomLocked draws under the lock.
// Outside Hub.mu: it waits for NATS.
func (h *Hub) claimCode() (string, error) {
	c := h.cfg.Cluster
	if c == nil {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterCallTimeout)
	defer cancel()
	for range maxCodeClaims {
		code, err := newRoomCode()
		if err != nil {
			return "", err
		}
		taken, err := c.ClaimRoom(ctx, code)
		if err != nil {
			h.log.Warn("room code claim failed", "room", code, "err", err)
			return "", errUnavailable
		}
		if !taken {
			return code, nil
		}
	}
	return "", errUnavailable
}

// releaseCode gives back a claimed code no room took.
func (h *Hub) releaseCode(code string) {
	if code != "" && h.cfg.Cluster != nil {
		h.cfg.Cluster.RoomChanged(code)
	}
}

// Found is where a room code led (FindRoom): to a room on this node, to
// another node (Location.URL), to a room lost with its node, or nowhere
// (the zero Found).
type Found struct {
	Here bool
	Location
}

// errJoinFailuresSpent refuses a lookup from an address whose failed-join
// budget is spent.
var errJoinFailuresSpent = fail(protocol.CodeRateLimited, "too many failed joins from your network; wait a minute")

// FindRoom finds the room with this code for remote: on this node or, in a
// cluster, in the directory. It is the one place a code is looked up for a
// join, a spectate or a share link, so the failed-join budget is spent in
// one place: a token is taken before the lookup (refused rate_limited when
// none is left) and given back when the code leads somewhere (here,
// elsewhere or lost), so concurrent guesses from one address reach the
// directory at most as many times as the budget has tokens. A code that is
// malformed or leads nowhere spends the token here and on every other node.
func (h *Hub) FindRoom(ctx context.Context, remote netip.Addr, code string) (Found, error) {
	ctx, cancel := context.WithTimeout(ctx, clusterCallTimeout)
	defer cancel()
	tok, ok := h.joinFailures.hold(ctx, remote, h.cfg.Now)
	if !ok {
		h.counters.limited(limitFailedJoinsPerIP)
		return Found{}, errJoinFailuresSpent
	}
	f, err := h.lookUp(ctx, code)
	switch {
	case err != nil:
		// The lookup told nothing: not the guesser's failure.
		tok.settle(true, h.cfg.Now())
		return Found{}, err
	case f == Found{}:
		tok.settle(false, h.cfg.Now())
		if h.cfg.Cluster != nil {
			h.cfg.Cluster.JoinFailed(remote)
		}
	default:
		tok.settle(true, h.cfg.Now())
	}
	return f, nil
}

// lookUp is FindRoom's lookup, with no budget.
func (h *Hub) lookUp(ctx context.Context, code string) (Found, error) {
	code, ok := protocol.NormalizeRoomCode(code)
	if !ok {
		return Found{}, nil
	}
	if h.HasRoom(code) {
		return Found{Here: true}, nil
	}
	c := h.cfg.Cluster
	if c == nil {
		return Found{}, nil
	}
	loc, err := c.Locate(ctx, code)
	if err != nil {
		h.log.Warn("room lookup failed", "room", code, "err", err)
		return Found{}, errUnavailable
	}
	return Found{Location: loc}, nil
}

// HasRoom reports whether a room with this code is on this node.
func (h *Hub) HasRoom(code string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.rooms[code]
	return ok
}

// spendJoinFailure spends a failed join of remote here and on every other
// node: a guesser gets one budget, however many nodes it asks. The budget
// has a lock of its own; callers that check it first hold Hub.mu.
func (h *Hub) spendJoinFailure(remote netip.Addr) {
	h.joinFailures.spend(remote, h.cfg.Now())
	if h.cfg.Cluster != nil {
		h.cfg.Cluster.JoinFailed(remote)
	}
}

// SpendJoinFailure spends a failed join another node saw (cluster.Lobby).
func (h *Hub) SpendJoinFailure(addr netip.Addr) {
	h.joinFailures.spend(addr, h.cfg.Now())
}

// RoomListing is a local room as the directory holds it (cluster.Lobby).
func (h *Hub) RoomListing(code string) (sum protocol.RoomSummary, public, ok bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	r, ok := h.rooms[code]
	if !ok {
		return protocol.RoomSummary{}, false, false
	}
	return h.summaryLocked(r), r.public, true
}

// LocalRooms lists this node's room codes (cluster.Lobby).
func (h *Hub) LocalRooms() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]string, 0, len(h.rooms))
	for code := range h.rooms {
		out = append(out, code)
	}
	return out
}

// RoomCount counts this node's rooms (cluster.Lobby).
func (h *Hub) RoomCount() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.rooms)
}

// RemoteRoomSet lists another node's public room here (cluster.Lobby).
func (h *Hub) RemoteRoomSet(sum protocol.RoomSummary) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, local := h.rooms[sum.Code]; local {
		return
	}
	r := h.remote[sum.Code]
	if r == nil {
		h.dir.nextSeq++
		r = &room{code: sum.Code, seq: h.dir.nextSeq, created: h.cfg.Now(), public: true}
		h.remote[sum.Code] = r
	}
	r.listing = &sum
	h.roomChangedLocked(r)
}

// RemoteRoomGone takes another node's room off the list (cluster.Lobby).
func (h *Hub) RemoteRoomGone(code string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.remote[code]
	if r == nil {
		return
	}
	delete(h.remote, code)
	h.roomChangedLocked(r)
}

// listedLocked is the room with this code that the room list may show:
// this node's or another's.
func (h *Hub) listedLocked(code string) (*room, bool) {
	if r, ok := h.rooms[code]; ok {
		return r, true
	}
	r, ok := h.remote[code]
	return r, ok
}

// summaryLocked is r as the room list shows it, with its node's region.
func (h *Hub) summaryLocked(r *room) protocol.RoomSummary {
	if r.listing != nil {
		return *r.listing
	}
	sum := r.summary()
	if h.cfg.Cluster != nil {
		_, sum.Region = h.cfg.Cluster.Self()
	}
	return sum
}

// allowedOrigins are the configured origins and, in a cluster, every node's.
func (h *Hub) allowedOrigins() []string {
	if h.cfg.Cluster == nil {
		return h.cfg.OriginPatterns
	}
	return append(append([]string(nil), h.cfg.OriginPatterns...), h.cfg.Cluster.Origins()...)
}

// resumeToken draws a resume token. In a cluster it names this node, so a
// resume sent to another node can be sent on (or told room_lost).
func (h *Hub) resumeToken() string {
	if h.cfg.Cluster == nil {
		return newResumeToken()
	}
	node, _ := h.cfg.Cluster.Self()
	return "rs_" + node + "_" + strings.TrimPrefix(newResumeToken(), "rs_")
}

// resumeElsewhere is the answer to a resume token this node does not hold:
// the token's node, if another, live or lost; nil to refuse as usual.
func (h *Hub) resumeElsewhere(token string) error {
	c := h.cfg.Cluster
	if c == nil {
		return nil
	}
	rest, ok := strings.CutPrefix(token, "rs_")
	node, _, ok2 := strings.Cut(rest, "_")
	if self, _ := c.Self(); !ok || !ok2 || node == self {
		return nil
	}
	loc := c.LocateNode(node)
	if loc.Lost {
		return fail(protocol.CodeRoomLost, "the server holding your seat stopped; your room was lost with it")
	}
	if loc.URL != "" {
		return &replyError{code: protocol.CodeRoomElsewhere, msg: "your seat is held on another server; resume there",
			url: loc.URL, region: loc.Region}
	}
	return nil
}

// isElsewhere reports an error that sends the client to another node.
func isElsewhere(err error) bool {
	var re *replyError
	return errors.As(err, &re) && re.code == protocol.CodeRoomElsewhere
}

// regionElsewhere sends a create asking for another region to a node
// there; nil when this node is in it, region is empty, or no live node is
// in it (the room is made here rather than refused).
func (h *Hub) regionElsewhere(region string) error {
	c := h.cfg.Cluster
	if c == nil || region == "" {
		return nil
	}
	loc, ok := c.RegionNode(region)
	if !ok || loc.URL == "" {
		return nil
	}
	return &replyError{code: protocol.CodeRoomElsewhere, msg: "region " + region + " is served by another server; create the room there",
		url: loc.URL, region: loc.Region}
}

// self is this node's id and region; empty on a single node.
func (h *Hub) self() (node, region string) {
	if h.cfg.Cluster == nil {
		return "", ""
	}
	return h.cfg.Cluster.Self()
}
