package protocol

//go:generate go run ./internal/skeletongen

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Names and other lines of text end up in other players' lobbies, so what a
// line may hold is about what it looks like, not only its bytes:
//
//   - NormalizeText puts a line into NFC and trims it; NormalizeName also
//     turns every run of spaces into one U+0020 (HTML shows a run as one).
//   - checkRunes refuses what cannot be seen or rearranges what can: control
//     characters, bidirectional controls ("\u202eTSOH" shows as "HOST"),
//     format and other default-ignorable characters (zero-width space,
//     Hangul fillers, tags), line and paragraph separators, variation
//     selectors standing alone, private-use, unassigned and non-characters,
//     U+2800 (a blank braille cell), a leading combining mark, and a line with
//     nothing visible at all. A joiner is allowed where honest text needs
//     one: in a name only ZWJ inside an emoji sequence (👩‍💻), in other text
//     ZWJ and ZWNJ between two visible characters (Persian, Indic scripts).
//   - SameName compares names by their skeletons (NameSkeleton), so a
//     look-alike joins as "Name (2)".
//
// web/packages/protocol/src/names.ts applies the same rules; protocol/testdata/names.json
// holds vectors both test against.

// NormalizeText returns s in Unicode NFC with surrounding white space
// trimmed: two spellings of "é" are one text.
func NormalizeText(s string) string {
	return strings.TrimSpace(norm.NFC.String(s))
}

// NormalizeName is NormalizeText with every run of space separators (Zs)
// made one U+0020, as a page shows them.
func NormalizeName(s string) string {
	s = NormalizeText(s)
	if !strings.ContainsFunc(s, func(r rune) bool { return r != ' ' && unicode.Is(unicode.Zs, r) }) &&
		!strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.Is(unicode.Zs, r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// ValidatePlayerName checks a display name as NormalizeName leaves it (and
// as the server keeps it).
func ValidatePlayerName(name string) error {
	name = NormalizeName(name)
	if err := validateLength("name", name, MaxPlayerName); err != nil {
		return err
	}
	return checkRunes("name", name, false)
}

// ValidateText refuses an empty or overlong line (counted in characters
// after trimming), invalid UTF-8 and what checkRunes refuses. A server
// applying a lower limit than the protocol's calls it with its own maxRunes.
func ValidateText(field, s string, maxRunes int) error {
	s = strings.TrimSpace(s)
	if err := validateLength(field, s, maxRunes); err != nil {
		return err
	}
	return checkRunes(field, s, true)
}

func validateLength(field, s string, maxRunes int) error {
	switch {
	case s == "":
		return invalid(field, "is empty")
	case !utf8.ValidString(s):
		return invalid(field, "is not valid UTF-8")
	case utf8.RuneCountInString(s) > maxRunes:
		return invalid(field, "is longer than %d characters", maxRunes)
	}
	return nil
}

// checkRunes applies the character rules above to s, which is valid UTF-8.
// text allows ZWJ and ZWNJ between any two visible characters; a name
// allows only ZWJ between two symbols (an emoji sequence).
func checkRunes(field, s string, text bool) error {
	runes := []rune(s)
	visible := false
	for i, r := range runes {
		var prev, next rune = -1, -1
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		switch k := runeKind(r); k {
		case kindVisible:
			visible = true
			if i == 0 && unicode.In(r, unicode.M) {
				return invalid(field, "starts with a combining mark (%s)", codePoint(r))
			}
		case kindSpace:
		case kindSelector:
			if prev < 0 || !graphic(prev) {
				return invalid(field, "contains a variation selector with nothing to vary (%s)", codePoint(r))
			}
		case kindJoiner:
			var ok bool
			if text {
				ok = (graphic(prev) || emojiBefore(runes[:i])) && graphic(next)
			} else {
				ok = r == zwj && emojiBefore(runes[:i]) && next >= 0 && unicode.Is(unicode.So, next)
			}
			if !ok {
				return invalid(field, "contains an invisible character (%s)", codePoint(r))
			}
		default:
			return invalid(field, "contains %s", describeKind(k, r))
		}
	}
	if !visible {
		return invalid(field, "has no visible character")
	}
	return nil
}

const (
	zwj          = '\u200d'
	brailleBlank = '\u2800'
)

type kind int

const (
	kindVisible  kind = iota // letters, marks, numbers, punctuation, symbols
	kindSpace                // a space separator between words
	kindSelector             // a variation selector: fine after a visible character
	kindJoiner               // ZWJ or ZWNJ: fine in context
	kindControl
	kindBidi
	kindInvisible
	kindPrivate
	kindUnassigned
)

// runeKind sorts r for checkRunes. The order matters: bidirectional controls
// and joiners are also Cf, and variation selectors default-ignorable.
func runeKind(r rune) kind {
	switch {
	case unicode.Is(unicode.Cc, r):
		return kindControl
	case unicode.Is(unicode.Bidi_Control, r):
		return kindBidi
	case unicode.Is(unicode.Join_Control, r):
		return kindJoiner
	case unicode.Is(unicode.Variation_Selector, r):
		return kindSelector
	case r == brailleBlank || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point):
		return kindInvisible
	case unicode.Is(unicode.Zs, r):
		return kindSpace
	case unicode.Is(unicode.Co, r):
		return kindPrivate
	case unicode.Is(unicode.Noncharacter_Code_Point, r) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
		return kindUnassigned // nothing else is left once C and Z are out
	}
	return kindVisible
}

func describeKind(k kind, r rune) string {
	switch k {
	case kindControl:
		return "a control character"
	case kindBidi:
		return fmt.Sprintf("a bidirectional control character (%s)", codePoint(r))
	case kindPrivate:
		return fmt.Sprintf("a private-use character (%s)", codePoint(r))
	case kindUnassigned:
		return fmt.Sprintf("an unassigned character (%s)", codePoint(r))
	}
	return fmt.Sprintf("an invisible character (%s)", codePoint(r))
}

func codePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }

