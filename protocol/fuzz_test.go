package protocol

import (
	"encoding/hex"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
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
	// Every type from the source, not from a list kept by hand, so a type
	// added later is fuzzed from the day it exists.
	types := messageTypes(f)
	for _, typ := range types {
		body, _ := NewBody(typ)
		frame, err := Encode(typ, 1, body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
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

// TestFuzzDecodeCoversEveryType guards the list FuzzDecode takes from the
// source: the parse must find the types this file names at compile time, and
// every type found must have a body NewBody knows and a golden vector.
func TestFuzzDecodeCoversEveryType(t *testing.T) {
	types := messageTypes(t)
	for _, typ := range []string{TypeHello, TypeSignal, TypeChat, TypeRoomListUpdate, TypeHostChanged, TypeICERefresh} {
		if !slices.Contains(types, typ) {
			t.Errorf("%q not found in the package source: the parse is broken", typ)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []golden
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	for _, typ := range types {
		if _, ok := NewBody(typ); !ok {
			t.Errorf("NewBody(%q) unknown: the server cannot decode it", typ)
		}
		if !slices.ContainsFunc(vectors, func(v golden) bool { return v.Type == typ }) {
			t.Errorf("no golden vector of type %q", typ)
		}
	}
}

// messageTypes returns the value of every constant named Type<Upper...>
// with a string value in the package's non-test files, sorted.
func messageTypes(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		tb.Fatal(err)
	}
	var types []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatal(err)
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec) //nolint:forcetypeassert // a const declaration holds ValueSpecs
				for i, id := range vs.Names {
					rest, ok := strings.CutPrefix(id.Name, "Type")
					if !ok || rest == "" || !unicode.IsUpper(rune(rest[0])) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						tb.Fatalf("%s: %s is not a string literal: list its value by hand here", fset.Position(id.Pos()), id.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						tb.Fatal(err)
					}
					types = append(types, v)
				}
			}
		}
	}
	if len(types) == 0 {
		tb.Fatal("no Type constants found: run from the package directory")
	}
	slices.Sort(types)

	return slices.Compact(types)
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
