package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/hostrelay/hostrelay/protocol"
)

// maxBufferedGame bounds what may wait in the game channel's send buffer.
// Past it a send is dropped: unthrottled sends stall an unreliable channel
// (DESIGN.md) and a queued input is stale by the time it would leave.
const maxBufferedGame = 64 << 10

// signalTimeout bounds sending one signal over the lobby.
const signalTimeout = 5 * time.Second

// peerConfig is relay-only ICE through the issued TURN servers.
func peerConfig(ice protocol.ICE) webrtc.Configuration {
	cfg := webrtc.Configuration{ICETransportPolicy: webrtc.ICETransportPolicyRelay}
	for _, s := range ice.Servers {
		cfg.ICEServers = append(cfg.ICEServers, webrtc.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential})
	}
	return cfg
}

// peer is the WebRTC connection between this session and one other player.
type peer struct {
	room   *Room
	id     string
	pc     *webrtc.PeerConnection
	game   *webrtc.DataChannel
	events *webrtc.DataChannel

	mu        sync.Mutex
	remoteSet bool
	// offerSession is the o= session id of the last offer applied: the same
	// RTCPeerConnection keeps it across renegotiations (an ICE restart after
	// fresh credentials), a new one picks another.
	offerSession string
	pending      []webrtc.ICECandidateInit // candidates that overtook the description
	openCount    int

	// pion gathers (and calls OnICECandidate) as soon as SetLocalDescription
	// runs, so a candidate can reach the signalling socket before the offer
	// it belongs to. The host drops candidates for a peer it has not seen an
	// offer from, so local candidates wait in outbox until the description
	// is sent. sigMu keeps them in gathering order.
	sigMu     sync.Mutex
	localSent bool
	outbox    []protocol.Signal

	open      atomic.Bool
	closeOnce sync.Once
}

func (r *Room) newPeer(id string) (*peer, error) {
	r.mu.Lock()
	ice := r.ice
	r.mu.Unlock()
	if rewrite := r.lobby.opts.RewriteICE; rewrite != nil {
		ice = rewrite(ice)
	}
	pc, err := r.lobby.api.NewPeerConnection(peerConfig(ice))
	if err != nil {
		return nil, fmt.Errorf("client: peer connection: %w", err)
	}
	p := &peer{room: r, id: id, pc: pc}
	yes, no := true, false
	var gameID, eventsID, zero uint16 = 0, 1, 0
	// Negotiated channels exist on both sides without an in-band handshake,
	// with the same ids and options as the browser SDK.
	if p.game, err = pc.CreateDataChannel("game", &webrtc.DataChannelInit{
		Negotiated: &yes, ID: &gameID, Ordered: &no, MaxRetransmits: &zero}); err == nil {
		p.events, err = pc.CreateDataChannel("events", &webrtc.DataChannelInit{Negotiated: &yes, ID: &eventsID, Ordered: &yes})
	}
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("client: data channel: %w", err)
	}
	for ch, dc := range map[Channel]*webrtc.DataChannel{Game: p.game, Events: p.events} {
		dc.OnOpen(p.channelOpened)
		dc.OnMessage(func(m webrtc.DataChannelMessage) {
			r.deliver(Message{From: id, Channel: ch, Data: m.Data})
		})
	}
	pc.OnICECandidate(p.sendCandidate)
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateFailed {
			// Not inline: closing from inside pion's callback can deadlock.
			go p.close(errors.New("client: ICE failed (is the TURN server reachable?)"))
		}
	})

	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_ = pc.Close()
		return nil, ErrClosed
	}
	r.peers[id] = p
	r.mu.Unlock()
	return p, nil
}

func (p *peer) channelOpened() {
	p.mu.Lock()
	p.openCount++
	both := p.openCount == 2
	p.mu.Unlock()
	if both {
		p.open.Store(true)
		p.room.emit(PeerOpen{ID: p.id})
	}
}

func (p *peer) isOpen() bool { return p.open.Load() }

func (p *peer) sendSignal(s protocol.Signal) error {
	s.To = p.id
	ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
	defer cancel()
	return p.room.lobby.send(ctx, protocol.TypeSignal, 0, &s)
}

func (p *peer) sendCandidate(c *webrtc.ICECandidate) {
	s := protocol.Signal{Kind: protocol.SignalCandidate}
	if c != nil { // nil is the end of gathering
		init := c.ToJSON()
		s.Candidate = init.Candidate
		if init.SDPMid != nil {
			s.Mid = *init.SDPMid
		}
	}
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	if !p.localSent {
		p.outbox = append(p.outbox, s)
		return
	}
	if err := p.sendSignal(s); err != nil {
		p.room.log.Debug("send candidate", "peer", p.id, "err", err)
	}
}

