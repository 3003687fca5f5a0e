package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// The script-tag SDK (issue 26): the bundles web/bundle/build.ts writes to
// static/sdk, served at /sdk/<version>/<file> for the one version this
// binary was built with, so a page's SDK always matches its relay:
//
//	/sdk/0.1.0/hostrelay.mjs    immutable, for a year; CORS for any origin
//	/sdk/latest/hostrelay.mjs   302 to the above, cached a minute
//	/sdk/manifest.json          the version, each file's path, size and SRI hash
//	/sdk/                       the same as snippets to copy into a page

const (
	sdkManifest     = "manifest.json"
	sdkLatest       = "latest"
	sdkImmutable    = "public, max-age=31536000, immutable"
	sdkLatestMaxAge = "public, max-age=60"
)

// errSDKNotBuilt: the binary was built before npm run build wrote static/sdk.
var errSDKNotBuilt = errors.New("server: the SDK was not built into this binary; run `make build` (or `npm ci && npm run build` before `go build`)")

var sdkVersionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?$`)

// sdkBundle is static/sdk, read and checked once at start.
type sdkBundle struct {
	version string
	global  string
	names   []string // in the manifest's order
	files   map[string]*sdkFile
}

type sdkFile struct {
	body        []byte
	integrity   string
	contentType string
	// body compressed, on first asking (a bundle shrinks to about a
	// third; not at start, which every server in the tests goes through)
	gzipOnce sync.Once
	gzipped  []byte
}

// gzip returns the compressed body, or nil if compressing failed.
func (f *sdkFile) gzip() []byte {
	f.gzipOnce.Do(func() {
		gz, err := gzipBytes(f.body)
		if err == nil {
			f.gzipped = gz
		}
	})
	return f.gzipped
}

// loadSDK reads the manifest and the files it names from fsys, and checks
// each file's SRI hash against its bytes: a page that pins the integrity
// the relay publishes must get exactly those bytes.
func loadSDK(fsys fs.FS) (*sdkBundle, error) {
	raw, err := fs.ReadFile(fsys, sdkManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errSDKNotBuilt
	}
	if err != nil {
		return nil, fmt.Errorf("server: sdk: %w", err)
	}
	var m struct {
		Version string `json:"version"`
		Global  string `json:"global"`
		Files   map[string]struct {
			Integrity string `json:"integrity"`
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("server: sdk: %s: %w", sdkManifest, err)
	}
	if !sdkVersionPattern.MatchString(m.Version) {
		return nil, fmt.Errorf("server: sdk: %s: version %q is not x.y.z", sdkManifest, m.Version)
	}
	b := &sdkBundle{version: m.Version, global: m.Global, files: map[string]*sdkFile{}}
	for name, f := range m.Files {
		ct := sdkContentType(name)
		if ct == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("server: sdk: %s names %q, which is no bundle or map", sdkManifest, name)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("server: sdk: %w", err)
		}
		if got := sriSHA384(body); got != f.Integrity {
			return nil, fmt.Errorf("server: sdk: %s hashes to %s, the manifest says %s: rebuild it", name, got, f.Integrity)
		}
		b.files[name] = &sdkFile{body: body, integrity: f.Integrity, contentType: ct}
		b.names = append(b.names, name)
	}
	slices.Sort(b.names)
	return b, nil
}

func gzipBytes(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(body); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// acceptsGzip: the request's Accept-Encoding lists gzip, and not with q=0.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

func sdkContentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".mjs"), strings.HasSuffix(name, ".js"):
		return "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".map"):
		return "application/json"
	}
	return ""
}

// sriSHA384 is the value of an integrity attribute for body.
func sriSHA384(body []byte) string {
	sum := sha512.Sum384(body)
	return "sha384-" + base64.StdEncoding.EncodeToString(sum[:])
}

// sdkRoutes serves the bundle, or when it could not be loaded (loadErr)
// answers every /sdk/ path with 503 and why.
func sdkRoutes(e *echo.Echo, b *sdkBundle, loadErr error) {
	h := &sdkHandler{b: b, err: loadErr}
	e.GET("/sdk", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/sdk/") })
	e.GET("/sdk/", h.index)
	e.GET("/sdk/"+sdkManifest, h.manifest)
	e.GET("/sdk/:version/:file", h.file)
	e.HEAD("/sdk/:version/:file", h.file)
}

type sdkHandler struct {
	b   *sdkBundle
	err error
}

// cors lets a page on any origin load the files (a module script is a CORS
// request), and say so on errors and redirects too, where a browser would
// otherwise hide the status behind a CORS failure.
func (h *sdkHandler) cors(c echo.Context) bool {
	hd := c.Response().Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Cross-Origin-Resource-Policy", "cross-origin")
	return h.b != nil
}

func (h *sdkHandler) unavailable(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.String(http.StatusServiceUnavailable, "hostrelay: "+strings.TrimPrefix(h.err.Error(), "server: ")+"\n")
}

func (h *sdkHandler) file(c echo.Context) error {
	if !h.cors(c) {
		return h.unavailable(c)
	}
	version, name := c.Param("version"), c.Param("file")
	f, known := h.b.files[name]
	hd := c.Response().Header()
	switch {
	case !known:
		hd.Set("Cache-Control", "no-cache")
		return c.String(http.StatusNotFound, fmt.Sprintf("hostrelay: no SDK file %q; the files are %s (see /sdk/)\n", name, strings.Join(h.b.names, ", ")))
	case version == sdkLatest:
		hd.Set("Cache-Control", sdkLatestMaxAge)
		return c.Redirect(http.StatusFound, h.b.path(name))
	case version != h.b.version:
		hd.Set("Cache-Control", "no-cache")
		return c.String(http.StatusNotFound, fmt.Sprintf("hostrelay: this relay serves SDK %s only, not %q: %s (or /sdk/latest/%s, which follows the relay)\n",
			h.b.version, version, h.b.path(name), name))
	}
	hd.Set("Cache-Control", sdkImmutable)
	hd.Set("Vary", "Accept-Encoding")
	if gz := f.gzip(); gz != nil && acceptsGzip(c.Request()) {
		hd.Set("Content-Encoding", "gzip")
		return c.Blob(http.StatusOK, f.contentType, gz)
	}
	return c.Blob(http.StatusOK, f.contentType, f.body)
}

func (b *sdkBundle) path(name string) string { return "/sdk/" + b.version + "/" + name }

// sdkListing is /sdk/manifest.json.
type sdkListing struct {
	Version string                    `json:"version"`
	Global  string                    `json:"global"`
	Latest  string                    `json:"latest"`
	Files   map[string]sdkListingFile `json:"files"`
}

type sdkListingFile struct {
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	Integrity string `json:"integrity"`
}

func (h *sdkHandler) manifest(c echo.Context) error {
	if !h.cors(c) {
		return h.unavailable(c)
	}
	l := sdkListing{Version: h.b.version, Global: h.b.global, Latest: "/sdk/" + sdkLatest + "/", Files: map[string]sdkListingFile{}}
	for _, name := range h.b.names {
		f := h.b.files[name]
		l.Files[name] = sdkListingFile{Path: h.b.path(name), Bytes: len(f.body), Integrity: f.integrity}
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.JSON(http.StatusOK, l)
}

// index is /sdk/: what to paste into a page, with this relay's address as
// the request reached it.
func (h *sdkHandler) index(c echo.Context) error {
	if !h.cors(c) {
		return h.unavailable(c)
	}
	base := c.Scheme() + "://" + c.Request().Host
	var s strings.Builder
	fmt.Fprintf(&s, "hostrelay SDK %s: @hostrelay/sdk and @hostrelay/netcode in one file, for a page with no build step.\n\n", h.b.version)
	fmt.Fprintf(&s, "As an ES module:\n\n  <script type=\"module\">\n    import { LobbyClient, RoomSession, NetHost, NetClient } from '%s%s';\n  </script>\n\n",
		base, h.b.path("hostrelay.mjs"))
	if js, ok := h.b.files["hostrelay.js"]; ok {
		fmt.Fprintf(&s, "As a classic script (the global %s):\n\n  <script src=\"%s%s\"\n          integrity=\"%s\" crossorigin=\"anonymous\"></script>\n\n",
			h.b.global, base, h.b.path("hostrelay.js"), js.integrity)
	}
	fmt.Fprintf(&s, "/sdk/latest/<file> redirects to the version this relay serves. Files (SRI, sha384):\n\n")
	for _, name := range h.b.names {
		f := h.b.files[name]
		fmt.Fprintf(&s, "  %-36s %8d bytes  %s\n", h.b.path(name), len(f.body), f.integrity)
	}
	fmt.Fprintf(&s, "\nThe same as JSON: %s/sdk/%s\n", base, sdkManifest)
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.String(http.StatusOK, s.String())
}
