package server

import (
	"errors"
	"io/fs"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/static"
)

// The admin page (/admin) and its JSON API (/api/v1/admin/), for the
// server's operator: live rooms with their players, host, age, TURN
// allocations and relayed bytes; close a room, remove a player; the
// server's figures at a glance.
//
// The API takes -admin-token as "Authorization: Bearer <token>" on every
// request, never in a URL or a cookie: nothing to leak into logs or history,
// and no cookie means no cross-site request can act with it. The page asks
// for the token and keeps it in the tab's sessionStorage. Without a token
// configured, both answer 404.

// adminRoutes mounts the admin page and API on e, or their 404s when no
// token is configured.
func (s *Server) adminRoutes(e *echo.Echo) {
	if s.cfg.HTTP.AdminToken == "" {
		off := func(c echo.Context) error {
			return apiFail(c, http.StatusNotFound, "not_found",
				"the admin API is off on this server: start hostrelay with -admin-token (HOSTRELAY_ADMIN_TOKEN)")
		}
		e.Any("/api/v1/admin", off)
		e.Any("/api/v1/admin/*", off)
		e.GET("/admin", func(c echo.Context) error {
			return c.String(http.StatusNotFound,
				"404: the admin page is off on this server: start hostrelay with -admin-token (HOSTRELAY_ADMIN_TOKEN)\n")
		})
		return
	}
	page, pageErr := fs.ReadFile(static.FS(), adminHTML)
	e.GET("/admin", func(c echo.Context) error {
		if pageErr != nil {
			return c.String(http.StatusServiceUnavailable,
				"hostrelay: the web app was not built into this binary; run `make run` (or `npm ci && npm run build` before `go build`)\n")
		}
		h := c.Response().Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Robots-Tag", "noindex")
		return c.HTMLBlob(http.StatusOK, page)
	})
	g := e.Group("/api/v1/admin", s.adminAuth)
	g.GET("/overview", s.handleAdminOverview)
	g.DELETE("/rooms/:code", s.handleAdminCloseRoom)
	g.DELETE("/rooms/:code/players/:player", s.handleAdminKick)
	g.GET("/bans", s.handleAdminBans)
	g.POST("/bans", s.handleAdminAddBan)
	g.DELETE("/bans", s.handleAdminLiftBan)
}

// adminHTML is the page's file in the built web app. The static file
// handler refuses it, so only /admin serves it, and only when it is on.
const adminHTML = "admin.html"

// adminAuth lets a request through only with the admin token.
//
// Failures are throttled, not successes: every token is compared (in
// constant time), and the right one passes even from an address whose
// failure budget is spent. Behind a proxy without -trusted-proxies every
// client has the proxy's address, and a throttle on successes let anyone
// lock the operator out with ten wrong tokens (issue 24, finding 8). Past
// its budget a wrong token is answered 429 with Retry-After and not logged.
//
// So an address may keep guessing as fast as it can send, and a 429 tells
// it the guess was wrong. That is safe because of the token, not the
// throttle, as it always was against a guesser with many addresses: the
// token is at least 16 bytes and the docs draw 24 random bytes (192 bits);
// even 16 random characters of base64 (96 bits) at a million guesses a
// second take about 10^15 years on average. The budget keeps guessers out
// of the log and tells honest clients to back off.
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		ip, err := netip.ParseAddr(c.RealIP())
		if err != nil {
			return apiFail(c, http.StatusBadRequest, "invalid_argument", "cannot determine the client address")
		}
		token, ok := bearer(c.Request().Header.Get("Authorization"))
		if !ok {
			return apiFail(c, http.StatusUnauthorized, "unauthenticated",
				"send the admin token as Authorization: Bearer <token>")
		}
		if s.adminToken.valid(token) {
			return next(c)
		}
		if wait, ok := s.adminFailures.fail(ip, time.Now()); !ok {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+1)))
			return apiFail(c, http.StatusTooManyRequests, "rate_limited",
				"too many wrong admin tokens from your network; wait a minute")
		}
		s.log.Info("admin: refused token", "component", "server", "remote", ip)
		return apiFail(c, http.StatusUnauthorized, "invalid_token", "the admin token is not valid")
	}
}