// sendDescription sends the offer or answer, then the candidates gathered
// while it was being made.
func (p *peer) sendDescription(s protocol.Signal) error {
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	if err := p.sendSignal(s); err != nil {
		return err
	}
	p.localSent = true
	for _, c := range p.outbox {
		if err := p.sendSignal(c); err != nil {
			p.room.log.Debug("send candidate", "peer", p.id, "err", err)
		}
	}
	p.outbox = nil
	return nil
}

// offer starts negotiation: the joining client always offers.
func (p *peer) offer() error {
	o, err := p.pc.CreateOffer(nil)
	if err == nil {
		err = p.pc.SetLocalDescription(o)
	}
	if err == nil {
		err = p.sendDescription(protocol.Signal{Kind: protocol.SignalOffer, SDP: o.SDP})
	}
	if err != nil {
		return fmt.Errorf("client: offer: %w", err)
	}
	return nil
}

// apply takes one signal from this peer.
func (p *peer) apply(m protocol.Signal) error {
	switch m.Kind {
	case protocol.SignalOffer, protocol.SignalAnswer:
		typ := webrtc.SDPTypeAnswer
		if m.Kind == protocol.SignalOffer {
			typ = webrtc.SDPTypeOffer
		}
		if typ == webrtc.SDPTypeOffer {
			// Local candidates of a renegotiation wait for its answer, as
			// the first ones waited for the first: a candidate of the new
			// ICE session must not reach the peer before the session does.
			p.sigMu.Lock()
			p.localSent = false
			p.sigMu.Unlock()
		}
		if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: typ, SDP: m.SDP}); err != nil {
			return fmt.Errorf("client: remote %s: %w", m.Kind, err)
		}
		p.mu.Lock()
		if typ == webrtc.SDPTypeOffer {
			p.offerSession = sdpSession(m.SDP)
		}
		p.remoteSet = true
		pending := p.pending
		p.pending = nil
		p.mu.Unlock()
		for _, c := range pending {
			if err := p.pc.AddICECandidate(c); err != nil {
				return fmt.Errorf("client: candidate: %w", err)
			}
		}
		if typ == webrtc.SDPTypeOffer {
			a, err := p.pc.CreateAnswer(nil)
			if err == nil {
				err = p.pc.SetLocalDescription(a)
			}
			if err == nil {
				err = p.sendDescription(protocol.Signal{Kind: protocol.SignalAnswer, SDP: a.SDP})
			}
			if err != nil {
				return fmt.Errorf("client: answer: %w", err)
			}
		}
	case protocol.SignalCandidate:
		if m.Candidate == "" {
			return nil // end of candidates: nothing to do for pion
		}
		mid := m.Mid
		c := webrtc.ICECandidateInit{Candidate: m.Candidate, SDPMid: &mid}
		p.mu.Lock()
		if !p.remoteSet {
			p.pending = append(p.pending, c)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		if err := p.pc.AddICECandidate(c); err != nil {
			return fmt.Errorf("client: candidate: %w", err)
		}
	}
	return nil
}

// renegotiates reports whether offer sdp comes from the connection this
// peer already answered: then it is answered in place (pion restarts ICE
// when the offer's credentials changed) and the channels stay open.
func (p *peer) renegotiates(sdp string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := sdpSession(sdp)
	return s != "" && s == p.offerSession
}

// sdpSession returns the session id of the SDP's o= line ("" if none).
func sdpSession(sdp string) string {
	for line := range strings.Lines(sdp) {
		if rest, ok := strings.CutPrefix(line, "o="); ok {
			if f := strings.Fields(rest); len(f) >= 2 {
				return f[1]
			}
			return ""
		}
	}
	return ""
}

func (p *peer) send(ch Channel, data []byte) error {
	dc := p.events
	if ch == Game {
		dc = p.game
		if dc.BufferedAmount() > maxBufferedGame {
			return nil // dropped on purpose; see maxBufferedGame
		}
	}
	if err := dc.Send(data); err != nil {
		return fmt.Errorf("client: send to %s on %s: %w", p.id, ch, err)
	}
	return nil
}

func (p *peer) selectedPair() (string, string, error) {
	sctp := p.pc.SCTP()
	if sctp == nil {
		return "", "", fmt.Errorf("%w: %s not connected", ErrNoPeer, p.id)
	}
	pair, err := sctp.Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil {
		return "", "", fmt.Errorf("client: no selected candidate pair to %s: %w", p.id, err)
	}
	return pair.Local.Typ.String(), pair.Remote.Typ.String(), nil
}

// close ends the connection once; err, if any, is why.
func (p *peer) close(err error) {
	p.closeOnce.Do(func() {
		r := p.room
		r.mu.Lock()
		if r.peers[p.id] == p {
			delete(r.peers, p.id)
		}
		r.mu.Unlock()
		wasOpen := p.open.Swap(false)
		if cerr := p.pc.Close(); cerr != nil {
			r.log.Debug("close peer connection", "peer", p.id, "err", cerr)
		}
		if wasOpen || err != nil {
			r.emit(PeerClosed{ID: p.id, Err: err})
		}
	})
}
