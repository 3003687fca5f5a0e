package protocol

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata vector files (golden.json, names.json) from the Go cases")

// golden is one vector in testdata/golden.json. The TypeScript codec
// (web/packages/protocol) reads the same file and must produce the same bytes.
type golden struct {
	Name string          `json:"name"`
	Hex  string          `json:"hex"`
	Type string          `json:"t"`
	ID   uint32          `json:"id,omitempty"`
	Body json.RawMessage `json:"b,omitempty"`
}

type goldenCase struct {
	name string
	typ  string
	id   uint32
	body any
}

var goldenCases = []goldenCase{
	{"hello", TypeHello, 1, &Hello{Version: Version, Name: "Ada"}},
	{"welcome", TypeWelcome, 1, &Welcome{Version: Version, Session: "s_4kq9z2mx7c3v", MaxFrame: MaxFrame, Token: "st_q2v7yq4mkd3f6x5b8n2c4w6e"}},
	{"hello resume", TypeHello, 1, &Hello{Version: Version, Resume: "rs_3x9k2m7q4v8b6n5c2w4e6r8t", Received: 300}},
	{"welcome with resume", TypeWelcome, 1, &Welcome{Version: Version, Session: "s_4kq9z2mx7c3v", MaxFrame: MaxFrame,
		Token: "st_q2v7yq4mkd3f6x5b8n2c4w6e", Resume: "rs_3x9k2m7q4v8b6n5c2w4e6r8t", Grace: 20}},
	{"welcome resumed", TypeWelcome, 1, &Welcome{Version: Version, Session: "s_4kq9z2mx7c3v", MaxFrame: MaxFrame,
		Token: "st_q2v7yq4mkd3f6x5b8n2c4w6e", Resume: "rs_7n2c4w6e8r3x9k2m5q4v8b6t", Grace: 20, Resumed: true}},
	{"create migrating room", TypeCreateRoom, 2, &CreateRoom{Name: "arena", MaxPlayers: 4, Public: true, Migrate: true}},
	{"hello with token", TypeHello, 1, &Hello{Version: Version, Name: "Ada", Token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1XzQyIn0.c2ln"}},
	{"create members-only room", TypeCreateRoom, 2, &CreateRoom{Name: "club", MaxPlayers: 4, MembersOnly: true}},
	{"verified player", TypePlayerUpdated, 0, &PlayerUpdated{Player: Player{ID: "p3", Name: "Ada", Verified: true, UserID: "u_42", Meta: `{"rank":3}`}}},
	{"player away", TypePlayerUpdated, 0, &PlayerUpdated{Player: Player{ID: "p2", Name: "Grace", Ping: 12, Away: true}}},
	{"host changed", TypeHostChanged, 0, &HostChanged{Host: "p2", Previous: "p1"}},
	{"host silent", TypeHostSilent, 6, &HostSilent{Host: "p1"}},
	{"host check", TypeHostCheck, 0, &HostCheck{Nonce: 3_000_000_000}},
	{"host alive", TypeHostAlive, 0, &HostAlive{Nonce: 3_000_000_000}},
	{"host replaced", TypeHostReplaced, 0, &HostReplaced{Room: "ABC2345", Host: "p2", Reason: ReasonUnresponsive}},
	{"ice refresh", TypeICERefresh, 0, &ICERefresh{ICE: ICE{Servers: []ICEServer{{
		URLs: []string{"turn:127.0.0.1:3478?transport=udp"}, Username: "1795003600:s_4kq9z2mx7c3v", Credential: "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg="}}, TTL: 3600}}},
	{"error reply", TypeError, 7, &Error{Code: CodeRoomFull, Message: "room ABC2345 is full (8 of 8)"}},
	{"ok", TypeOK, 9, &OK{}},
	{"create room", TypeCreateRoom, 2, &CreateRoom{Name: "Friday ball ⚽", MaxPlayers: 8, Public: true, Password: "hunter2"}},
	{"create private no password", TypeCreateRoom, 3, &CreateRoom{Name: "x", MaxPlayers: 2}},
	{"join room", TypeJoinRoom, 4, &JoinRoom{Code: "ABC2345", Password: "hunter2"}},
	{"leave room no body", TypeLeaveRoom, 5, nil},
	{"room joined", TypeRoomJoined, 4, &RoomJoined{
		Room:    RoomInfo{Code: "ABC2345", Name: "Friday ball ⚽", MaxPlayers: 8, Public: true, HasPassword: true, Host: "p1"},
		You:     "p2",
		Players: []Player{{ID: "p1", Name: "Ada"}, {ID: "p2", Name: "Grace"}},
		ICE: ICE{Servers: []ICEServer{{
			URLs:       []string{"turn:127.0.0.1:3478?transport=udp", "turn:127.0.0.1:3478?transport=tcp"},
			Username:   "1795000000:s_4kq9z2mx7c3v",
			Credential: "q0XQm8aCGtQ0m2bqf1Q7v1VLhH8=",
		}}, TTL: 3600},
	}},
	{"player joined event", TypePlayerJoined, 0, &PlayerJoined{Player: Player{ID: "p3", Name: "Linus"}}},
	{"player left event", TypePlayerLeft, 0, &PlayerLeft{ID: "p3", Reason: ReasonDisconnect}},
	{"room closed event", TypeRoomClosed, 0, &RoomClosed{Reason: ReasonHostLeft}},
	{"signal offer", TypeSignal, 0, &Signal{To: "p1", From: "p2", Kind: SignalOffer, SDP: "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\n"}},
	{"signal candidate", TypeSignal, 0, &Signal{To: "p2", From: "p1", Kind: SignalCandidate,
		Candidate: "candidate:1 1 udp 16777215 127.0.0.1 50000 typ relay raddr 0.0.0.0 rport 0", Mid: "0"}},
	{"signal end of candidates", TypeSignal, 0, &Signal{To: "p2", Kind: SignalCandidate}},
	{"hello with device", TypeHello, 1, &Hello{Version: Version, Name: "Ada", Device: "d_7Hq2LmX9vKp4Rt8Wz", Pings: true}},
	{"hello without name", TypeHello, 1, &Hello{Version: Version, Device: "d_7Hq2LmX9vKp4Rt8Wz"}},
	{"create room with mode", TypeCreateRoom, 2, &CreateRoom{Name: "Lunch league", MaxPlayers: 16, Mode: "Free for all"}},
	{"room joined started", TypeRoomJoined, 4, &RoomJoined{
		Room:    RoomInfo{Code: "ABC2345", Name: "Lunch league", MaxPlayers: 16, Host: "p1", Mode: "Free for all", Started: true},
		You:     "p3",
		Players: []Player{{ID: "p1", Name: "Ada", Ping: 12}, {ID: "p2", Name: "Ada (2)", Ready: true, Ping: 1}, {ID: "p3", Name: "Bob"}},
		ICE:     ICE{Servers: []ICEServer{{URLs: []string{"turn:127.0.0.1:3478?transport=udp"}, Username: "1795000000:s_x", Credential: "c"}}, TTL: 60},
	}},
	{"set name", TypeSetName, 10, &SetName{Name: "Grace ✨"}},
	{"set ready", TypeSetReady, 11, &SetReady{Ready: true}},
	{"set not ready", TypeSetReady, 12, &SetReady{}},
	{"update room", TypeUpdateRoom, 13, &UpdateRoom{Name: "Lunch league", MaxPlayers: 6, Public: true, Mode: "Teams", Password: "s3cret", SetPassword: true}},
	{"update room keep password", TypeUpdateRoom, 14, &UpdateRoom{Name: "x", MaxPlayers: 2}},
	{"kick", TypeKick, 15, &Kick{ID: "p2"}},
	{"kick and ban", TypeKick, 15, &Kick{ID: "p2", Ban: true}},
	{"start game", TypeStartGame, 16, nil},
	{"chat", TypeChat, 17, &Chat{Text: "<b>gg</b> 🎉"}},
	{"watch rooms", TypeWatchRooms, 18, nil},
	{"unwatch rooms", TypeUnwatchRooms, 19, nil},
	{"player updated event", TypePlayerUpdated, 0, &PlayerUpdated{Player: Player{ID: "p2", Name: "Grace", Ready: true, Ping: 37}}},
	{"room updated event", TypeRoomUpdated, 0, &RoomUpdated{Room: RoomInfo{Code: "ABC2345", Name: "Lunch league", MaxPlayers: 6, Public: true, HasPassword: true, Host: "p1", Mode: "Teams"}}},
	{"room updated event with spectators", TypeRoomUpdated, 0, &RoomUpdated{Room: RoomInfo{Code: "ABC2345", Host: "p1", Started: true, Spectators: 42}}},
	{"game started event", TypeGameStarted, 0, &GameStarted{Mode: "Teams"}},
	{"chat message event", TypeChatMessage, 0, &ChatMessage{From: "p2", Name: "Grace", Text: "<img src=x onerror=alert(1)>", At: 1795000000123}},
	{"room kicked event", TypeRoomClosed, 0, &RoomClosed{Reason: ReasonKicked}},
	{"player kicked event", TypePlayerLeft, 0, &PlayerLeft{ID: "p2", Reason: ReasonKicked}},
	{"kicked error", TypeError, 20, &Error{Code: CodeKicked, Message: "you were kicked from room ABC2345"}},
	{"banned error", TypeError, 20, &Error{Code: CodeBanned, Message: "the host banned you from room ABC2345"}},
	{"room list", TypeRoomList, 18, &RoomList{Rooms: []RoomSummary{
		{Code: "ABC2345", Name: "Lunch league", Host: "Ada", Players: 3, MaxPlayers: 16, Mode: "Free for all", Started: true},
		{Code: "XYZ6789", Name: "Locked", Host: "Bob", Players: 1, MaxPlayers: 2, HasPassword: true},
	}}},
	{"room list empty", TypeRoomList, 18, &RoomList{}},
	{"room list update", TypeRoomListUpdate, 0, &RoomListUpdate{
		Set: []RoomSummary{{Code: "ABC2345", Name: "Lunch league", Host: "Ada", Players: 4, MaxPlayers: 16, Mode: "Free for all"}},
		Del: []string{"XYZ6789", "QRS2345"},
	}},
	{"big id", TypeJoinRoom, 4294967295, &JoinRoom{Code: "ZZZZZZZ"}},
	{"id 300", TypeLeaveRoom, 300, &LeaveRoom{}},
	{"quick play", TypeQuickPlay, 21, &QuickPlay{Mode: "Free for all"}},
	{"quick play new room settings", TypeQuickPlay, 22, &QuickPlay{Mode: "Duel", MaxPlayers: 2, Migrate: true}},
	{"create party", TypeCreateParty, 23, nil},
	{"join party", TypeJoinParty, 24, &JoinParty{Code: "PQR2345"}},
	{"leave party", TypeLeaveParty, 25, nil},
	{"party joined", TypePartyJoined, 24, &PartyJoined{Party: Party{Code: "PQR2345", Leader: "m1",
		Members: []PartyMember{{ID: "m1", Name: "Ada"}, {ID: "m2", Name: "Grace"}}}, You: "m2"}},
	{"party updated event", TypePartyUpdated, 0, &PartyUpdated{Party: Party{Code: "PQR2345", Leader: "m2",
		Members: []PartyMember{{ID: "m2", Name: "Grace"}}}}},
	{"room joined by party event", TypeRoomJoined, 0, &RoomJoined{
		Room:    RoomInfo{Code: "ABC2345", Name: "Quick play: Duel", MaxPlayers: 2, Public: true, Host: "p1", Mode: "Duel"},
		You:     "p2",
		Players: []Player{{ID: "p1", Name: "Ada"}, {ID: "p2", Name: "Grace"}},
		ICE:     ICE{Servers: []ICEServer{{URLs: []string{"turn:127.0.0.1:3478?transport=udp"}, Username: "1795000000:s_y", Credential: "c"}}, TTL: 60},
	}},
	{"party not found error", TypeError, 24, &Error{Code: CodePartyNotFound, Message: "no party with code PQR2345"}},
	{"party full error", TypeError, 24, &Error{Code: CodePartyFull, Message: "party PQR2345 is full (4 of 4)"}},
	{"already in party error", TypeError, 23, &Error{Code: CodeAlreadyInParty, Message: "leave party PQR2345 first"}},
	{"not in party error", TypeError, 25, &Error{Code: CodeNotInParty, Message: "not in a party"}},
	{"spectate", TypeSpectate, 26, &Spectate{Code: "ABC2345", Password: "hunter2"}},
	{"spectating", TypeSpectating, 26, &Spectating{Room: RoomSummary{Code: "ABC2345", Name: "Lunch league", Host: "Ada",
		Players: 2, MaxPlayers: 2, Mode: "Duel", Started: true}, DelayMs: 2000, MaxData: 16320}},
	{"stop spectating", TypeStopSpectating, 27, nil},
	{"spectator keyframe from host", TypeSpectatorFrame, 0, &SpectatorFrame{Key: true, Data: []byte{1, 2, 3, 0xff}}},
	{"spectator delta event", TypeSpectatorFrame, 0, &SpectatorFrame{Data: []byte{9}}},
	{"spectate ended event", TypeSpectateEnded, 0, &SpectateEnded{Reason: ReasonHostLeft}},
	{"no spectator seat error", TypeError, 26, &Error{Code: CodeRoomFull, Message: "room ABC2345 has no spectator seat left (100 of 100)"}},
	// Cluster: a node redirects to the room's node, a room lost with its
	// node, the node and region in welcome, a region on a listed room and
	// asked for by create.
	{"room elsewhere error", TypeError, 27, &Error{Code: CodeRoomElsewhere, Message: "room ABC2345 is on node b",
		URL: "wss://b.example.com/ws", Region: "eu-west"}},
	{"room lost error", TypeError, 28, &Error{Code: CodeRoomLost, Message: "room ABC2345 was lost with its node"}},
	{"welcome in a cluster", TypeWelcome, 1, &Welcome{Version: Version, Session: "s_4kq9z2mx7c3v", MaxFrame: MaxFrame,
		Token: "st_q2v7yq4mkd3f6x5b8n2c4w6e", Node: "a", Region: "us-east"}},
	{"room list with regions", TypeRoomList, 29, &RoomList{Rooms: []RoomSummary{
		{Code: "ABC2345", Name: "Lunch league", Host: "Ada", Players: 4, MaxPlayers: 16, Region: "eu-west"}}}},
	{"create room in a region", TypeCreateRoom, 30, &CreateRoom{Name: "arena", MaxPlayers: 4, Public: true, Region: "eu-west"}},
	// Issue 16: TURN credentials with the welcome, so ICE gathering can
	// start before the join's reply.
	{"welcome with ice", TypeWelcome, 1, &Welcome{Version: Version, Session: "s_4kq9z2mx7c3v", MaxFrame: MaxFrame,
		Token: "st_q2v7yq4mkd3f6x5b8n2c4w6e", Resume: "rt_9f3k2m7q4v8x6c5b2n4w7e3r", Grace: 30,
		ICE: &ICE{Servers: []ICEServer{{URLs: []string{"turn:127.0.0.1:3478?transport=udp", "turn:127.0.0.1:3478?transport=tcp"},
			Username: "1795000000:s_4kq9z2mx7c3v", Credential: "q1b2c3d4e5f6g7h8i9j0k1l2m3n="}}, TTL: 3600}}},
}

func TestGolden(t *testing.T) {
	vectors := loadVectors(t, "golden.json", len(goldenCases), "TestGolden", func() []golden {
		var out []golden
		for _, c := range goldenCases {
			frame, err := Encode(c.typ, c.id, c.body)
			if err != nil {
				t.Fatal(err)
			}
			g := golden{Name: c.name, Hex: hex.EncodeToString(frame), Type: c.typ, ID: c.id}
			if c.body != nil {
				if g.Body, err = json.Marshal(c.body); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, g)
		}
		return out
	})
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			frame, err := hex.DecodeString(v.Hex)
			if err != nil {
				t.Fatal(err)
			}
			env, err := Decode(frame)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if env.Type != v.Type || env.ID != v.ID {
				t.Fatalf("envelope = %q/%d, want %q/%d", env.Type, env.ID, v.Type, v.ID)
			}
			var body any
			if len(env.Body) > 0 {
				b, ok := NewBody(env.Type)
				if !ok {
					t.Fatalf("unknown type %q", env.Type)
				}
				if err := DecodeBody(env, b); err != nil {
					t.Fatal(err)
				}
				body = b
				// The decoded value must match the JSON form both codecs share.
				want, _ := NewBody(env.Type)
				if err := json.Unmarshal(v.Body, want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(b, want) {
					t.Fatalf("decoded %+v, want %+v", b, want)
				}
			}
			again, err := Encode(env.Type, env.ID, body)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, frame) {
				t.Fatalf("re-encoded\n %x\nwant\n %x", again, frame)
			}
		})
	}
}

// loadVectors reads testdata/name, a JSON array of want vectors shared with
// the TypeScript tests, after rewriting it from generate when -update is set.
// A count other than cases means the Go cases and the file drifted apart.
func loadVectors[V any](t *testing.T, name string, cases int, test string, generate func() []V) []V {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		data, err := json.MarshalIndent(generate(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vectors []V
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) != cases {
		t.Fatalf("%s has %d vectors, the test %d cases: run go test ./protocol -run %s -update", name, len(vectors), cases, test)
	}
	return vectors
}
