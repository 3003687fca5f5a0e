package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/labstack/echo/v4"

	"github.com/hostrelay/hostrelay/static"
)

// sdkFixture is a static/sdk as web/bundle/build.ts writes it, small.
func sdkFixture(t *testing.T) fstest.MapFS {
	t.Helper()
	files := map[string]string{
		"hostrelay.mjs":     "export const VERSION='0.1.0';\n//# sourceMappingURL=hostrelay.mjs.map\n",
		"hostrelay.mjs.map": `{"version":3,"sources":[]}`,
		"hostrelay.js":      "var HostRelay=(()=>({VERSION:'0.1.0'}))();\n",
	}
	fsys := fstest.MapFS{}
	listed := map[string]any{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
		listed[name] = map[string]any{"bytes": len(body), "integrity": sriSHA384([]byte(body))}
	}
	raw, err := json.Marshal(map[string]any{"version": "0.1.0", "global": "HostRelay", "files": listed})
	if err != nil {
		t.Fatal(err)
	}
	fsys[sdkManifest] = &fstest.MapFile{Data: raw}
	return fsys
}

// sdkServer serves fsys's SDK the way newHTTP does, on loopback.
func sdkServer(t *testing.T, fsys fs.FS) string {
	t.Helper()
	e := echo.New()
	b, err := loadSDK(fsys)
	sdkRoutes(e, b, err)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

type sdkResponse struct {
	status int
	header http.Header
	body   []byte
}

func sdkGet(t *testing.T, url string) sdkResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "http://game.example")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return sdkResponse{resp.StatusCode, resp.Header, body}
}

func TestSDKVersionedFiles(t *testing.T) {
	fsys := sdkFixture(t)
	base := sdkServer(t, fsys)
	for name, ct := range map[string]string{
		"hostrelay.mjs":     "text/javascript; charset=utf-8",
		"hostrelay.js":      "text/javascript; charset=utf-8",
		"hostrelay.mjs.map": "application/json",
	} {
		r := sdkGet(t, base+"/sdk/0.1.0/"+name)
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", name, r.status, r.body)
		}
		for h, want := range map[string]string{
			"Content-Type":                 ct,
			"Cache-Control":                "public, max-age=31536000, immutable",
			"Access-Control-Allow-Origin":  "*",
			"Cross-Origin-Resource-Policy": "cross-origin",
		} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", name, h, got, want)
			}
		}
		if string(r.body) != string(fsys[name].Data) {
			t.Errorf("%s: served %q", name, r.body)
		}
	}
}

// TestSDKGzip: a client that takes gzip gets the bundle compressed, and
// the bytes it decodes are those the integrity was computed over.
func TestSDKGzip(t *testing.T) {
	fsys := sdkFixture(t)
	base := sdkServer(t, fsys)
	for _, c := range []struct {
		accept string
		gzip   bool
	}{{"gzip, deflate, br, zstd", true}, {"br", false}, {"", false}, {"gzip;q=0, br", false}, {"GZIP;q=0.5", true}} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/sdk/0.1.0/hostrelay.mjs", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", c.accept) // set by hand, so the client does not decode for us
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gzip || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, Vary %q", c.accept, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
		}
		if c.gzip {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if sriSHA384(body) != sriSHA384(fsys["hostrelay.mjs"].Data) {
			t.Errorf("Accept-Encoding %q: decoded %q", c.accept, body)
		}
	}
}

func TestSDKLatestRedirects(t *testing.T) {
	base := sdkServer(t, sdkFixture(t))
	r := sdkGet(t, base+"/sdk/latest/hostrelay.mjs")
	if r.status != http.StatusFound || r.header.Get("Location") != "/sdk/0.1.0/hostrelay.mjs" {
		t.Fatalf("status %d, Location %q", r.status, r.header.Get("Location"))
	}
	// Short-lived, so a relay's upgrade reaches pages within a minute; CORS on the redirect too, or a module import fails.
	if cc := r.header.Get("Cache-Control"); cc != "public, max-age=60" {
		t.Errorf("Cache-Control %q", cc)
	}
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("no CORS on the redirect")
	}
}

func TestSDKUnknownVersionOrFile(t *testing.T) {
	base := sdkServer(t, sdkFixture(t))
	cases := []struct{ path, says string }{
		{"/sdk/0.0.9/hostrelay.mjs", `this relay serves SDK 0.1.0 only, not "0.0.9": /sdk/0.1.0/hostrelay.mjs (or /sdk/latest/hostrelay.mjs`},
		{"/sdk/0.1.0/hostrelay.css", `no SDK file "hostrelay.css"; the files are hostrelay.js, hostrelay.mjs, hostrelay.mjs.map`},
		{"/sdk/latest/manifest.json", `no SDK file "manifest.json"`},
	}
	for _, c := range cases {
		r := sdkGet(t, base+c.path)
		if r.status != http.StatusNotFound || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: %d %q, want 404 saying %q", c.path, r.status, r.body, c.says)
		}
		if r.header.Get("Cache-Control") != "no-cache" || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: headers %v", c.path, r.header)
		}
	}
}

