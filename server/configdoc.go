package server

//go:generate go run ./cmd/configdoc -readme ../README.md -sample ../deploy/hostrelay.example.yaml

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The README's configuration table and the sample config file are made
// from the options, and TestConfigDocsInStep fails when either differs from
// what these functions make: change server/options.go, then run
// `go generate ./server`.

// Markers around the generated table in README.md.
const (
	tableBegin = "<!-- config-table: generated from server/options.go by `go generate ./server`; do not edit -->"
	tableEnd   = "<!-- config-table end -->"
)

// ConfigTable is the README's configuration table: every flag, its YAML
// key, its default and what it does.
func ConfigTable() string {
	cfg := DefaultConfig()
	var path string
	return configTable(append([]*option{configOption(&path)}, cfg.options()...))
}

func configTable(opts []*option) string {
	var b strings.Builder
	b.WriteString("| flag | YAML key | default | what |\n|---|---|---|---|\n")
	for _, o := range opts {
		key := "—"
		if o.key != "" {
			key = "`" + o.key + "`"
		}
		def := o.def
		if def == "" {
			def = "`" + o.value.String() + "`"
		}
		what := o.help
		if o.see != "" {
			what += " (" + o.see + ")"
		}
		fmt.Fprintf(&b, "| `-%s` | %s | %s | %s |\n", o.flag, key, cell(def), cell(what))
	}
	return b.String()
}

// cell keeps a table cell in its column.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// SpliceConfigTable returns readme with the text between its table markers
// replaced by ConfigTable.
func SpliceConfigTable(readme string) (string, error) {
	return spliceTable(readme, ConfigTable())
}

func spliceTable(readme, table string) (string, error) {
	begin := strings.Index(readme, tableBegin)
	end := strings.Index(readme, tableEnd)
	if begin < 0 || end < begin {
		return "", errors.New("server: README has no configuration table markers: " + tableBegin + " … " + tableEnd)
	}
	head := readme[:begin+len(tableBegin)]
	return head + "\n" + table + readme[end:], nil
}

// SampleConfig is deploy/hostrelay.example.yaml: every key at its default,
// its help as a comment.
func SampleConfig() string {
	cfg := DefaultConfig()
	return sampleConfig(cfg.options())
}

func sampleConfig(opts []*option) string {
	var b strings.Builder
	b.WriteString(`# hostrelay configuration: every key, at its default. Generated from
# server/options.go by ` + "`go generate ./server`" + `; a test keeps it in step.
#
# Use it with -config FILE (or HOSTRELAY_CONFIG=FILE). Flags and HOSTRELAY_*
# variables override what is set here, and a key left out keeps its default,
# so a deployment's file need only hold what it changes. An unknown key is an
# error. Sizes take KiB/MiB/GiB or KB/MB/GB; durations 30s, 10m, 6h.
# auto: derived at start; off: not enforced.
`)
	section := ""
	var top []*option
	for _, o := range opts {
		sec, name, ok := strings.Cut(o.key, ".")
		if !ok {
			top = append(top, o)
			continue
		}
		if sec != section {
			fmt.Fprintf(&b, "\n%s:\n", sec)
			section = sec
		}
		writeSampleKey(&b, "  ", name, o)
	}
	if len(top) > 0 {
		b.WriteString("\n")
	}
	for _, o := range top {
		writeSampleKey(&b, "", o.key, o)
	}
	return b.String()
}

func writeSampleKey(b *strings.Builder, indent, name string, o *option) {
	for _, line := range wrap(o.help+" (-"+o.flag+", "+o.env()+")", 78-len(indent)-2) {
		fmt.Fprintf(b, "%s# %s\n", indent, line)
	}
	fmt.Fprintf(b, "%s%s: %s\n", indent, name, sampleValue(o))
}

// sampleValue writes a value so that reading it back gives the same text:
// lists as flow sequences, strings quoted, the rest (numbers, sizes,
// durations, auto and off) plain.
func sampleValue(o *option) string {
	v := o.value.String()
	switch o.value.(type) {
	case listValue, prefixesValue:
		items := splitList(v)
		for i, it := range items {
			items[i] = strconv.Quote(it)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case strValue, bytesValue, ipValue, portRangeValue:
		return strconv.Quote(v)
	}
	return v
}

// wrap breaks s into lines of at most width characters, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
