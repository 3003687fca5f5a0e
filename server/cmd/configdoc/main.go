// Command configdoc writes the configuration table into README.md (between
// its markers) and the sample config file, both from the server's option
// definitions (server/options.go). `go generate ./server` runs it;
// server.TestConfigDocsInStep fails until it has been run after a change.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/hostrelay/hostrelay/server"
)

func main() {
	readme := flag.String("readme", "README.md", "README to write the table into, between its markers")
	sample := flag.String("sample", "deploy/hostrelay.example.yaml", "sample config file to write")
	flag.Parse()
	if err := run(*readme, *sample); err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
}

func run(readme, sample string) error {
	text, err := os.ReadFile(readme) //nolint:gosec // the file the -readme flag names
	if err != nil {
		return err
	}
	out, err := server.SpliceConfigTable(string(text))
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	if err := os.WriteFile(readme, []byte(out), 0o644); err != nil { //nolint:gosec // a document, world-readable like the rest of the repository
		return err
	}
	return os.WriteFile(sample, []byte(server.SampleConfig()), 0o644) //nolint:gosec // as above
}