// bearer extracts the token of an Authorization: Bearer header (the scheme
// is case-insensitive, RFC 9110).
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// adminOverview is GET /api/v1/admin/overview: one consistent poll of
// everything the page shows.
type adminOverview struct {
	Server adminServer `json:"server"`
	Rooms  []adminRoom `json:"rooms"`
	// Allocations lists every live TURN allocation, with its room and
	// player when its session is in one. A rate is the difference of
	// relayedBytes of the same id between two polls over the difference of
	// their server.now.
	Allocations []adminAllocation `json:"allocations"`
}

type adminServer struct {
	// Version is what the page shows: the version (0.1.0, as /healthz has
	// it) and the commit's first 12 digits.
	Version   string    `json:"version"`
	Commit    string    `json:"commit"`
	GoVersion string    `json:"goVersion"`
	Protocol  int       `json:"protocol"`
	StartedAt time.Time `json:"startedAt"`
	Now       time.Time `json:"now"`
	// UptimeSeconds is Now - StartedAt, whole seconds.
	UptimeSeconds int64 `json:"uptimeSeconds"`
	Sessions      int   `json:"sessions"`
	Rooms         int   `json:"rooms"`
	Players       int   `json:"players"`
	Allocations   int   `json:"allocations"`
	// RelayedBytes is what the live allocations relayed: it falls when one
	// closes, so rates come from allocations, not from this.
	RelayedBytes uint64 `json:"relayedBytes"`
	// RelayedBytesTotal is every byte relayed since start, on the fast path
	// and pion's (the metrics' counters): it only grows, so the server's rate
	// is its difference between two polls.
	RelayedBytesTotal uint64         `json:"relayedBytesTotal"`
	Conns             map[string]int `json:"conns"`
	TURN              turnHealth     `json:"turn"`
}

type adminRoom struct {
	Code         string        `json:"code"`
	Name         string        `json:"name"`
	CreatedAt    time.Time     `json:"createdAt"`
	AgeSeconds   int64         `json:"ageSeconds"`
	Public       bool          `json:"public"`
	HasPassword  bool          `json:"hasPassword"`
	Started      bool          `json:"started"`
	Migrate      bool          `json:"migrate"`
	Mode         string        `json:"mode"`
	MaxPlayers   int           `json:"maxPlayers"`
	Host         string        `json:"host"` // player id
	Players      []adminPlayer `json:"players"`
	Allocations  int           `json:"allocations"`
	RelayedBytes uint64        `json:"relayedBytes"`
}

type adminPlayer struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Session      string `json:"session"`
	Host         bool   `json:"host"`
	Ready        bool   `json:"ready"`
	Away         bool   `json:"away"`
	PingMs       int    `json:"pingMs"`
	Allocations  int    `json:"allocations"`
	RelayedBytes uint64 `json:"relayedBytes"`
}

type adminAllocation struct {
	ID           uint64    `json:"id"`
	Session      string    `json:"session"`
	Room         string    `json:"room,omitempty"`
	Player       string    `json:"player,omitempty"`
	Transport    string    `json:"transport"` // udp, tcp or tls: how the client reaches TURN
	Client       string    `json:"client"`
	Relay        string    `json:"relay"`
	CreatedAt    time.Time `json:"createdAt"`
	RelayedBytes uint64    `json:"relayedBytes"`
}

func (s *Server) handleAdminOverview(c echo.Context) error {
	return c.JSON(http.StatusOK, s.adminOverview(time.Now()))
}

