package server

import (
	"errors"
	"io/fs"
	"net/http"
	"net/netip"

	"github.com/labstack/echo/v4"

	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/static"
	"github.com/hostrelay/hostrelay/turn"
)

// newHTTP builds the echo app. No middleware here may wrap the
// ResponseWriter: /ws hijacks the connection.
func newHTTP(s *Server) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// Believe X-Forwarded-For only from configured proxies; by default the
	// peer address is the client, so a forged header changes nothing.
	e.IPExtractor = echo.ExtractIPDirect()
	if len(s.cfg.HTTP.TrustedProxies) > 0 {
		var opts []echo.TrustOption
		for _, p := range s.cfg.HTTP.TrustedProxies {
			opts = append(opts, echo.TrustIPRange(netipToIPNet(p)))
		}
		opts = append(opts, echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false))
		e.IPExtractor = echo.ExtractIPFromXFFHeader(opts...)
	}
	e.Use(securityHeaders)

	e.GET("/healthz", func(c echo.Context) error {
		open, webSockets := s.conns.counts()
		ts := s.turn.Stats()
		return c.JSON(http.StatusOK, map[string]any{"status": "ok", "version": s.build.Version, "commit": s.build.Commit,
			"lobby": s.hub.Stats(), "protocol": protocol.Version,
			"conns": map[string]int{"http": open, "webSockets": webSockets, "turnTCP": ts.TCPConns, "turnTLS": ts.TLSConns},
			"turn":  newTurnHealth(ts)})
	})
	e.GET("/api/v1/ice", s.handleICE)
	notices := Notices()
	e.GET("/licenses", func(c echo.Context) error {
		return c.String(http.StatusOK, notices)
	})
	s.adminRoutes(e)
	e.GET("/ws", func(c echo.Context) error {
		if s.conns.webSocketsFull() {
			// The last HTTP connections are kept for /healthz and pages.
			c.Response().Header().Set("Retry-After", "30")
			return echo.NewHTTPError(http.StatusServiceUnavailable, "server busy: too many connections")
		}
		ip, err := netip.ParseAddr(c.RealIP())
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, "cannot determine client address")
		}
		s.hub.ServeWebSocket(c.Response(), c.Request(), ip)
		return nil
	})

	sdk, sdkErr := loadSDK(static.SDK())
	if sdkErr != nil && !errors.Is(sdkErr, errSDKNotBuilt) {
		s.log.Error("the script-tag SDK is not served", "component", "http", "err", sdkErr)
	}
	sdkRoutes(e, sdk, sdkErr)

	web := static.FS()
	indexHTML, indexErr := fs.ReadFile(web, "index.html")
	index := func(c echo.Context) error {
		if indexErr != nil {
			return c.String(http.StatusServiceUnavailable,
				"hostrelay: the web app was not built into this binary; run `make run` (or `npm ci && npm run build` before `go build`)\n")
		}
		c.Response().Header().Set("Cache-Control", "no-cache")
		return c.HTMLBlob(http.StatusOK, indexHTML)
	}
	// A share link opens the lobby page, which reads the code from the
	// path; in a cluster, a link to a room of another node goes there.
	e.GET("/r/:code", func(c echo.Context) error {
		if ip, err := netip.ParseAddr(c.RealIP()); err == nil {
			if to := s.shareLinkElsewhere(c.Request().Context(), ip, c.Param("code"), c.QueryString()); to != "" {
				return c.Redirect(http.StatusTemporaryRedirect, to)
			}
		}
		return index(c)
	})
	e.GET("/api/v1/nodes", s.handleNodes)
	e.GET("/", index)
	assets := http.FileServer(http.FS(web))
	e.GET("/*", func(c echo.Context) error {
		name := c.Param("*")
		if name == adminHTML { // only /admin serves it, and only when it is on
			return echo.NewHTTPError(http.StatusNotFound, "not found")
		}
		if _, err := fs.Stat(web, name); err != nil {
			return echo.NewHTTPError(http.StatusNotFound, "not found")
		}
		if len(name) > 7 && name[:7] == "assets/" {
			// Vite puts a content hash in every asset name.
			c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		assets.ServeHTTP(c.Response(), c.Request())
		return nil
	})
	return e
}

// turnHealth is the TURN part of /healthz: live allocations, which a
// monitor (and the soak run) watches return to a baseline after players go,
// and the relayed packets dropped since start, by cause, which tell a
// player's lost packets apart from the network's.
type turnHealth struct {
	Allocations int `json:"allocations"`
	Dropped     struct {
		Policy    uint64 `json:"policy"`    // refused by the peer policy (not a room mate)
		Stray     uint64 `json:"stray"`     // reached a relay socket from outside
		Overflow  uint64 `json:"overflow"`  // the receiving allocation's queue was full
		Bandwidth uint64 `json:"bandwidth"` // over -turn-max-bandwidth
	} `json:"dropped"`
}

func newTurnHealth(st turn.Stats) turnHealth {
	h := turnHealth{Allocations: st.Allocations}
	h.Dropped.Policy, h.Dropped.Stray = st.DroppedWrites, st.DroppedReads
	h.Dropped.Overflow, h.Dropped.Bandwidth = st.DroppedOverflow, st.DroppedBandwidth
	return h
}

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		// Share links carry room codes: never leak them to other sites.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data: blob:; "+
			"style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
		return next(c)
	}
}
