package protocol

import (
	"errors"
	"strings"
	"testing"
)

// nameVector is one entry of testdata/names.json, which the TypeScript port
// (web/packages/protocol/src/names.test.ts) checks too: the input, whether it is
// accepted as a player name (or as other text: room names, chat), why not,
// its normalised form and both skeletons of that form.
type nameVector struct {
	Name       string `json:"name"`
	In         string `json:"in"`
	Text       bool   `json:"text,omitempty"` // checked as ValidateText, not ValidatePlayerName
	OK         bool   `json:"ok"`
	Reason     string `json:"reason,omitempty"`
	Normalized string `json:"normalized"`
	Shown      string `json:"shown"`
	Folded     string `json:"folded"`
}

var nameInputs = []struct {
	name, in string
	text     bool
}{
	{"plain", "Host", false},
	{"lower case", "host", false},
	{"cyrillic o", "H\u043est", false},
	{"cyrillic capitals", "\u041d\u041e\u0405\u0422", false},
	{"greek capital iota and digit zero", "\u0399an B0b", false},
	{"fullwidth", "\uff28\uff4f\uff53\uff54", false},
	{"mathematical letters", "𝔭𝒶ỿ𝕡𝕒ℓ", false},
	{"m and rn", "rnodern", false},
	{"trimmed and spaces collapsed", "  Ada \u00a0\u3000 Lovelace\u2003", false},
	{"nfc", "Zoe\u0308", false},
	{"vietnamese", "Nguy\u1ec5n", false},
	{"persian", "\u0645\u0631\u06cc\u0645", false},
	{"emoji with presentation selector", "Ada \u2764\ufe0f", false},
	{"emoji zwj sequence", "Ada \U0001f469\U0001f3fd\u200d\U0001f4bb", false},
	{"flag", "\U0001f3f3\ufe0f\u200d\U0001f308 Sam", false},
	{"zero width space", "Host\u200b", false},
	{"right-to-left override", "\u202eTSOH", false},
	{"left-to-right mark", "Ada\u200e", false},
	{"zero width joiner between letters", "Ho\u200dst", false},
	{"zero width non-joiner", "Ho\u200cst", false},
	{"invisible only", "\u200b\u200b", false},
	{"hangul filler", "\u3164", false},
	{"braille blank", "\u2800", false},
	{"variation selector alone", "\ufe0f", false},
	{"variation selector after a space", "Ada \ufe0fB", false},
	{"soft hyphen", "Ad\u00ada", false},
	{"word joiner", "Ada\u2060", false},
	{"tag characters", "Ada\U000e0041", false},
	{"line separator", "Ada\u2028Bob", false},
	{"private use", "Ada\ue000", false},
	{"unassigned", "Ada\u0378", false},
	{"noncharacter", "Ada\ufdd0", false},
	{"leading combining mark", "\u0301Ada", false},
	{"tab", "Ada\tBob", false},
	{"byte order mark at the end", "Ada\ufeff", false},
	{"too long", strings.Repeat("a", MaxPlayerName+1), false},
	{"longest", strings.Repeat("\u00e9", MaxPlayerName), false},
	{"empty", "   ", false},
	{"chat with persian zwnj", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", true},
	{"chat with zwnj at the edge", "\u200cHi", true},
	{"chat with rtl override", "gg \u202eez", true},
	{"chat with emoji", "gg \U0001f389", true},
}

func nameVectorOf(name, in string, text bool) nameVector {
	v := nameVector{Name: name, In: in, Text: text}
	var err error
	if text {
		v.Normalized = NormalizeText(in)
		err = ValidateText("text", v.Normalized, MaxChatText)
	} else {
		v.Normalized = NormalizeName(in)
		err = ValidatePlayerName(v.Normalized)
	}
	v.OK = err == nil
	if ve := (*ValidationError)(nil); errors.As(err, &ve) {
		v.Reason = ve.Reason
	}
	v.Shown, v.Folded = NameSkeleton(v.Normalized)
	return v
}

func TestNameVectors(t *testing.T) {
	vectors := loadVectors(t, "names.json", len(nameInputs), "TestNameVectors", func() []nameVector {
		var out []nameVector
		for _, c := range nameInputs {
			out = append(out, nameVectorOf(c.name, c.in, c.text))
		}
		return out
	})
	for _, want := range vectors {
		if got := nameVectorOf(want.Name, want.In, want.Text); got != want {
			t.Errorf("%s:\n got %#v\nwant %#v", want.Name, got, want)
		}
	}
}

// TestNameRules pins the decisions the vectors encode, so that -update cannot
// quietly turn a refusal into an acceptance.
func TestNameRules(t *testing.T) {
	byName := map[string]nameVector{}
	for _, c := range nameInputs {
		byName[c.name] = nameVectorOf(c.name, c.in, c.text)
	}
	accepted := []string{"plain", "cyrillic o", "trimmed and spaces collapsed", "nfc", "vietnamese", "persian",
		"emoji with presentation selector", "emoji zwj sequence", "flag", "longest", "chat with persian zwnj", "chat with emoji"}
	for _, n := range accepted {
		if v := byName[n]; !v.OK {
			t.Errorf("%s %+q refused: %s", n, v.In, v.Reason)
		}
	}
	refused := map[string]string{
		"zero width space":                  "contains an invisible character (U+200B)",
		"right-to-left override":            "contains a bidirectional control character (U+202E)",
		"left-to-right mark":                "contains a bidirectional control character (U+200E)",
		"zero width joiner between letters": "contains an invisible character (U+200D)",
		"zero width non-joiner":             "contains an invisible character (U+200C)",
		"invisible only":                    "contains an invisible character (U+200B)",
		"hangul filler":                     "contains an invisible character (U+3164)",
		"braille blank":                     "contains an invisible character (U+2800)",
		"variation selector alone":          "contains a variation selector with nothing to vary (U+FE0F)",
		"variation selector after a space":  "contains a variation selector with nothing to vary (U+FE0F)",
		"soft hyphen":                       "contains an invisible character (U+00AD)",
		"word joiner":                       "contains an invisible character (U+2060)",
		"tag characters":                    "contains an invisible character (U+E0041)",
		"line separator":                    "contains an invisible character (U+2028)",
		"private use":                       "contains a private-use character (U+E000)",
		"unassigned":                        "contains an unassigned character (U+0378)",
		"noncharacter":                      "contains an unassigned character (U+FDD0)",
		"leading combining mark":            "starts with a combining mark (U+0301)",
		"tab":                               "contains a control character",
		"byte order mark at the end":        "contains an invisible character (U+FEFF)",
		"too long":                          "is longer than 32 characters",
		"empty":                             "is empty",
		"chat with zwnj at the edge":        "contains an invisible character (U+200C)",
		"chat with rtl override":            "contains a bidirectional control character (U+202E)",
	}
	for n, reason := range refused {
		if v := byName[n]; v.OK || v.Reason != reason {
			t.Errorf("%s %+q: ok=%v reason %q, want refused: %q", n, v.In, v.OK, v.Reason, reason)
		}
	}
	if v := byName["trimmed and spaces collapsed"]; v.Normalized != "Ada Lovelace" {
		t.Errorf("normalised %q", v.Normalized)
	}
	if v := byName["nfc"]; v.Normalized != "Zo\u00eb" {
		t.Errorf("normalised %+q, want NFC", v.Normalized)
	}
	for _, n := range []string{"lower case", "cyrillic o", "cyrillic capitals", "fullwidth", "zero width space"} {
		if !SameName(byName["plain"].Normalized, byName[n].Normalized) {
			t.Errorf("%q does not collide with %q", byName[n].Normalized, byName["plain"].Normalized)
		}
	}
	if !SameName("Ian Bob", byName["greek capital iota and digit zero"].Normalized) || !SameName("paypal", byName["mathematical letters"].Normalized) ||
		!SameName("modern", byName["m and rn"].Normalized) {
		t.Error("a look-alike does not collide")
	}
}

// TestValidateMessage: the server's invalid_argument text names the field and
// the code point.
func TestValidateMessage(t *testing.T) {
	m := SetName{Name: "\u202eTSOH"}
	err := m.Validate()
	if err == nil || err.Error() != "protocol: name contains a bidirectional control character (U+202E)" {
		t.Fatalf("Validate = %v", err)
	}
	h := Hello{Version: Version, Name: " Zoe\u0308 "}
	if err := h.Validate(); err != nil || h.Name != "Zo\u00eb" {
		t.Fatalf("Hello.Validate = %v, name %+q", err, h.Name)
	}
	c := CreateRoom{Name: "Friday\u2003\u2003ball", MaxPlayers: 4, Mode: "  Teams "}
	if err := c.Validate(); err != nil || c.Name != "Friday ball" || c.Mode != "Teams" {
		t.Fatalf("CreateRoom.Validate = %v, %+q %+q", err, c.Name, c.Mode)
	}
}

func FuzzNames(f *testing.F) {
	for _, c := range nameInputs {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeName(s)
		if NormalizeName(n) != n {
			t.Fatalf("NormalizeName not idempotent: %+q then %+q", n, NormalizeName(n))
		}
		if ValidatePlayerName(n) == nil {
			if ValidateText("name", n, MaxPlayerName) != nil {
				t.Fatalf("%+q is a valid name but not valid text", n)
			}
			sh, f := NameSkeleton(n)
			if !SameName(n, n) || sh == "" && f == "" {
				t.Fatalf("%+q: skeletons %+q %+q", n, sh, f)
			}
		}
	})
}
