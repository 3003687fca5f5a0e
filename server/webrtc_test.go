package server

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/logging"
	pionturn "github.com/pion/turn/v4"
	"github.com/pion/webrtc/v4"

	"github.com/hostrelay/hostrelay/protocol"
)

// newRelayPeer is a pion peer that can only use our TURN: relay-only ICE,
// mDNS off, UDP4 on the loopback interface (DESIGN.md: tests never send to a
// non-loopback address).
func newRelayPeer(t *testing.T, ice protocol.ICE) (*webrtc.PeerConnection, *webrtc.DataChannel, *webrtc.DataChannel) {
	t.Helper()
	var se webrtc.SettingEngine
	se.SetICEMulticastDNSMode(ice_mDNSDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetIncludeLoopbackCandidate(true)
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se))
	var servers []webrtc.ICEServer
	for _, s := range ice.Servers {
		servers = append(servers, webrtc.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential})
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{ICEServers: servers, ICETransportPolicy: webrtc.ICETransportPolicyRelay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	yes, no := true, false
	var zero, one, retransmits uint16 = 0, 1, 0
	game, err := pc.CreateDataChannel("game", &webrtc.DataChannelInit{Negotiated: &yes, ID: &zero, Ordered: &no, MaxRetransmits: &retransmits})
	if err != nil {
		t.Fatal(err)
	}
	events, err := pc.CreateDataChannel("events", &webrtc.DataChannelInit{Negotiated: &yes, ID: &one, Ordered: &yes})
	if err != nil {
		t.Fatal(err)
	}
	return pc, game, events
}

const ice_mDNSDisabled = ice.MulticastDNSModeDisabled

// signalPeer wires pc to the lobby: local candidates go to peerID, incoming
// signals are applied (candidates held until the remote description is set,
// since they may overtake it). answer makes this side the answerer.
func signalPeer(t *testing.T, l *lobby, pc *webrtc.PeerConnection, peerID string, answer bool) {
	pc.OnICECandidate(func(c *webrtc.ICECandidate) {
		sig := &protocol.Signal{To: peerID, Kind: protocol.SignalCandidate}
		if c != nil {
			init := c.ToJSON()
			sig.Candidate = init.Candidate
			if init.SDPMid != nil {
				sig.Mid = *init.SDPMid
			}
		}
		if err := l.call(protocol.TypeSignal, sig, &protocol.OK{}); err != nil {
			t.Errorf("send candidate: %v", err)
		}
	})
	go func() {
		var pending []webrtc.ICECandidateInit
		for {
			// Reads until the connection ends (t.Context ends before the
			// cleanup closes it); a concurrent call gets its reply from here.
			env, err := l.Read(t.Context())
			if err != nil {
				return
			}
			if env.Type != protocol.TypeSignal {
				continue
			}
			var sig protocol.Signal
			if err := protocol.DecodeBody(env, &sig); err != nil {
				t.Error(err)
				return
			}
			if sig.From != peerID {
				t.Errorf("signal from %q, want %q", sig.From, peerID)
			}
			switch sig.Kind {
			case protocol.SignalOffer, protocol.SignalAnswer:
				typ := webrtc.SDPTypeAnswer
				if sig.Kind == protocol.SignalOffer {
					typ = webrtc.SDPTypeOffer
				}
				if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: typ, SDP: sig.SDP}); err != nil {
					t.Errorf("set remote: %v", err)
					return
				}
				for _, c := range pending {
					_ = pc.AddICECandidate(c)
				}
				pending = nil
				if answer {
					ans, err := pc.CreateAnswer(nil)
					if err == nil {
						err = pc.SetLocalDescription(ans)
					}
					if err == nil {
						err = l.call(protocol.TypeSignal, &protocol.Signal{To: peerID, Kind: protocol.SignalAnswer, SDP: ans.SDP}, &protocol.OK{})
					}
					if err != nil {
						t.Errorf("answer: %v", err)
						return
					}
				}
			case protocol.SignalCandidate:
				if sig.Candidate == "" {
					continue
				}
				mid := sig.Mid
				c := webrtc.ICECandidateInit{Candidate: sig.Candidate, SDPMid: &mid}
				if pc.RemoteDescription() == nil {
					pending = append(pending, c)
				} else if err := pc.AddICECandidate(c); err != nil {
					t.Errorf("add candidate: %v", err)
				}
			}
		}
	}()
}

