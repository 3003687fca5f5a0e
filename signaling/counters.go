package signaling

import (
	"sync/atomic"

	"github.com/hostrelay/hostrelay/protocol"
)

// Counters for metrics: totals since the hub started, each one atomic add
// where it happens (a lobby request, never a game packet), read by Metrics.
// Every label they are reported under comes from a fixed table here, never
// from what a client sent: a request type or error code that is not in the
// table is counted as "other".

// OtherLabel is the metric label of a request type or code outside the
// known ones.
const OtherLabel = "other"

// rateLimit is one of the lobby's rate limits.
type rateLimit uint8

const (
	limitConnsPerIP         rateLimit = iota // an upgrade refused 429: MaxConnsPerIP
	limitJoinsPerIP                          // JoinsPerMinute
	limitFailedJoinsPerIP                    // the failed-join budget (JoinFailureBurst)
	limitRoomsPerSession                     // RoomsPerMinute
	limitMessagesPerSession                  // MessagesPerSecond
	limitSignalsPerSession                   // SignalsPerSecond
	limitChatPerSession                      // ChatPerSecond
	limitFramesBeforeHello                   // FramesBeforeHello
	limitSpectatorFrames                     // SpectatorFramesPerSecond and SpectatorBufferBytes
	limitFramesPerMessage                    // MaxFramesPerMessage
	limitFloodHold                           // an upgrade refused while its network is held after a flood (floodpenalty.go)
	limitFloodHoldAccept                     // a connection closed at accept while its network is held and was told (RefuseAtAccept)
	limitHostReports                         // HostReportEvery (hostcheck.go)
	rateLimits                               // how many there are
)

// rateLimitNames are the rate limits' labels, by rateLimit.
var rateLimitNames = [rateLimits]string{ //nolint:gochecknoglobals // a read-only table
	limitConnsPerIP:         "connections_per_ip",
	limitJoinsPerIP:         "joins_per_ip",
	limitFailedJoinsPerIP:   "failed_joins_per_ip",
	limitRoomsPerSession:    "rooms_per_session",
	limitMessagesPerSession: "messages_per_session",
	limitSignalsPerSession:  "signals_per_session",
	limitChatPerSession:     "chat_per_session",
	limitFramesBeforeHello:  "frames_before_hello",
	limitSpectatorFrames:    "spectator_frames_per_room",
	limitFramesPerMessage:   "frames_per_message",
	limitFloodHold:          "flood_hold",
	limitFloodHoldAccept:    "flood_hold_accept",
	limitHostReports:        "host_reports_per_member",
}

// RateLimits are the labels Metrics.RateLimited counts by.
func RateLimits() []string { return append([]string(nil), rateLimitNames[:]...) }

// refusalRequests are the request types refusals are counted by; the last
// slot counts every other type, and frames refused before their type was
// read.
var refusalRequests = [...]string{ //nolint:gochecknoglobals // a read-only table
	protocol.TypeHello, protocol.TypeCreateRoom, protocol.TypeJoinRoom, protocol.TypeLeaveRoom,
	protocol.TypeSignal, protocol.TypeSetName, protocol.TypeSetReady, protocol.TypeUpdateRoom,
	protocol.TypeKick, protocol.TypeStartGame, protocol.TypeChat, protocol.TypeWatchRooms,
	protocol.TypeUnwatchRooms, protocol.TypeQuickPlay, protocol.TypeCreateParty, protocol.TypeJoinParty,
	protocol.TypeLeaveParty, protocol.TypeSpectate, protocol.TypeStopSpectating, protocol.TypeSpectatorFrame,
	OtherLabel,
}

// refusalCodes are the protocol's error codes; the last slot counts any
// code not listed here.
var refusalCodes = [...]string{ //nolint:gochecknoglobals // a read-only table
	protocol.CodeBadMessage, protocol.CodeUnknownType, protocol.CodeUnsupportedVersion,
	protocol.CodeHelloRequired, protocol.CodeInvalidArgument, protocol.CodeRoomNotFound,
	protocol.CodeRoomFull, protocol.CodeWrongPassword, protocol.CodeAlreadyInRoom,
	protocol.CodeNotInRoom, protocol.CodePeerNotFound, protocol.CodeForbidden, protocol.CodeKicked,
	protocol.CodeNotReady, protocol.CodeNameRequired, protocol.CodeResumeFailed,
	protocol.CodeRateLimited, protocol.CodeServerFull, protocol.CodeInternal, protocol.CodePartyNotFound,
	protocol.CodePartyFull, protocol.CodeAlreadyInParty, protocol.CodeNotInParty,
	protocol.CodeRoomElsewhere, protocol.CodeRoomLost, protocol.CodeUnavailable, protocol.CodeJoinRefused,
	protocol.CodeAuthRequired, protocol.CodeAuthInvalid, protocol.CodeAuthUnavailable, protocol.CodeMembersOnly, OtherLabel,
}

// labelIndex is the index of v in table, or of its last entry (OtherLabel).
func labelIndex(table []string, v string) int {
	for i, t := range table[:len(table)-1] {
		if t == v {
			return i
		}
	}
	return len(table) - 1
}

