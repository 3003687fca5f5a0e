package signaling

import (
	"testing"

	"github.com/hostrelay/hostrelay/protocol"
)

// TestEveryRequestAnsweredOnce: every request a session may send after
// hello, sent with an id, gets exactly one frame with that id back (its
// reply or an Error), whether it is served or refused, from a player outside
// a room, a member and the host; a request sent after it is answered after it.
func TestEveryRequestAnsweredOnce(t *testing.T) {
	_, url := testHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("r", 4, "").Room.Code
	bob := connect(t, url, "Bob")
	bob.join(code, "")
	outside := connect(t, url, "Cy")
	requests := []struct {
		typ  string
		body any
	}{
		{protocol.TypeWatchRooms, nil},
		{protocol.TypeUnwatchRooms, nil},
		{protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "x", MaxPlayers: 2}},
		{protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code}},
		{protocol.TypeSignal, &protocol.Signal{To: "p1", Kind: protocol.SignalOffer, SDP: "v=0"}},
		{protocol.TypeSetName, &protocol.SetName{Name: "Zed"}},
		{protocol.TypeSetReady, &protocol.SetReady{Ready: true}},
		{protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "r", MaxPlayers: 4}},
		{protocol.TypeKick, &protocol.Kick{ID: "p9"}},
		{protocol.TypeStartGame, nil},
		{protocol.TypeChat, &protocol.Chat{Text: "hi"}},
		{protocol.TypeHello, &protocol.Hello{Version: protocol.Version}},
		{"nonsense", nil},
		{protocol.TypeLeaveRoom, nil},
	}
	// Bob leaves before the host closes the room.
	for _, c := range []*client{outside, bob, host} {
		for _, r := range requests {
			id := c.request(r.typ, r.body)
			after := c.request(protocol.TypeUnwatchRooms, nil)
			answers := 0
			var last protocol.Envelope
			for {
				env, err := c.read()
				if err != nil {
					t.Fatalf("%s: %v", r.typ, err)
				}
				if env.ID == after {
					break
				}
				if env.ID == id {
					answers++
					last = env
				}
			}
			if answers != 1 {
				t.Fatalf("%s: %d answers, want 1 (last %s)", r.typ, answers, last.Type)
			}
		}
	}
}