func waitOpen(t *testing.T, dcs ...*webrtc.DataChannel) {
	t.Helper()
	for _, dc := range dcs {
		open := make(chan struct{})
		var once sync.Once
		dc.OnOpen(func() { once.Do(func() { close(open) }) })
		if dc.ReadyState() == webrtc.DataChannelStateOpen {
			once.Do(func() { close(open) })
		}
		select {
		case <-open:
		case <-time.After(15 * time.Second):
			t.Fatalf("channel %s did not open", dc.Label())
		}
	}
}

func selectedPairIsRelay(t *testing.T, pc *webrtc.PeerConnection) {
	t.Helper()
	pair, err := pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil {
		t.Fatalf("no selected pair: %v", err)
	}
	if pair.Local.Typ != webrtc.ICECandidateTypeRelay || pair.Remote.Typ != webrtc.ICECandidateTypeRelay {
		t.Fatalf("selected pair %s/%s, want relay/relay", pair.Local.Typ, pair.Remote.Typ)
	}
}

// TestTwoPionPeersThroughEmbeddedTURN: a host and a client join through the
// lobby, negotiate over it, and exchange game packets relay to relay.
func TestTwoPionPeersThroughEmbeddedTURN(t *testing.T) {
	s := startServer(t)
	addr := s.Addrs().HTTP
	hostL := dialLobby(t, addr, "Host")
	rj := hostL.create("pion", 2, "")
	clientL := dialLobby(t, addr, "Client")
	crj, err := clientL.join(rj.Room.Code, "")
	if err != nil {
		t.Fatal(err)
	}
	var pj protocol.PlayerJoined
	hostL.next(protocol.TypePlayerJoined, &pj)

	hostPC, hostGame, hostEvents := newRelayPeer(t, rj.ICE)
	clientPC, clientGame, clientEvents := newRelayPeer(t, crj.ICE)
	signalPeer(t, hostL, hostPC, crj.You, true)
	signalPeer(t, clientL, clientPC, rj.You, false)

	// Host echoes every game packet; counts events.
	hostGame.OnMessage(func(m webrtc.DataChannelMessage) { _ = hostGame.Send(m.Data) })
	var hostGotEvents atomic.Int32
	hostEvents.OnMessage(func(webrtc.DataChannelMessage) { hostGotEvents.Add(1) })
	echoes := make(chan []byte, 256)
	clientGame.OnMessage(func(m webrtc.DataChannelMessage) { echoes <- m.Data })

	offer, err := clientPC.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := clientPC.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	if err := clientL.call(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: offer.SDP}, &protocol.OK{}); err != nil {
		t.Fatal(err)
	}
	waitOpen(t, clientGame, clientEvents, hostGame, hostEvents)
	selectedPairIsRelay(t, clientPC)
	selectedPairIsRelay(t, hostPC)

	const n = 100
	got := 0
	for i := 0; i < n; i++ {
		pkt := []byte(fmt.Sprintf("input %03d", i))
		if err := clientGame.Send(pkt); err != nil {
			t.Fatal(err)
		}
		if err := clientEvents.SendText("event"); err != nil {
			t.Fatal(err)
		}
		// One packet in flight at a time: the channel is unreliable, and
		// pacing keeps a loopback run loss-free so the count is exact.
		select {
		case e := <-echoes:
			if !bytes.Equal(e, pkt) {
				t.Fatalf("echo %q, want %q", e, pkt)
			}
			got++
		case <-time.After(2 * time.Second):
			t.Logf("packet %d lost", i)
		}
	}
	if got < n*95/100 {
		t.Fatalf("%d of %d game packets echoed", got, n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for hostGotEvents.Load() != n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if hostGotEvents.Load() != n {
		t.Fatalf("reliable channel delivered %d of %d", hostGotEvents.Load(), n)
	}
}

// TestNoOpenRelay: with real lobby credentials, a TURN client can reach the
// relay of a member of its own room and nothing else.
func TestNoOpenRelay(t *testing.T) {
	s := startServer(t)
	a := s.Addrs()
	hostL := dialLobby(t, a.HTTP, "Host")
	roomA := hostL.create("A", 4, "")
	mateL := dialLobby(t, a.HTTP, "Mate")
	mate, err := mateL.join(roomA.Room.Code, "")
	if err != nil {
		t.Fatal(err)
	}
	otherL := dialLobby(t, a.HTTP, "Other")
	roomB := otherL.create("B", 4, "")

	prober := allocate(t, a.TURNUDP, roomA.ICE)
	mateRelay := allocate(t, a.TURNUDP, mate.ICE)
	otherRelay := allocate(t, a.TURNUDP, roomB.ICE)

	// A plain UDP socket on loopback, as any local service would have.
	victim, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()

	// TURN delivers to a client only from peers it has a permission for,
	// so the room mate and the other room open theirs towards the prober,
	// exactly as WebRTC peers do. The mate's packet also shows the path
	// between members of one room works.
	buf := make([]byte, 64)
	if _, err := prober.WriteTo([]byte("open"), mateRelay.LocalAddr()); err != nil { // the prober's own permission
		t.Fatal(err)
	}
	for _, c := range []net.PacketConn{mateRelay, otherRelay} {
		if _, err := c.WriteTo([]byte("hello"), prober.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	_ = prober.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, from, err := prober.ReadFrom(buf); err != nil || string(buf[:n]) != "hello" || from.String() != mateRelay.LocalAddr().String() {
		t.Fatalf("room mate's packet: %q from %v, %v", buf[:n], from, err)
	}

	send := func(to net.Addr) { _, _ = prober.WriteTo([]byte("probe"), to) }
	send(victim.LocalAddr())
	send(otherRelay.LocalAddr())
	// The same loopback service, spelled as IPv4-mapped IPv6.
	send(&net.UDPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: victim.LocalAddr().(*net.UDPAddr).Port}) //nolint:forcetypeassert // a UDP socket
	// Addresses that are not our relay are refused at CreatePermission.
	for _, dst := range []string{"10.0.0.1:9", "169.254.169.254:80", "192.168.1.1:53", "[64:ff9b::a00:1]:9", "[2002:a00:1::]:9"} {
		ua, err := net.ResolveUDPAddr("udp", dst)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := prober.WriteTo([]byte("probe"), ua); err == nil {
			t.Errorf("send to %s was accepted", dst)
		}
	}
	// Control: after all the probes, the prober still reaches its mate, so
	// the silence below means the probes were dropped, not lost.
	send(mateRelay.LocalAddr())
	_ = mateRelay.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		n, _, err := mateRelay.ReadFrom(buf)
		if err != nil {
			t.Fatalf("control packet to a room mate: %v", err)
		}
		if string(buf[:n]) == "probe" {
			break
		}
	}
	for name, c := range map[string]net.PacketConn{"loopback service": victim, "other room's relay": otherRelay} {
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if n, from, err := c.ReadFrom(buf); err == nil {
			t.Errorf("%s received %q from %v", name, buf[:n], from)
		}
	}
}

// allocate makes a TURN allocation with lobby-issued credentials.
func allocate(t *testing.T, turnAddr string, ice protocol.ICE) net.PacketConn {
	t.Helper()
	relay, err := tryAllocate(t, turnAddr, ice)
	if err != nil {
		t.Fatalf("allocate: %v", err)
	}
	return relay
}

// tryAllocate is allocate for a test that expects a refusal: it returns the
// server's error. Each call is a new client socket, so a new allocation.
func tryAllocate(t *testing.T, turnAddr string, ice protocol.ICE) (net.PacketConn, error) {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		STUNServerAddr: turnAddr,
		TURNServerAddr: turnAddr,
		Conn:           conn,
		Username:       ice.Servers[0].Username,
		Password:       ice.Servers[0].Credential,
		LoggerFactory:  logging.NewDefaultLoggerFactory(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(); err != nil {
		t.Fatal(err)
	}
	relay, err := c.Allocate()
	if err != nil {
		c.Close()
		conn.Close()
		return nil, err
	}
	t.Cleanup(func() { relay.Close(); c.Close(); conn.Close() })
	return relay, nil
}

func iceFromJSON(r iceResponse) protocol.ICE {
	ice := protocol.ICE{TTL: r.TTL}
	for _, s := range r.ICEServers {
		ice.Servers = append(ice.Servers, protocol.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential})
	}
	return ice
}
