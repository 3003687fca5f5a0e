// Command skeletongen writes the table protocol.NameSkeleton maps names
// through (protocol/skeleton_table.go) and the same table for the browser
// (web/packages/protocol/src/skeleton-table.ts), from the UTS #39 confusables data in
// a pinned module, Go's case tables and x/text's normalisation. Run it with
// `go generate ./protocol`; its test fails when either file is out of step.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// source names the data: the module's tables.go is generated from
// confusables.txt "Version: 13.0.0, Date: 2020-02-13". Bump both together.
const source = "github.com/mtibben/confusables v0.0.0-20210201002637-9d1b0723b659 (confusables.txt 13.0.0, 2020-02-13)"

const (
	goFile = "skeleton_table.go"
	tsFile = "../web/packages/protocol/src/skeleton-table.ts"
)

func main() {
	dir := flag.String("protocol", ".", "the protocol package's directory")
	flag.Parse()
	t, err := build()
	if err != nil {
		log.Fatal(err)
	}
	for name, data := range map[string][]byte{goFile: t.goSource(), tsFile: t.tsSource()} {
		if err := os.WriteFile(filepath.Join(*dir, name), data, 0o644); err != nil { //nolint:gosec // checked-in source files
			log.Fatal(err)
		}
	}
}

// entry is one code point's part of each skeleton.
type entry struct {
	r             rune
	shown, folded string
}

type table struct {
	entries []entry
	shown   map[rune]string
	folded  map[rune]string
}

// ignorable is what NameSkeleton drops before the table: the
// default-ignorable code points (Cf, Other_Default_Ignorable_Code_Point,
// variation selectors) and U+2800, the blank braille cell, which protocol
// refuses in a name anyway. It is code, not table entries (E0000-E0FFF alone
// is 4,096 code points); names.go has the same function.
func ignorable(r rune) bool {
	return r == 0x2800 || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// build derives both maps for every code point NFD leaves alone
// (NameSkeleton decomposes first, so no other code point reaches the table):
//
//	shown(c)  = lower-case(prototype(c))
//	folded(c) = prototype(the lowest code point of c's case orbit, marks aside)
//
// prototype(c) is c's UTS #39 skeleton where the confusables data has one,
// else its compatibility decomposition (NFKD), so that fullwidth "Ｔ" meets
// "T" while lunate "Ϲ" stays with "C" (NFKD would make it a sigma).
//
// The orbit is unicode.SimpleFold's, the one strings.EqualFold uses, so
// case variants always share a folded key (x/text's cases.Fold would not do:
// it swaps Cherokee capitals and small letters). Each shown result is then
// mapped through the shown map again until nothing changes, so that a shown
// key of a shown key is itself (lower-casing can give a letter that has a
// prototype of its own). The folded map is left as it is: mapping "I" to
// "l" and then "l" to its orbit's "L" would make "ian" and "lan" collide.
func build() (*table, error) {
	t := &table{shown: map[rune]string{}, folded: map[rune]string{}}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		c := string(r)
		if norm.NFD.String(c) != c || ignorable(r) {
			continue
		}
		if s := norm.NFD.String(strings.Map(unicode.ToLower, prototype(r))); s != c {
			t.shown[r] = s
		}
		if f := norm.NFD.String(prototype(orbitMin(r))); f != c {
			t.folded[r] = f
		}
	}
	for _, m := range []map[rune]string{t.shown} {
		for round := 0; ; round++ {
			if round == 10 {
				return nil, fmt.Errorf("skeletongen: no fixed point after %d rounds", round)
			}
			changed := false
			for r, s := range m {
				if k := apply(m, s); k != s {
					m[r], changed = k, true
				}
			}
			if !changed {
				break
			}
		}
	}
	for _, m := range []map[rune]string{t.shown, t.folded} {
		for r, s := range m {
			if s == string(r) {
				delete(m, r)
			}
		}
	}
	for r := range t.shown {
		t.entries = append(t.entries, entry{r: r})
	}
	for r := range t.folded {
		if _, ok := t.shown[r]; !ok {
			t.entries = append(t.entries, entry{r: r})
		}
	}
	slices.SortFunc(t.entries, func(a, b entry) int { return int(a.r - b.r) })
	for i := range t.entries {
		e := &t.entries[i]
		e.shown, e.folded = t.key(t.shown, string(e.r)), t.key(t.folded, string(e.r))
	}
	return t, nil
}