// counters are the hub's totals. The zero value is ready.
type counters struct {
	roomsCreated   atomic.Uint64
	roomsClosed    atomic.Uint64
	joins          atomic.Uint64
	hostMigrations atomic.Uint64
	// Frozen hosts (hostcheck.go): checks sent, checks the host answered
	// (a vote refused), hosts replaced for not answering.
	hostChecks         atomic.Uint64
	freezeVotesRefused atomic.Uint64
	freezeMigrations   atomic.Uint64
	resumes            atomic.Uint64
	resumesFailed      atomic.Uint64
	originsRefused     atomic.Uint64
	// Spectators: watches begun, frames taken from hosts, frames queued to
	// spectators, and frames a spectator lost (slow, or away).
	spectates              atomic.Uint64
	spectatorFramesIn      atomic.Uint64
	spectatorFramesOut     atomic.Uint64
	spectatorFramesDropped atomic.Uint64
	// The spectator budget: frames from hosts not taken, and frames held
	// dropped, to stay within it.
	spectatorBudgetRefused atomic.Uint64
	spectatorBudgetDropped atomic.Uint64
	rateLimited            [rateLimits]atomic.Uint64
	refusals               [len(refusalRequests)][len(refusalCodes)]atomic.Uint64
}

func (c *counters) limited(l rateLimit) { c.rateLimited[l].Add(1) }

// refused counts a request of type request answered with an Error of code.
func (c *counters) refused(request, code string) {
	c.refusals[labelIndex(refusalRequests[:], request)][labelIndex(refusalCodes[:], code)].Add(1)
}

// Refusal is how many requests of one type were answered with one error code.
type Refusal struct {
	Request string // a protocol request type, or OtherLabel
	Code    string // a protocol error code, or OtherLabel
	Count   uint64
}

// Metrics is the lobby as monitoring sees it: how many of each thing there
// are now, and totals since the hub started.
type Metrics struct {
	Sessions     int // lobby sessions, held seats included
	SessionsAway int // held seats: sessions whose connection dropped, waiting for a resume
	RoomsOpen    int // rooms whose game has not started
	RoomsStarted int

	RoomsCreated   uint64
	RoomsClosed    uint64 // closed because their host left (and no member could take over)
	Joins          uint64 // players who joined a room (not counting its creator)
	HostMigrations uint64 // a member made host when the host left (frozen hosts included)
	// Frozen hosts: hostChecks sent after a majority reported the host
	// silent, checks the host answered (the vote refused), and hosts
	// replaced for not answering.
	HostChecks         uint64
	FreezeVotesRefused uint64
	FreezeMigrations   uint64
	Resumes            uint64 // sessions taken back on a new connection
	ResumesFailed      uint64 // resume attempts refused (resume_failed)
	OriginsRefused     uint64 // browser connections from an origin not allowed, closed with OriginRefusedReason
	// Spectators watching now, watches begun, spectator frames taken from
	// hosts, queued to spectators, and dropped (a slow or away spectator).
	Spectators             int
	Spectates              uint64
	SpectatorFramesIn      uint64
	SpectatorFramesOut     uint64
	SpectatorFramesDropped uint64
	// SpectatorBufferBytes is the memory of the spectator frames every
	// room holds now (for the delay, and for joiners), within
	// Config.SpectatorBudgetBytes; SpectatorBudgetRefused counts host
	// frames not taken and SpectatorBudgetDropped frames held and dropped
	// to stay within it.
	SpectatorBufferBytes   int
	SpectatorBudgetRefused uint64
	SpectatorBudgetDropped uint64
	// RateLimited counts requests and connections refused by each rate
	// limit, by the labels RateLimits returns (every one present).
	RateLimited map[string]uint64
	// Refusals are the requests answered with an Error, by type and code;
	// only pairs seen so far are listed.
	Refusals []Refusal
}

// Metrics counts what is live now and reads the totals.
func (h *Hub) Metrics() Metrics {
	var m Metrics
	h.mu.RLock()
	m.Sessions = len(h.sessions)
	for _, s := range h.sessions {
		if s.away {
			m.SessionsAway++
		}
	}
	for _, r := range h.rooms {
		m.Spectators += r.spectators
		if r.started {
			m.RoomsStarted++
		} else {
			m.RoomsOpen++
		}
	}
	h.mu.RUnlock()

	c := &h.counters
	m.RoomsCreated, m.RoomsClosed = c.roomsCreated.Load(), c.roomsClosed.Load()
	m.Joins, m.HostMigrations = c.joins.Load(), c.hostMigrations.Load()
	m.Resumes, m.ResumesFailed = c.resumes.Load(), c.resumesFailed.Load()
	m.OriginsRefused = c.originsRefused.Load()
	m.HostChecks, m.FreezeVotesRefused, m.FreezeMigrations = c.hostChecks.Load(), c.freezeVotesRefused.Load(), c.freezeMigrations.Load()
	m.Spectates, m.SpectatorFramesIn = c.spectates.Load(), c.spectatorFramesIn.Load()
	m.SpectatorFramesOut, m.SpectatorFramesDropped = c.spectatorFramesOut.Load(), c.spectatorFramesDropped.Load()
	m.SpectatorBufferBytes = h.spectators.bytes()
	m.SpectatorBudgetRefused, m.SpectatorBudgetDropped = c.spectatorBudgetRefused.Load(), c.spectatorBudgetDropped.Load()
	m.RateLimited = make(map[string]uint64, rateLimits)
	for l, name := range rateLimitNames {
		m.RateLimited[name] = c.rateLimited[l].Load()
	}
	for i := range c.refusals {
		for j := range c.refusals[i] {
			if n := c.refusals[i][j].Load(); n > 0 {
				m.Refusals = append(m.Refusals, Refusal{Request: refusalRequests[i], Code: refusalCodes[j], Count: n})
			}
		}
	}
	return m
}
