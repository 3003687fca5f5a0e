package client

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"

	"github.com/hostrelay/hostrelay/protocol"
)

// Options configure Dial.
type Options struct {
	// Name is the player's display name (1–32 characters).
	Name string
	// Header is sent with the WebSocket upgrade, e.g. an Origin the server
	// allows. Programs usually need none.
	Header http.Header
	// HTTPClient makes the upgrade request; default http.DefaultClient.
	HTTPClient *http.Client
	// RequestTimeout bounds a request whose context has no deadline;
	// default 10s.
	RequestTimeout time.Duration
	// ConfigureWebRTC may adjust pion's SettingEngine after the SDK's
	// defaults (mDNS off, UDP4): interface filters, a vnet, port ranges.
	ConfigureWebRTC func(*webrtc.SettingEngine)
	// RewriteICE, if set, may change the TURN configuration the server
	// issued before peers use it: keep only TURN over TCP on networks that
	// block UDP, or point at a TURN address only this client can reach. It
	// keeps the credentials, which are bound to this lobby session.
	RewriteICE func(protocol.ICE) protocol.ICE
	// MessageBuffer is how many received data-channel messages may wait in
	// Room.Messages; game-channel messages beyond it are dropped and
	// counted. Default 1024.
	MessageBuffer int
	// SpectatorBuffer is how many spectator frames may wait in
	// Spectator.Frames; a spectator further behind loses its backlog and
	// resumes at the next keyframe. Default 64.
	SpectatorBuffer int
	// Logger receives the SDK's logs; default slog.Default().
	Logger *slog.Logger
	// Token is an identity token (a JWT) from the game's backend, sent in
	// hello: on a server with -auth on, a valid one makes this player
	// verified (protocol.Player.Verified, UserID). See docs/identity.md.
	Token string
	// GetToken, if set, fetches a fresh token: for the first hello when
	// Token is empty, and before each resume and move to another node, so
	// an expired token never costs the seat. Without it a resume sends no
	// token and the server keeps the identity it verified.
	GetToken func(context.Context) (string, error)
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 10 * time.Second
	}
	if o.MessageBuffer == 0 {
		o.MessageBuffer = 1024
	}
	if o.SpectatorBuffer <= 0 {
		o.SpectatorBuffer = 64
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// newAPI builds the pion API every peer of this lobby uses.
func (o Options) newAPI() *webrtc.API {
	var se webrtc.SettingEngine
	// mDNS would send multicast to the LAN and is useless with relay-only ICE.
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	if o.ConfigureWebRTC != nil {
		o.ConfigureWebRTC(&se)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se))
}
