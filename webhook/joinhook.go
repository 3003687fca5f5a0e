package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/signaling"
)

// JoinHookConfig configures a JoinHook.
type JoinHookConfig struct {
	URL string
	// Secret signs each request as the sender's are (SignatureHeader);
	// empty: unsigned.
	Secret []byte
	// Timeout bounds the whole exchange; past it the hook has failed.
	Timeout time.Duration
	// FailOpen lets a join through when the hook fails (unreachable, slow,
	// not 200, not JSON); otherwise the join is refused with unavailable.
	FailOpen bool

	Client *http.Client // nil: one of the hook's own
	Logger *slog.Logger // nil: slog.Default()
	Now    func() time.Time
}

// DefaultJoinHookTimeout is a join's longest wait for the hook.
const DefaultJoinHookTimeout = time.Second

// JoinHookRequest is the JSON body the hook is POSTed.
type JoinHookRequest struct {
	Action   string `json:"action"`         // create, join or quickplay
	Room     string `json:"room,omitempty"` // the code joined; create: the code claimed in a cluster, else none
	RoomName string `json:"roomName,omitempty"`
	Session  string `json:"session"`
	Name     string `json:"name"` // the player's chosen name
	// UserID is the player's verified user id (-auth), absent if unverified.
	UserID string `json:"userId,omitempty"`
}

// JoinHookResponse is what the hook answers, with status 200.
type JoinHookResponse struct {
	Allow   bool   `json:"allow"`
	Message string `json:"message,omitempty"` // shown to a refused player (at most 200 bytes are)
}

// JoinHookStats are the hook's figures.
type JoinHookStats struct {
	Allowed, Refused uint64
	// FailedOpen and FailedClosed count failures of the hook, let through
	// and refused.
	FailedOpen, FailedClosed uint64
}

// JoinHook asks a backend whether a join may go ahead: a
// signaling.JoinChecker.
type JoinHook struct {
	cfg    JoinHookConfig
	log    *slog.Logger
	client *http.Client

	allowed, refused, failedOpen, failedClosed atomic.Uint64
}

// maxHookAnswer bounds the bytes of the hook's answer that are read.
const maxHookAnswer = 4 << 10

// NewJoinHook checks cfg and returns the hook.
func NewJoinHook(cfg JoinHookConfig) (*JoinHook, error) {
	if cfg.URL == "" || cfg.Timeout <= 0 {
		return nil, errors.New("webhook: join hook: URL and a positive Timeout are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = newClient(cfg.Timeout, 16)
	}
	return &JoinHook{cfg: cfg, log: cfg.Logger.With("component", "join-hook"), client: cfg.Client}, nil
}

// CheckJoin asks the hook about j (signaling.JoinChecker).
func (h *JoinHook) CheckJoin(ctx context.Context, j signaling.JoinRequest) error {
	answer, err := h.ask(ctx, j)
	switch {
	case err != nil && h.cfg.FailOpen:
		h.failedOpen.Add(1)
		h.log.Warn("join hook failed: letting the join through (fail-open)", "action", j.Action, "room", j.Room, "err", err)
		return nil
	case err != nil:
		h.failedClosed.Add(1)
		return err
	case !answer.Allow:
		h.refused.Add(1)
		return &signaling.JoinRefused{Message: answer.Message}
	}
	h.allowed.Add(1)
	return nil
}

func (h *JoinHook) ask(ctx context.Context, j signaling.JoinRequest) (JoinHookResponse, error) {
	body, err := json.Marshal(JoinHookRequest{Action: j.Action, Room: j.Room, RoomName: j.RoomName, Session: j.Session, Name: j.Name, UserID: j.UserID})
	if err != nil {
		return JoinHookResponse{}, fmt.Errorf("webhook: join hook: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return JoinHookResponse{}, fmt.Errorf("webhook: join hook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hostrelay-join-hook")
	if len(h.cfg.Secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(h.cfg.Secret, h.cfg.Now(), body))
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return JoinHookResponse{}, fmt.Errorf("webhook: join hook: %w", err)
	}
	defer resp.Body.Close() //nolint:errcheck // read to its end or bounded
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHookAnswer))
		return JoinHookResponse{}, fmt.Errorf("webhook: join hook: status %d, want 200", resp.StatusCode)
	}
	var a JoinHookResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxHookAnswer)).Decode(&a); err != nil {
		return JoinHookResponse{}, fmt.Errorf("webhook: join hook: answer: %w", err)
	}
	return a, nil
}

// Stats returns the hook's figures.
func (h *JoinHook) Stats() JoinHookStats {
	return JoinHookStats{Allowed: h.allowed.Load(), Refused: h.refused.Load(),
		FailedOpen: h.failedOpen.Load(), FailedClosed: h.failedClosed.Load()}
}
