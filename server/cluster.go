package server

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hostrelay/hostrelay/cluster"
	"github.com/hostrelay/hostrelay/protocol"
)

// ClusterConfig joins this server to others on NATS (docs/cluster.md).
// Without NATS the server is the single node it always was.
type ClusterConfig struct {
	NATS string // nats://host:4222 (comma-separated for several); empty: no cluster
	// NodeID names this node in the cluster (and in its resume tokens);
	// empty: random at each start.
	NodeID string
	Region string // a label like eu-west; the lobby app creates rooms on the nearest
	// PublicURL is this node's base URL as players reach it
	// (https://eu1.example.com); empty: the scheme, -public-host (or
	// -public-ip) and the HTTP port.
	PublicURL string
	Name      string // prefix of the NATS buckets and subjects
	Replicas  int    // JetStream replicas of the buckets
}

func (c *ClusterConfig) bind(b binder) {
	b.add("nats", "nats", strValue{&c.NATS},
		"NATS server URL to join a cluster of hostrelay nodes (JetStream must be on); empty: a single node").
		defaultDoc("none (one node)").
		link("[cluster](docs/cluster.md)").sensitive = true // may carry a password
	b.add("node-id", "node_id", strValue{&c.NodeID},
		"this node's name in the cluster: 1 to 24 of a-z, 0-9 and '-'").
		checked(func() error {
			if c.NodeID == "" {
				return nil
			}
			return cluster.ValidateNodeID(c.NodeID)
		}).defaultDoc("random at each start")
	b.add("region", "region", strValue{&c.Region},
		"this node's region label (e.g. eu-west), shown in the room list; the lobby app creates rooms in the nearest region").
		checked(func() error {
			if c.Region == "" {
				return nil
			}
			return protocol.ValidateRegion(c.Region)
		}).defaultDoc("none")
	b.add("public-url", "public_url", strValue{&c.PublicURL},
		"this node's base URL as players reach it (e.g. https://eu1.example.com); other nodes send players here").
		checked(func() error {
			if c.PublicURL == "" {
				return nil
			}
			u, err := url.Parse(c.PublicURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
				return errors.New("must be http:// or https:// and a host, with no path")
			}
			return nil
		}).defaultDoc("the scheme, -public-host (or -public-ip) and the HTTP port")
	b.add("cluster-name", "name", strValue{&c.Name},
		"prefix of the NATS buckets and subjects, so clusters can share one NATS").
		checked(func() error { return cluster.ValidateNodeID(c.Name) })
	b.add("nats-replicas", "replicas", intValue{&c.Replicas, 0},
		"JetStream replicas of the cluster's buckets: 1 for one NATS server, 3 for a NATS cluster").
		checked(between(&c.Replicas, 1, 5))
}

// newCluster is this node's membership, not yet connected: the lobby holds
// it (it satisfies signaling.Cluster) before the node knows where players
// reach it, which joinCluster tells it once listening.
func newCluster(cc ClusterConfig, log *slog.Logger) (*cluster.Cluster, error) {
	c := cluster.DefaultConfig()
	c.NATS, c.Name, c.Replicas = cc.NATS, cc.Name, cc.Replicas
	c.ID, c.Region = cc.NodeID, cc.Region
	if c.ID == "" {
		c.ID = randomNodeID()
	}
	c.Logger = log
	cl, err := cluster.New(c)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return cl, nil
}

// joinCluster connects this node once its listeners are up (their ports
// make its URLs) and before HTTP serves; it returns the node's base URL.
func (s *Server) joinCluster(ctx context.Context, scheme string) (string, error) {
	cc := s.cfg.Cluster
	host := s.cfg.ICE.PublicHost
	if host == "" {
		host = s.cfg.TURN.PublicIP.String()
	}
	base := cc.PublicURL
	if base == "" {
		port := s.ln.Addr().(*net.TCPAddr).Port //nolint:forcetypeassert // a TCP listener
		base = scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
	}
	base = strings.TrimSuffix(base, "/")
	at := cluster.Addrs{URL: base, WS: "ws" + strings.TrimPrefix(base, "http") + "/ws"} // http→ws, https→wss
	if a := s.turn.UDPAddr(); a != nil {
		at.STUN = append(at.STUN, "stun:"+net.JoinHostPort(host, strconv.Itoa(a.Port)))
	}
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := s.cluster.Start(sctx, s.hub, at); err != nil {
		return "", fmt.Errorf("server: %w", err)
	}
	return base, nil
}

var nodeIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding) //nolint:gochecknoglobals // a stateless encoding

func randomNodeID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "n-" + nodeIDEncoding.EncodeToString(b[:])
}

// nodesReply is GET /api/v1/nodes: this node and every live one, for the
// lobby app's region choice. Everything in it is public.
type nodesReply struct {
	Node   string      `json:"node"`
	Region string      `json:"region"`
	Nodes  []nodeReply `json:"nodes"`
}

type nodeReply struct {
	cluster.Node
	Self bool `json:"self,omitempty"`
}

func (s *Server) handleNodes(c echo.Context) error {
	rep := nodesReply{Nodes: []nodeReply{}}
	if s.cluster != nil {
		rep.Node, rep.Region = s.cluster.Self()
		for _, n := range s.cluster.Nodes() {
			rep.Nodes = append(rep.Nodes, nodeReply{Node: n, Self: n.ID == rep.Node})
		}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, rep)
}

// shareLinkElsewhere sends a share link for a room of another node to that
// node's own share link, so the page, its WebSocket and TURN all come from
// the room's node; "" when the room is here, unknown or lost (the page
// then says so itself).
func (s *Server) shareLinkElsewhere(ctx context.Context, remote netip.Addr, code, rawQuery string) string {
	if s.cluster == nil {
		return "" // a single node: the page's join looks the code up
	}
	// A redirect tells a code exists, so the lookup is the lobby's join's
	// own (FindRoom): it costs a guesser's failed-join budget, shared by
	// every node, and past it the page is served without a lookup.
	f, err := s.hub.FindRoom(ctx, remote, code)
	if err != nil || f.Lost || f.Base == "" {
		return ""
	}
	code, _ = protocol.NormalizeRoomCode(code)
	to := f.Base + "/r/" + code
	if rawQuery != "" {
		to += "?" + rawQuery
	}
	return to
}
