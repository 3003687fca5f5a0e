package protocol

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateRoomMessages(t *testing.T) {
	ok := []interface{ Validate() error }{
		&Hello{Version: Version}, // no name yet: browsing
		&Hello{Version: Version, Name: "Ada", Device: strings.Repeat("d", MinDevice)},
		&Hello{Version: Version, Device: strings.Repeat("D", MaxDevice)},
		&Hello{Version: Version, Device: "abcXYZ019-_abcdef"},
		&CreateRoom{Name: "r", MaxPlayers: 2, Mode: strings.Repeat("é", MaxMode)},
		&UpdateRoom{Name: "r", MaxPlayers: MaxPlayers, Mode: "Teams", Password: strings.Repeat("p", MaxPassword), SetPassword: true},
		&SetName{Name: strings.Repeat("n", MaxPlayerName)},
		&Kick{ID: "p2"},
		&Chat{Text: strings.Repeat("é", MaxChatText)},
		&Chat{Text: "<script>alert(1)</script>"}, // markup is just text to the server
	}
	for _, m := range ok {
		if err := m.Validate(); err != nil {
			t.Errorf("%+v: %v", m, err)
		}
	}
	bad := []interface{ Validate() error }{
		&Hello{Version: Version, Name: strings.Repeat("n", MaxPlayerName+1)},
		&Hello{Version: Version, Device: strings.Repeat("d", MinDevice-1)},
		&Hello{Version: Version, Device: strings.Repeat("d", MaxDevice+1)},
		&Hello{Version: Version, Device: "abcdefghijklmnop:"},
		&Hello{Version: Version, Device: "abcdefghijklmnopé"},
		&CreateRoom{Name: "r", MaxPlayers: 2, Mode: strings.Repeat("é", MaxMode+1)},
		&CreateRoom{Name: "r", MaxPlayers: 2, Mode: "a\nb"},
		&UpdateRoom{Name: "", MaxPlayers: 4},
		&UpdateRoom{Name: "r", MaxPlayers: MaxPlayers + 1},
		&UpdateRoom{Name: "r", MaxPlayers: MinPlayers - 1},
		&UpdateRoom{Name: "r", MaxPlayers: 4, Password: strings.Repeat("p", MaxPassword+1), SetPassword: true},
		&SetName{Name: ""},
		&SetName{Name: "   "},
		&SetName{Name: strings.Repeat("n", MaxPlayerName+1)},
		&Kick{},
		&Chat{Text: ""},
		&Chat{Text: " \t "},
		&Chat{Text: strings.Repeat("é", MaxChatText+1)},
		&Chat{Text: "two\nlines"},
		&Chat{Text: "bell\x07"},
	}
	for _, m := range bad {
		err := m.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%+v: %v, want a ValidationError", m, err)
		}
	}
}

func TestNewBodyKnowsEveryType(t *testing.T) {
	for _, typ := range []string{TypeSetName, TypeSetReady, TypeUpdateRoom, TypeKick, TypeStartGame, TypeChat,
		TypePlayerUpdated, TypeRoomUpdated, TypeGameStarted, TypeChatMessage, TypeWatchRooms, TypeUnwatchRooms,
		TypeRoomList, TypeRoomListUpdate} {
		if _, ok := NewBody(typ); !ok {
			t.Errorf("NewBody(%q) unknown", typ)
		}
	}
	if _, ok := NewBody("teleport"); ok {
		t.Error("NewBody knows teleport")
	}
}