func prototype(r rune) string {
	c := string(r)
	if s := confusables.Skeleton(c); s != norm.NFD.String(c) {
		return s
	}
	return norm.NFKD.String(c)
}

// orbitMin returns the lowest code point of r's case orbit that is not a
// combining mark: Greek iota's orbit holds U+0345, a combining iota subscript,
// whose prototype is a combining ogonek.
func orbitMin(r rune) rune {
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if (f < low || unicode.Is(unicode.M, low)) && !unicode.Is(unicode.M, f) {
			low = f
		}
	}
	return low
}

// apply is NameSkeleton's algorithm over one map: NFD, map, NFD.
func apply(m map[rune]string, s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if ignorable(r) {
			continue
		}
		if t, ok := m[r]; ok {
			b.WriteString(t)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}

func (t *table) key(m map[rune]string, s string) string { return apply(m, s) }

func (t *table) goSource() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by protocol/internal/skeletongen; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package protocol\n\n")
	fmt.Fprintf(&b, "// skeletonTable holds %d code points, sorted. Confusables: %s.\n", len(t.entries), source)
	fmt.Fprintf(&b, "// Case: Go's unicode %s; normalisation: x/text %s.\n", unicode.Version, norm.Version)
	fmt.Fprintf(&b, "var skeletonTable = []skeletonEntry{\n")
	for _, e := range t.entries {
		fmt.Fprintf(&b, "\t{0x%04x, %s, %s},\n", e.r, strconv.QuoteToASCII(e.shown), strconv.QuoteToASCII(e.folded))
	}
	fmt.Fprintf(&b, "}\n")
	return b.Bytes()
}

// tsSource writes the table as compact text: entries "cp:shown:folded" in
// hexadecimal code points joined by '.', with ":folded" left out when it is
// the same as shown, separated by ';'.
func (t *table) tsSource() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by protocol/internal/skeletongen; DO NOT EDIT.\n")
	fmt.Fprintf(&b, "// The table of protocol/skeleton_table.go (%d code points). Confusables: %s.\n", len(t.entries), source)
	fmt.Fprintf(&b, "// Case: Go's unicode %s; normalisation: x/text %s.\n", unicode.Version, norm.Version)
	fmt.Fprintf(&b, "// Each entry is \"cp:shown:folded\" in hexadecimal code points joined by '.', \":folded\" left out when it\n")
	fmt.Fprintf(&b, "// equals shown; entries are separated by ';'.\n")
	fmt.Fprintf(&b, "export const SKELETON_TABLE: readonly string[] = [\n")
	const perLine = 12
	for i := 0; i < len(t.entries); i += perLine {
		var parts []string
		for _, e := range t.entries[i:min(i+perLine, len(t.entries))] {
			p := strconv.FormatInt(int64(e.r), 16) + ":" + hexRunes(e.shown)
			if e.folded != e.shown {
				p += ":" + hexRunes(e.folded)
			}
			parts = append(parts, p)
		}
		fmt.Fprintf(&b, "  '%s',\n", strings.Join(parts, ";"))
	}
	fmt.Fprintf(&b, "];\n")
	return b.Bytes()
}

func hexRunes(s string) string {
	var parts []string
	for _, r := range s {
		parts = append(parts, strconv.FormatInt(int64(r), 16))
	}
	return strings.Join(parts, ".")
}
