package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/webhook"
)

// WebhookConfig tells a game's backend what happens in the lobby (signed
// room events POSTed to URL) and lets it rule on joins (JoinHookURL, asked
// before each create and join); docs/identity.md. Both are off by default.
type WebhookConfig struct {
	URL string // empty: no events sent
	// Secret signs events and join-hook requests; SecretFile names a file
	// holding it instead (trailing newline ignored). One of them is required
	// with URL or JoinHookURL. Never logged.
	Secret     []byte
	SecretFile string
	// Queue bounds the events waiting for the receiver; past it they are
	// dropped and counted.
	Queue int

	JoinHookURL      string // empty: joins are not asked about
	JoinHookTimeout  time.Duration
	JoinHookFailOpen bool // a hook that fails lets the join through; off: refused with unavailable
}

func defaultWebhookConfig() WebhookConfig {
	return WebhookConfig{Queue: webhook.DefaultConfig().QueueEvents, JoinHookTimeout: webhook.DefaultJoinHookTimeout}
}

func (c *WebhookConfig) bind(b binder) {
	b.add("webhook-url", "url", strValue{&c.URL},
		"URL that receives the lobby's room events (room created, started, closed; player joined, left; host changed) as signed JSON POSTs, in order per room, retried with backoff; empty: none sent").
		checked(func() error { return checkHookURL(c.URL) }).
		defaultDoc("none (off)").
		link("[webhooks](docs/identity.md#webhooks)")
	b.add("webhook-secret", "secret", bytesValue{&c.Secret},
		"HMAC-SHA256 secret signing webhook events and join-hook requests (X-Hostrelay-Signature), at least 16 bytes; required with -webhook-url or -join-hook-url unless -webhook-secret-file is given; never logged").
		checked(func() error {
			switch {
			case len(c.Secret) > 0 && c.SecretFile != "":
				return errors.New("give -webhook-secret or -webhook-secret-file, not both")
			case len(c.Secret) > 0 && len(c.Secret) < 16:
				return errors.New("must be at least 16 bytes")
			case len(c.Secret) == 0 && c.SecretFile == "" && (c.URL != "" || c.JoinHookURL != ""):
				return errors.New("required with -webhook-url or -join-hook-url (or -webhook-secret-file)")
			}
			return nil
		}).defaultDoc("none").sensitive = true
	b.add("webhook-secret-file", "secret_file", strValue{&c.SecretFile},
		"file holding -webhook-secret (a mounted secret), read at start; a trailing newline is ignored").
		defaultDoc("none")
	b.add("webhook-queue", "queue", intValue{&c.Queue, 0},
		"webhook events held for a receiver that is slow or down, in order; past it new events are dropped and counted (an event is about 200 bytes; the queue holds at most 512 bytes an event, 5MiB at the default)").
		checked(between(&c.Queue, 1, 1_000_000))
	b.add("join-hook-url", "join_hook_url", strValue{&c.JoinHookURL},
		"URL asked (a signed JSON POST) before each room create, join and quick play; it answers {\"allow\": false, \"message\": ...} to refuse with join_refused; empty: joins are not asked about").
		checked(func() error { return checkHookURL(c.JoinHookURL) }).
		defaultDoc("none (off)").
		link("[join hook](docs/identity.md#join-hook)")
	b.add("join-hook-timeout", "join_hook_timeout", durValue{&c.JoinHookTimeout},
		"how long a create or join waits for the join hook's answer (50ms to 10s); past it the hook has failed").
		checked(durBetween(&c.JoinHookTimeout, 50*time.Millisecond, 10*time.Second))
	b.add("join-hook-fail-open", "join_hook_fail_open", boolValue{&c.JoinHookFailOpen},
		"when the join hook fails (down, slow, not a 200 with JSON): on lets the join through, off refuses it with unavailable")
}

// checkHookURL accepts "" or an http(s) URL with a host.
func checkHookURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http:// or https:// URL")
	}
	return nil
}

// webhookSecret is the configured secret, read from its file if named.
func (c WebhookConfig) webhookSecret() ([]byte, error) {
	if c.SecretFile == "" {
		return c.Secret, nil
	}
	b, err := os.ReadFile(c.SecretFile)
	if err != nil {
		return nil, fmt.Errorf("server: -webhook-secret-file: %w", err)
	}
	b = []byte(strings.TrimRight(string(b), "\r\n"))
	if len(b) < 16 {
		return nil, fmt.Errorf("server: -webhook-secret-file %s: the secret must be at least 16 bytes", c.SecretFile)
	}
	return b, nil
}

// startWebhooks makes the sender and the join hook the config asks for
// (each nil when off). They are plugged into the lobby (lobbyConfig).
func (s *Server) startWebhooks(log *slog.Logger) error {
	c := s.cfg.Webhook
	if c.URL == "" && c.JoinHookURL == "" {
		return nil
	}
	secret, err := c.webhookSecret()
	if err != nil {
		return err
	}
	if c.JoinHookURL != "" {
		if s.joinHook, err = webhook.NewJoinHook(webhook.JoinHookConfig{URL: c.JoinHookURL, Secret: secret,
			Timeout: c.JoinHookTimeout, FailOpen: c.JoinHookFailOpen, Logger: log}); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	if c.URL != "" {
		wc := webhook.DefaultConfig()
		wc.URL, wc.Secret, wc.QueueEvents, wc.Logger = c.URL, secret, c.Queue, log
		wc.QueueBytes = c.Queue * maxEventBytes
		if s.webhooks, err = webhook.New(wc); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	return nil
}

// maxEventBytes bounds the memory -webhook-queue holds, per event: an
// event's JSON is about 200 bytes.
const maxEventBytes = 512

// webhookFlushBound is the longest shutdown waits for queued webhook events
// to be delivered (within -shutdown-grace).
const webhookFlushBound = 5 * time.Second

// flushWebhooks delivers what the sender holds, within ctx and
// webhookFlushBound. Events it could not deliver are logged and counted
// (dropped, reason shutdown), not a failed shutdown: the receiver is not
// this server's.
func (s *Server) flushWebhooks(ctx context.Context) {
	if s.webhooks == nil {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, webhookFlushBound)
	defer cancel()
	if err := s.webhooks.Close(fctx); err != nil {
		s.log.Warn("webhook events lost at shutdown", "component", "server", "err", err)
	}
}
