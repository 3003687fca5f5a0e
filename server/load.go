package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadConfig builds the configuration from DefaultConfig, a YAML file
// (-config, or HOSTRELAY_CONFIG), HOSTRELAY_* environment variables and
// command-line flags, each overriding the one before, and validates the
// result before anything listens. Errors name the flag, the variable or the
// file's key and line. -h prints the flags to usage and returns
// flag.ErrHelp.
func LoadConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	cfg := DefaultConfig()
	opts := cfg.options()

	// The flags are read first, to find -config, but applied last: they
	// are recorded here and replayed after the file and the environment.
	var given []givenFlag
	var path string
	conf := configOption(&path)
	fs := flag.NewFlagSet("hostrelay", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Var(conf.value, conf.flag, conf.help)
	for _, o := range opts {
		fs.Var(recorder{o: o, given: &given}, o.flag, o.help)
	}
	fs.Usage = func() {
		fmt.Fprintf(usage, "Usage of hostrelay: every flag has a %s variable (e.g. -public-ip: HOSTRELAY_PUBLIC_IP) "+
			"and a key in the -config file; flags override variables, variables the file.\n"+
			"hostrelay -version prints the version and commit; hostrelay -licenses the third-party notices.\n", envPrefix)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("server: config: %w", err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("server: config: unexpected argument %q", fs.Arg(0))
	}
	if path == "" {
		path = getenv(conf.env())
	}

	var errs []error
	if path != "" {
		errs = append(errs, applyFile(opts, path)...)
	}
	for _, o := range opts {
		if v := getenv(o.env()); v != "" {
			if err := o.value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", o.env(), err))
			}
		}
	}
	for _, g := range given {
		if err := g.o.value.Set(g.raw); err != nil {
			errs = append(errs, fmt.Errorf("-%s: %w", g.o.flag, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, fmt.Errorf("server: config: %w", err)
	}
	return cfg, cfg.validate()
}

// givenFlag is a flag as it was given on the command line.
type givenFlag struct {
	o   *option
	raw string
}

// recorder stands in for an option's value while the flags are parsed: it
// records what was given, in order, and shows the default in -h.
type recorder struct {
	o     *option
	given *[]givenFlag
}

func (r recorder) Set(s string) error {
	*r.given = append(*r.given, givenFlag{o: r.o, raw: s})
	return nil
}

func (r recorder) String() string {
	if r.o == nil {
		return ""
	}
	return r.o.value.String()
}

// applyFile sets the options the YAML file at path names. Every key must be
// a section or an option: an unknown one (a typo, a setting from another
// version) is an error naming it, never silently ignored.
func applyFile(opts []*option, path string) []error {
	data, err := os.ReadFile(path) //nolint:gosec // the operator names the file
	if err != nil {
		return []error{fmt.Errorf("-config: %w", err)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []error{fmt.Errorf("%s: %w", path, err)}
	}
	if len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	f := fileSetter{path: path, byKey: make(map[string]*option), sections: make(map[string]bool)}
	for _, o := range opts {
		f.byKey[o.key] = o
		for k := o.key; strings.Contains(k, "."); {
			k = k[:strings.LastIndex(k, ".")]
			f.sections[k] = true
		}
	}
	f.mapping(doc.Content[0], "")
	return f.errs
}

type fileSetter struct {
	path     string
	byKey    map[string]*option
	sections map[string]bool
	errs     []error
}

func (f *fileSetter) fail(n *yaml.Node, format string, args ...any) {
	f.errs = append(f.errs, fmt.Errorf("%s:%d: %s", f.path, n.Line, fmt.Sprintf(format, args...)))
}

// mapping applies the keys of the section at prefix ("" at the top).
func (f *fileSetter) mapping(n *yaml.Node, prefix string) {
	if n.Kind != yaml.MappingNode {
		if prefix == "" {
			f.fail(n, "want a mapping of sections and keys, like deploy/hostrelay.example.yaml")
		} else {
			f.fail(n, "%s: want a mapping of keys", strings.TrimSuffix(prefix, "."))
		}
		return
	}
	seen := make(map[string]bool)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		if seen[key] {
			f.fail(k, "%s: given twice", key)
			continue
		}
		seen[key] = true
		switch o := f.byKey[key]; {
		case o != nil:
			f.set(o, v)
		case f.sections[key]:
			f.mapping(v, key+".")
		default:
			f.fail(k, "unknown key %s", key)
		}
	}
}

func (f *fileSetter) set(o *option, v *yaml.Node) {
	var raw string
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		raw = ""
	case v.Kind == yaml.ScalarNode:
		raw = v.Value
	case v.Kind == yaml.SequenceNode && o.list:
		items := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				f.fail(item, "%s: want a list of values", o.key)
				return
			}
			items = append(items, item.Value)
		}
		raw = strings.Join(items, ",")
	default:
		f.fail(v, "%s (-%s): want a single value", o.key, o.flag)
		return
	}
	if err := o.value.Set(raw); err != nil {
		f.fail(v, "%s (-%s): %v", o.key, o.flag, err)
	}
}
