package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// Config configures a node's membership. Start from DefaultConfig.
type Config struct {
	// NATS is the server URL (nats://host:4222, several comma-separated).
	NATS string
	// Name prefixes the buckets and subjects, so two hostrelay clusters can
	// share one NATS.
	Name string
	// ID names this node (in the directory, its subjects and its resume
	// tokens); Region is its label, such as eu-west (may be empty). Where
	// players reach the node comes with Start (Addrs).
	ID, Region string
	// Replicas of the JetStream buckets: 1 for a single NATS server, 3 for a
	// NATS cluster that should survive losing one of its servers.
	Replicas int

	// Heartbeat is how often the node rewrites its presence; DeadAfter is
	// how long without one before the others call it dead. DeadAfter plus
	// one sweep is the longest a dead node's rooms stay listed.
	Heartbeat time.Duration
	DeadAfter time.Duration
	// FlushInterval bounds how often one room's listing is rewritten: a busy
	// room changes many times a second, and a reader needs the latest.
	FlushInterval time.Duration
	// RequestTimeout bounds one call to NATS or to another node.
	RequestTimeout time.Duration
	// LostMemory is how long a room lost with its node is remembered, so a
	// player asking for it hears room_lost rather than room_not_found;
	// MaxLost bounds how many are remembered.
	LostMemory time.Duration
	MaxLost    int

	Logger *slog.Logger
}

// DefaultConfig holds every default: one NATS replica, a heartbeat a second,
// dead after three missed, listings at most ten times a second per room.
func DefaultConfig() Config {
	return Config{
		Name:           "hostrelay",
		Replicas:       1,
		Heartbeat:      time.Second,
		DeadAfter:      3 * time.Second,
		FlushInterval:  100 * time.Millisecond,
		RequestTimeout: 2 * time.Second,
		LostMemory:     10 * time.Minute,
		MaxLost:        100_000,
	}
}

// MaxNodeID bounds a node id: it goes into resume tokens (protocol's
// MaxResumeToken is 64 bytes) and NATS subjects.
const MaxNodeID = 24

// ValidateNodeID checks a node id: 1 to MaxNodeID bytes of a-z, 0-9 and '-'.
func ValidateNodeID(id string) error {
	if id == "" || len(id) > MaxNodeID {
		return fmt.Errorf("cluster: node id %q: must be 1 to %d bytes", id, MaxNodeID)
	}
	for i := range len(id) {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return fmt.Errorf("cluster: node id %q: may hold only a-z, 0-9 and '-'", id)
		}
	}
	return nil
}

func (c Config) validate() error {
	var errs []error
	if c.NATS == "" {
		errs = append(errs, errors.New("cluster: NATS URL is required"))
	}
	if err := ValidateNodeID(c.ID); err != nil {
		errs = append(errs, err)
	}
	if c.Region != "" {
		if err := protocol.ValidateRegion(c.Region); err != nil {
			errs = append(errs, fmt.Errorf("cluster: %w", err))
		}
	}
	if err := ValidateNodeID(c.Name); err != nil {
		errs = append(errs, fmt.Errorf("cluster name: %w", err))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("cluster: Replicas %d: must be 1 to 5", c.Replicas))
	}
	for name, d := range map[string]time.Duration{"Heartbeat": c.Heartbeat, "DeadAfter": c.DeadAfter,
		"FlushInterval": c.FlushInterval, "RequestTimeout": c.RequestTimeout, "LostMemory": c.LostMemory} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("cluster: %s must be positive", name))
		}
	}
	if c.DeadAfter < 2*c.Heartbeat {
		errs = append(errs, fmt.Errorf("cluster: DeadAfter %s must be at least two heartbeats (%s)", c.DeadAfter, 2*c.Heartbeat))
	}
	if c.MaxLost < 1 {
		errs = append(errs, errors.New("cluster: MaxLost must be positive"))
	}
	return errors.Join(errs...)
}

// Addrs are where players reach a node. They come with Start, not Config:
// a server knows its ports only once it listens, and its lobby, which
// holds the Cluster, is built before that.
type Addrs struct {
	// URL is the public base URL (https://eu1.example.com); WS is the lobby
	// WebSocket URL.
	URL, WS string
	// STUN lists stun: URLs of the node's TURN.
	STUN []string
}

func (a Addrs) validate() error {
	var errs []error
	for field, raw := range map[string]string{"URL": a.URL, "WS": a.WS} {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			errs = append(errs, fmt.Errorf("cluster: Addrs.%s %q is not an absolute URL", field, raw))
		}
	}
	return errors.Join(errs...)
}