// adminOverview joins the hub's rooms and TURN's allocations by session.
// They are two snapshots a moment apart: an allocation made in between is
// listed without a room until the next poll.
func (s *Server) adminOverview(now time.Time) adminOverview {
	rooms, allocs := s.hub.Rooms(), s.turn.Allocations()
	type seat struct{ room, player int }
	seats := make(map[string]seat)
	out := adminOverview{Rooms: make([]adminRoom, len(rooms)), Allocations: make([]adminAllocation, len(allocs))}
	players := 0
	for i, r := range rooms {
		ar := adminRoom{
			Code: r.Code, Name: r.Name, CreatedAt: r.Created.UTC(), AgeSeconds: int64(now.Sub(r.Created) / time.Second),
			Public: r.Public, HasPassword: r.HasPassword, Started: r.Started, Migrate: r.Migrate, Mode: r.Mode,
			MaxPlayers: r.MaxPlayers, Host: r.Host, Players: make([]adminPlayer, len(r.Players)),
		}
		for j, p := range r.Players {
			ar.Players[j] = adminPlayer{ID: p.ID, Name: p.Name, Session: p.Session, Host: p.ID == r.Host,
				Ready: p.Ready, Away: p.Away, PingMs: p.PingMs}
			seats[p.Session] = seat{i, j}
		}
		players += len(r.Players)
		out.Rooms[i] = ar
	}
	var relayed uint64
	for i, a := range allocs {
		aa := adminAllocation{ID: a.ID, Session: a.Session, Transport: a.Transport, Client: a.Client.String(),
			Relay: a.Relay.String(), CreatedAt: a.Created.UTC(), RelayedBytes: a.Relayed}
		if st, ok := seats[a.Session]; ok {
			r := &out.Rooms[st.room]
			p := &r.Players[st.player]
			aa.Room, aa.Player = r.Code, p.ID
			r.Allocations++
			r.RelayedBytes += a.Relayed
			p.Allocations++
			p.RelayedBytes += a.Relayed
		}
		relayed += a.Relayed
		out.Allocations[i] = aa
	}
	hs, ts := s.hub.Stats(), s.turn.Stats()
	open, webSockets := s.conns.counts()
	out.Server = adminServer{
		Version: adminVersion(s.build), Commit: s.build.Commit, GoVersion: s.build.GoVersion, Protocol: protocol.Version,
		StartedAt: s.started.UTC(), Now: now.UTC(), UptimeSeconds: int64(now.Sub(s.started) / time.Second),
		Sessions: hs.Sessions, Rooms: len(rooms), Players: players, Allocations: len(allocs), RelayedBytes: relayed,
		RelayedBytesTotal: ts.RelayedFast.Bytes + ts.RelayedOther.Bytes,
		Conns:             map[string]int{"http": open, "webSockets": webSockets, "turnTCP": ts.TCPConns, "turnTLS": ts.TLSConns},
		TURN:              newTurnHealth(ts),
	}
	return out
}

// handleAdminCloseRoom is DELETE /api/v1/admin/rooms/:code: the room closes
// for everyone in it (roomClosed, reason operator_closed).
func (s *Server) handleAdminCloseRoom(c echo.Context) error {
	code := c.Param("code")
	if err := s.hub.CloseRoom(code); err != nil {
		return adminActionFailed(c, err, code)
	}
	s.log.Info("admin: room closed", "component", "server", "room", code, "remote", c.RealIP())
	return c.JSON(http.StatusOK, map[string]string{"closed": code})
}

// handleAdminKick is DELETE /api/v1/admin/rooms/:code/players/:player: the
// player leaves the room and may not rejoin it (roomClosed, reason
// operator_kicked; the others get playerLeft with that reason).
func (s *Server) handleAdminKick(c echo.Context) error {
	code, player := c.Param("code"), c.Param("player")
	if err := s.hub.KickPlayer(code, player); err != nil {
		return adminActionFailed(c, err, code)
	}
	s.log.Info("admin: player kicked", "component", "server", "room", code, "player", player, "remote", c.RealIP())
	return c.JSON(http.StatusOK, map[string]string{"room": code, "kicked": player})
}

func adminActionFailed(c echo.Context, err error, code string) error {
	switch {
	case errors.Is(err, signaling.ErrRoomNotFound):
		return apiFail(c, http.StatusNotFound, "room_not_found", "no room "+code+" on this server (it may have closed)")
	case errors.Is(err, signaling.ErrPlayerNotFound):
		return apiFail(c, http.StatusNotFound, "player_not_found", "no such player in room "+code+" (they may have left)")
	}
	return err
}
