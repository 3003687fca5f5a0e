package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/mtibben/confusables"

	"github.com/hostrelay/hostrelay/protocol"
)

// TestTablesInStep fails when protocol/skeleton_table.go or its TypeScript
// twin is not what the pinned data gives: run `go generate ./protocol`.
func TestTablesInStep(t *testing.T) {
	tab, err := build()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{goFile: tab.goSource(), tsFile: tab.tsSource()} {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of step with the generator: run go generate ./protocol", name)
		}
	}
}

func eachCodePoint(f func(r rune)) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r < 0xd800 || r > 0xdfff {
			f(r)
		}
	}
}

// TestCaseStillCollides: names that differ only in case collide, as they did
// when the hub compared names with strings.EqualFold.
func TestCaseStillCollides(t *testing.T) {
	eachCodePoint(func(r rune) {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if !protocol.SameName("x"+string(r), "x"+string(f)) {
				t.Errorf("%U and %U fold together but do not collide", r, f)
			}
		}
	})
	if !protocol.SameName("Ada Lovelace", "ADA LOVELACE") || !protocol.SameName("Ian", "ian") {
		t.Error("case variants of a name do not collide")
	}
}

// TestConfusablesCollide: every code point collides with its UTS #39
// prototype, except where case folding puts it with a different letter than
// the confusables data does (long s folds with "s" but looks like "f";
// Cyrillic "в" folds with "В" but looks like a small capital B), where case
// wins. The count of those is pinned so a data change shows.
func TestConfusablesCollide(t *testing.T) {
	var conflicts []rune
	eachCodePoint(func(r rune) {
		c := string(r)
		if !protocol.SameName(c, confusables.Skeleton(c)) {
			conflicts = append(conflicts, r)
		}
	})
	// Letters an attacker reaches for most must never be among them.
	for _, r := range conflicts {
		if r < 0x80 || unicode.In(r, unicode.Cyrillic, unicode.Greek) && unicode.IsUpper(r) ||
			r >= 0xff01 && r <= 0xff5e {
			t.Errorf("%U %q does not collide with its prototype %q", r, r, confusables.Skeleton(string(r)))
		}
	}
	if len(conflicts) != 0 {
		t.Logf("%d code points where case folding and the confusables data disagree, e.g. %q", len(conflicts), string(conflicts[:min(len(conflicts), 40)]))
	}
}

// TestShownIsFixedPoint: a shown key of a shown key is itself.
func TestShownIsFixedPoint(t *testing.T) {
	eachCodePoint(func(r rune) {
		s, _ := protocol.NameSkeleton(string(r))
		if s2, _ := protocol.NameSkeleton(s); s2 != s {
			t.Errorf("%U: shown %q, shown again %q", r, s, s2)
		}
	})
}

func TestLookAlikesCollide(t *testing.T) {
	for _, pair := range [][2]string{
		{"Host", "host"}, {"Host", "Hоst"}, {"HOST", "НОЅТ"}, {"Host", "Ｈｏｓｔ"}, {"Bob", "B0b"},
		{"Ian", "lan"}, {"Host", "Host\u200b"}, {"paypal", "𝔭𝒶ỿ𝕡𝕒ℓ"}, {"Νikos", "Nikos"}, {"νeo", "veo"},
		{"Ada", "аda"}, {"modern", "rnodern"},
	} {
		if !protocol.SameName(pair[0], pair[1]) {
			s0, f0 := protocol.NameSkeleton(pair[0])
			s1, f1 := protocol.NameSkeleton(pair[1])
			t.Errorf("%q (%q %q) and %q (%q %q) do not collide", pair[0], s0, f0, pair[1], s1, f1)
		}
	}
	for _, pair := range [][2]string{{"Ada", "Ida"}, {"Kyle", "Kule"}, {"Sam", "Fam"}, {"Neo", "Veo"}, {"Anna", "Ana"}, {"ian", "lan"}} {
		if protocol.SameName(pair[0], pair[1]) {
			t.Errorf("%q and %q collide", pair[0], pair[1])
		}
	}
	if strings.Contains(string(must(os.ReadFile(filepath.Join("..", "..", goFile)))), "mtibben") == false {
		t.Error("the generated table does not name its source")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