// graphic reports whether r is a visible character that a selector or a
// joiner may follow or precede (-1, the edge of the line, is not).
func graphic(r rune) bool { return r >= 0 && runeKind(r) == kindVisible }

// emojiBefore reports whether before ends in a symbol, maybe followed by a
// variation selector or an emoji modifier (which are Sk), as the first half
// of an emoji ZWJ sequence does: 👩🏽‍💻, 🏳️‍🌈.
func emojiBefore(before []rune) bool {
	for n := len(before) - 1; n >= 0 && n >= len(before)-3; n-- {
		r := before[n]
		switch {
		case unicode.Is(unicode.So, r):
			return true
		case unicode.Is(unicode.Variation_Selector, r), r >= 0x1f3fb && r <= 0x1f3ff:
			continue
		}
		return false
	}
	return false
}

// NameSkeleton returns the two keys SameName compares, each computed as a
// UTS #39 skeleton is (NFD, map each character through skeletonTable, NFD)
// over a table skeletongen derives from the confusables data, which also
// maps compatibility forms the data leaves out to their plain letters
// (fullwidth "Ｈｏｓｔ", "ﬁ", "①"). Default-ignorable characters are dropped.
//
//   - shown is the skeleton, then lower-cased: it catches what looks alike as
//     written, capitals included ("НОЅТ" in Cyrillic, "Ian" and "lan", "B0b").
//   - folded is the skeleton of the name with each letter replaced by one
//     fixed member of its case orbit: it keeps the rule names had before
//     skeletons (strings.EqualFold: "Ada" and "ADA" collide).
//
// One key cannot do both: Greek "ν" looks like "v" but is the same letter as
// "Ν", which looks like "N"; joining the two would make "v" and "N" collide.
func NameSkeleton(name string) (shown, folded string) {
	d := norm.NFD.String(name)
	var s, f strings.Builder
	for _, r := range d {
		if skeletonIgnores(r) {
			continue
		}
		e, ok := lookupSkeleton(r)
		if !ok {
			s.WriteRune(r)
			f.WriteRune(r)
			continue
		}
		s.WriteString(e.shown)
		f.WriteString(e.folded)
	}
	return norm.NFD.String(s.String()), norm.NFD.String(f.String())
}

// SameName reports whether two names would pass for each other in a room:
// their shown or their folded skeletons are equal.
func SameName(a, b string) bool {
	as, af := NameSkeleton(a)
	bs, bf := NameSkeleton(b)
	return as == bs || af == bf
}

// skeletonIgnores reports whether r is default-ignorable (Cf,
// Other_Default_Ignorable_Code_Point, variation selectors) or U+2800: what
// renders as nothing is not part of a name's look.
func skeletonIgnores(r rune) bool {
	return r == brailleBlank || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

func lookupSkeleton(r rune) (skeletonEntry, bool) {
	i := sort.Search(len(skeletonTable), func(i int) bool { return skeletonTable[i].r >= r })
	if i < len(skeletonTable) && skeletonTable[i].r == r {
		return skeletonTable[i], true
	}
	return skeletonEntry{}, false
}

// skeletonEntry maps one code point (as NFD leaves it) to its part of each
// skeleton; code points not in skeletonTable map to themselves.
type skeletonEntry struct {
	r             rune
	shown, folded string
}
