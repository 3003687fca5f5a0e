package signaling

import (
	"testing"

	"github.com/hostrelay/hostrelay/protocol"
)

// TestLookAlikeNames: on a live hub, a name that hides characters is refused
// with a message naming the character, and a name that only looks like one
// already in the room joins with a suffix.
func TestLookAlikeNames(t *testing.T) {
	_, url := testHub(t, nil)
	host := connectWith(t, url, protocol.Hello{Name: "Host"})
	code := host.create("r", 16, "").Room.Code

	c := connectWith(t, url, protocol.Hello{})
	for name, msg := range map[string]string{
		"Host\u200b":   "name contains an invisible character (U+200B)",
		"\u202eTSOH":   "name contains a bidirectional control character (U+202E)",
		"\u200b\u200b": "name contains an invisible character (U+200B)",
		"\u3164":       "name contains an invisible character (U+3164)", // Hangul filler
		"\u2800":       "name contains an invisible character (U+2800)", // blank braille cell
	} {
		if e := c.refused(protocol.CodeInvalidArgument, protocol.TypeSetName, &protocol.SetName{Name: name}); e.Message != msg {
			t.Errorf("setName %+q: %q, want %q", name, e.Message, msg)
		}
	}
	// The same rules hold for the name in hello.
	bad := dial(t, url, nil)
	bad.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "\u202eTSOH"})
	if e := bad.expectError(protocol.CodeInvalidArgument); e.Message != "name contains a bidirectional control character (U+202E)" {
		t.Errorf("hello: %q", e.Message)
	}

	// Look-alikes of "Host" join with a suffix: Cyrillic о, Cyrillic
	// capitals, fullwidth, a zero and another case.
	for i, name := range []string{"H\u043est", "\u041d\u041e\u0405\u0422", "\uff28\uff4f\uff53\uff54", "H0ST", "host"} {
		p := connectWith(t, url, protocol.Hello{Name: name})
		rj := p.join(code, "")
		want := name + " (" + string(rune('2'+i)) + ")"
		if got := rj.Players[len(rj.Players)-1].Name; got != want {
			t.Errorf("%+q joined as %+q, want %+q", name, got, want)
		}
	}

	// Names are kept in NFC: the two spellings of "Zoë" are one name.
	z1 := connectWith(t, url, protocol.Hello{Name: "Zoe\u0308"})
	if rj := z1.join(code, ""); rj.Players[len(rj.Players)-1].Name != "Zo\u00eb" {
		t.Errorf("decomposed Zoë joined as %+q", rj.Players[len(rj.Players)-1].Name)
	}
	z2 := connectWith(t, url, protocol.Hello{Name: "Zo\u00eb"})
	if rj := z2.join(code, ""); rj.Players[len(rj.Players)-1].Name != "Zo\u00eb (2)" {
		t.Errorf("second Zoë joined as %+q", rj.Players[len(rj.Players)-1].Name)
	}
	// Honest names that merely resemble each other in places keep theirs.
	k := connectWith(t, url, protocol.Hello{Name: "Hosta"})
	if rj := k.join(code, ""); rj.Players[len(rj.Players)-1].Name != "Hosta" {
		t.Errorf("Hosta joined as %+q", rj.Players[len(rj.Players)-1].Name)
	}
}
