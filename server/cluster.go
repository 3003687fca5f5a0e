package server

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
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
	"github.com/hostrelay/hostrelay/signaling"
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

// clusterLink is the signaling.Cluster of this server: the lobby is built
// before the node knows its own URL (the HTTP port may be 0), so the
// cluster is set once listening, before the first request.
type clusterLink struct {
	c *cluster.Cluster
}

var _ signaling.Cluster = (*clusterLink)(nil)

func (l *clusterLink) Self() (string, string) {
	n := l.c.Self()
	return n.ID, n.Region
}

func (l *clusterLink) ClaimRoom(ctx context.Context, code string) (bool, error) {
	err := l.c.ClaimRoom(ctx, code)
	if errors.Is(err, cluster.ErrCodeTaken) {
		return true, nil
	}
	return false, err
}

func (l *clusterLink) RoomChanged(code string) { l.c.RoomChanged(code) }

func (l *clusterLink) Locate(ctx context.Context, code string) (signaling.Location, error) {
	w, n, err := l.c.Locate(ctx, code)
	return location(w, n), err
}

func (l *clusterLink) LocateNode(node string) signaling.Location {
	return location(l.c.NodeState(node))
}

func (l *clusterLink) RegionNode(region string) (signaling.Location, bool) {
	ws, self, ok := l.c.RegionNode(region)
	if !ok || self {
		return signaling.Location{}, ok
	}
	return signaling.Location{URL: ws, Region: region}, true
}

func (l *clusterLink) JoinFailed(addr netip.Addr) { l.c.JoinFailed(addr) }
func (l *clusterLink) Origins() []string          { return l.c.Origins() }

func location(w cluster.Where, n cluster.Node) signaling.Location {
	switch w {
	case cluster.Elsewhere:
		return signaling.Location{URL: n.WS, Region: n.Region, Base: n.URL}
	case cluster.Lost:
		return signaling.Location{Lost: true}
	}
	return signaling.Location{}
}

// joinCluster connects this node once its listeners are up (their ports
// make its URLs) and before HTTP serves.
func (s *Server) joinCluster(ctx context.Context, scheme string) error {
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
	ws := "ws" + strings.TrimPrefix(base, "http") + "/ws" // http→ws, https→wss
	var stun []string
	if a := s.turn.UDPAddr(); a != nil {
		stun = append(stun, "stun:"+net.JoinHostPort(host, strconv.Itoa(a.Port)))
	}
	id := cc.NodeID
	if id == "" {
		id = randomNodeID()
	}
	c := cluster.DefaultConfig()
	c.NATS, c.Name, c.Replicas = cc.NATS, cc.Name, cc.Replicas
	c.Self = cluster.Node{ID: id, Region: cc.Region, URL: base, WS: ws, STUN: stun}
	c.Logger = s.log
	cl, err := cluster.New(c)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.cluster.c = cl
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := cl.Start(sctx, s.hub); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
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
	if cl := s.clusterNode(); cl != nil {
		self := cl.Self()
		rep.Node, rep.Region = self.ID, self.Region
		for _, n := range cl.Nodes() {
			rep.Nodes = append(rep.Nodes, nodeReply{Node: n, Self: n.ID == self.ID})
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
	if s.clusterNode() == nil {
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

// clusterNode is this node's cluster membership, nil on a single node.
func (s *Server) clusterNode() *cluster.Cluster {
	if s.cluster == nil {
		return nil
	}
	return s.cluster.c
}
