package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hostrelay/hostrelay/bans"
)

// Server-wide bans (docs/identity.md#bans): the operator bans a user id or
// a network for a time on the admin page or its API; the lobby refuses
// them at hello and ends their sessions at once. The list is kept in
// -bans-file across restarts.

// BansConfig is the ban list's file and bound.
type BansConfig struct {
	// File keeps the bans across restarts; empty: in memory only.
	File string
	Max  int
}

func (c *BansConfig) bind(b binder) {
	b.add("bans-file", "file", strValue{&c.File},
		"JSON file keeping the server-wide bans (added on the admin page) across restarts, written atomically on every change; a corrupt file stops the start; empty: bans are kept in memory only and lost at a restart").
		defaultDoc("none (in memory)").
		link("[bans](docs/identity.md#bans)")
	b.add("bans-max", "max", intValue{&c.Max, 0},
		"server-wide bans held at once; past it a new ban is refused until one is lifted or expires").
		checked(between(&c.Max, 1, bans.MaxBansLimit))
}

// openBans loads the ban list before anything listens.
func openBans(c BansConfig, log *slog.Logger) (*bans.Store, error) {
	store, err := bans.Open(bans.Config{File: c.File, MaxBans: c.Max, Logger: log.With("component", "bans")})
	if err != nil {
		return nil, fmt.Errorf("server: -bans-file: %w", err)
	}
	return store, nil
}

// maxBanBody bounds a POST /api/v1/admin/bans body: a user id, a prefix, a
// duration and a reason of at most 200 bytes fit many times over.
const maxBanBody = 4 << 10

// adminBan is a ban as the admin API shows it.
type adminBan struct {
	ID        string    `json:"id"`
	User      string    `json:"user,omitempty"`
	IP        string    `json:"ip,omitempty"` // a CIDR prefix
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	// RemainingSeconds is how long it still holds, from the answer's now.
	RemainingSeconds int64 `json:"remainingSeconds"`
}

func newAdminBan(b bans.Ban, now time.Time) adminBan {
	a := adminBan{ID: b.ID, User: b.User, Reason: b.Reason, CreatedAt: b.Created, ExpiresAt: b.Expires,
		RemainingSeconds: int64(b.Expires.Sub(now) / time.Second)}
	if b.Prefix.IsValid() {
		a.IP = b.Prefix.String()
	}
	return a
}

// handleAdminBans is GET /api/v1/admin/bans: the bans in force, newest first.
func (s *Server) handleAdminBans(c echo.Context) error {
	now := time.Now()
	list := s.bans.List()
	out := struct {
		Now  time.Time  `json:"now"`
		Max  int        `json:"max"`
		Bans []adminBan `json:"bans"`
	}{Now: now.UTC(), Max: s.cfg.Bans.Max, Bans: make([]adminBan, len(list))}
	for i, b := range list {
		out.Bans[i] = newAdminBan(b, now)
	}
	return c.JSON(http.StatusOK, out)
}

// banRequest is POST /api/v1/admin/bans: user or ip (an address or CIDR
// prefix), duration as Go writes it ("90m", "24h", "720h"), reason.
type banRequest struct {
	User     string `json:"user"`
	IP       string `json:"ip"`
	Duration string `json:"duration"`
	Reason   string `json:"reason"`
}

// handleAdminAddBan is POST /api/v1/admin/bans: the ban is saved, then
// every session it covers is ended.
func (s *Server) handleAdminAddBan(c echo.Context) error {
	body := http.MaxBytesReader(c.Response(), c.Request().Body, maxBanBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	var q banRequest
	if err := dec.Decode(&q); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return apiFail(c, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("a ban is at most %d bytes of JSON", maxBanBody))
		}
		return apiFail(c, http.StatusBadRequest, "invalid_argument",
			`send JSON {"user" or "ip", "duration": "24h", "reason"}: `+err.Error())
	}
	d, err := time.ParseDuration(q.Duration)
	if err != nil {
		return apiFail(c, http.StatusBadRequest, "invalid_argument", `duration: write it as "90m", "24h" or "720h"`)
	}
	b, err := s.bans.Add(bans.Request{User: q.User, IP: q.IP, Duration: d, Reason: q.Reason})
	switch {
	case errors.Is(err, bans.ErrInvalid):
		return apiFail(c, http.StatusBadRequest, "invalid_argument", err.Error())
	case errors.Is(err, bans.ErrFull):
		return apiFail(c, http.StatusConflict, "too_many_bans", err.Error())
	case err != nil:
		s.log.Error("admin: ban not saved", "component", "server", "err", err)
		return apiFail(c, http.StatusInternalServerError, "internal", "the ban could not be saved: "+err.Error())
	}
	dropped := s.hub.DropBanned()
	s.log.Info("admin: ban added", "component", "server", "ban", b.ID, "expires", b.Expires, "sessions_ended", dropped,
		"remote", c.RealIP())
	return c.JSON(http.StatusCreated, struct {
		Ban           adminBan `json:"ban"`
		SessionsEnded int      `json:"sessionsEnded"`
	}{newAdminBan(b, time.Now()), dropped})
}

// handleAdminLiftBan is DELETE /api/v1/admin/bans?id=<id>: the id is in
// the query, for an IP ban's holds a slash.
func (s *Server) handleAdminLiftBan(c echo.Context) error {
	id := c.QueryParam("id")
	if len(id) > 256 {
		return apiFail(c, http.StatusBadRequest, "invalid_argument", "no ban has an id that long")
	}
	err := s.bans.Lift(id)
	switch {
	case errors.Is(err, bans.ErrNotFound):
		return apiFail(c, http.StatusNotFound, "ban_not_found", "no ban "+fmt.Sprintf("%q", id)+" (it may have expired or been lifted)")
	case err != nil:
		s.log.Error("admin: ban lift not saved", "component", "server", "err", err)
		return apiFail(c, http.StatusInternalServerError, "internal", "the lift could not be saved: "+err.Error())
	}
	s.log.Info("admin: ban lifted", "component", "server", "ban", id, "remote", c.RealIP())
	return c.JSON(http.StatusOK, map[string]string{"lifted": id})
}