func TestSDKManifestListsIntegrity(t *testing.T) {
	base := sdkServer(t, sdkFixture(t))
	checkSDKManifest(t, base, "0.1.0", 3)
}

// checkSDKManifest fetches /sdk/manifest.json and every file it lists, and
// checks that each file's bytes hash to the integrity published for it.
func checkSDKManifest(t *testing.T, base, version string, files int) sdkListing {
	t.Helper()
	r := sdkGet(t, base+"/sdk/manifest.json")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("manifest: %d %v", r.status, r.header)
	}
	var l sdkListing
	if err := json.Unmarshal(r.body, &l); err != nil {
		t.Fatal(err)
	}
	if l.Version != version || l.Global != "HostRelay" || l.Latest != "/sdk/latest/" || len(l.Files) != files {
		t.Fatalf("manifest %+v", l)
	}
	for name, f := range l.Files {
		if f.Path != "/sdk/"+version+"/"+name {
			t.Errorf("%s: path %q", name, f.Path)
		}
		got := sdkGet(t, base+f.Path)
		if got.status != http.StatusOK || len(got.body) != f.Bytes || sriSHA384(got.body) != f.Integrity {
			t.Errorf("%s: %d, %d bytes hashing to %s; the manifest says %d bytes, %s", name, got.status, len(got.body), sriSHA384(got.body), f.Bytes, f.Integrity)
		}
	}
	return l
}

func TestSDKIndexHasSnippets(t *testing.T) {
	fsys := sdkFixture(t)
	base := sdkServer(t, fsys)
	r := sdkGet(t, base+"/sdk/")
	host := strings.TrimPrefix(base, "http://")
	for _, want := range []string{
		"hostrelay SDK 0.1.0",
		"import { LobbyClient, RoomSession, NetHost, NetClient } from 'http://" + host + "/sdk/0.1.0/hostrelay.mjs';",
		`<script src="http://` + host + `/sdk/0.1.0/hostrelay.js"`,
		`integrity="` + sriSHA384(fsys["hostrelay.js"].Data) + `" crossorigin="anonymous"></script>`,
		"/sdk/0.1.0/hostrelay.mjs.map",
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("/sdk/ lacks %q:\n%s", want, r.body)
		}
	}
	if r := sdkGet(t, base+"/sdk"); r.status != http.StatusMovedPermanently || r.header.Get("Location") != "/sdk/" {
		t.Errorf("/sdk: %d %q", r.status, r.header.Get("Location"))
	}
}

func TestSDKNotBuilt(t *testing.T) {
	base := sdkServer(t, fstest.MapFS{".gitkeep": {}})
	for _, path := range []string{"/sdk/", "/sdk/manifest.json", "/sdk/0.1.0/hostrelay.mjs", "/sdk/latest/hostrelay.js"} {
		r := sdkGet(t, base+path)
		if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "the SDK was not built into this binary") {
			t.Errorf("%s: %d %q", path, r.status, r.body)
		}
	}
}

func TestSDKLoadRefusesABadManifest(t *testing.T) {
	tampered := sdkFixture(t)
	tampered["hostrelay.js"] = &fstest.MapFile{Data: []byte("alert(1)")}
	badVersion := sdkFixture(t)
	badVersion[sdkManifest] = &fstest.MapFile{Data: []byte(`{"version":"../x","files":{}}`)}
	oddFile := sdkFixture(t)
	oddFile[sdkManifest] = &fstest.MapFile{Data: []byte(`{"version":"0.1.0","files":{"index.html":{"integrity":""}}}`)}
	for name, c := range map[string]struct {
		fsys fs.FS
		says string
	}{
		"tampered":    {tampered, "hostrelay.js hashes to sha384-"},
		"bad version": {badVersion, `version "../x" is not x.y.z`},
		"odd file":    {oddFile, `names "index.html", which is no bundle or map`},
	} {
		if _, err := loadSDK(c.fsys); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %q", name, err, c.says)
		}
	}
}

// TestSDKServedByTheServer: the bundle npm run build embedded, through the
// whole HTTP stack (its security headers included), integrity and all.
func TestSDKServedByTheServer(t *testing.T) {
	raw, err := fs.ReadFile(static.SDK(), sdkManifest)
	if err != nil {
		t.Skip("static/sdk not built (npm run build): ", err)
	}
	var m struct{ Version string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	s := startServer(t)
	base := "http://" + s.Addrs().HTTP
	l := checkSDKManifest(t, base, m.Version, 4)
	r := sdkGet(t, base+l.Files["hostrelay.mjs"].Path)
	if r.header.Get("Cache-Control") != sdkImmutable || r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", r.header)
	}
	if !strings.HasSuffix(string(r.body), "//# sourceMappingURL=hostrelay.mjs.map\n") {
		t.Errorf("hostrelay.mjs does not point at its source map: …%q", r.body[max(0, len(r.body)-60):])
	}
}
