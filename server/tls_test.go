package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/internal/testcert"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// startTLSServer is startServer with HTTPS from certs' files and TURN over
// TLS on a loopback port.
func startTLSServer(t *testing.T, certs testcert.Certs, extraArgs ...string) *Server {
	t.Helper()
	return startServer(t, append([]string{"-tls-cert", certs.CertFile, "-tls-key", certs.KeyFile,
		"-turn-tls", "127.0.0.1:0"}, extraArgs...)...)
}

// httpsClient trusts certs' CA only, follows no redirect, and keeps no
// connection past the test.
func httpsClient(t *testing.T, tc *tls.Config) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: tc}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testwait.Within,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// checkLobbyPage asserts the lobby page answered: the app, or, if the web
// app was not built into this test binary, the message saying how.
func checkLobbyPage(t *testing.T, resp *http.Response, body string) {
	t.Helper()
	switch {
	case resp.StatusCode == http.StatusOK && strings.Contains(strings.ToLower(body), "<!doctype html"):
	case resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "make run"):
	default:
		t.Fatalf("lobby page: %d %.200s", resp.StatusCode, body)
	}
	if resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatal("lobby page without its CSP")
	}
}

type healthConns struct {
	Conns struct {
		WebSockets int `json:"webSockets"`
		TurnTLS    int `json:"turnTLS"`
	} `json:"conns"`
}

func health(t *testing.T, c *http.Client, base string) healthConns {
	t.Helper()
	_, body := get(t, c, base+"/healthz")
	var h healthConns
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("healthz %q: %v", body, err)
	}
	return h
}

// HTTPS serves the lobby page, /ws upgrades over WSS (and is counted as a
// WebSocket, which the connection cap needs), the ICE servers end with
// turns:, and a TURN client reaching the server only over TLS allocates
// with the credentials the lobby gave and relays to a room mate.
func TestHTTPSServesLobbyAndWSS(t *testing.T) {
	certs := testcert.New(t)
	s := startTLSServer(t, certs)
	base := "https://" + s.Addrs().HTTP
	client := httpsClient(t, certs.ClientConfig("127.0.0.1"))

	for _, path := range []string{"/", "/r/ABC2345"} {
		resp, body := get(t, client, base+path)
		checkLobbyPage(t, resp, body)
	}
	// Plain HTTP on the HTTPS port is told so, not served.
	if resp, _ := get(t, http.DefaultClient, "http://"+s.Addrs().HTTP+"/"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain HTTP to the HTTPS listener: %d", resp.StatusCode)
	}

	// HTTP/1.1 even to a client that prefers HTTP/2: the lobby's
	// WebSocket upgrades only over HTTP/1.1.
	h2, err := tls.Dial("tcp", s.Addrs().HTTP, &tls.Config{RootCAs: certs.Pool, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	if p := h2.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Fatalf("ALPN chose %q, want http/1.1", p)
	}
	_ = h2.Close()

	host := wssLobby(t, s, client, "Ada")
	rj := host.create("over TLS", 2, "")
	urls := rj.ICE.Servers[0].URLs
	wantTURNS := "turns:127.0.0.1:" + strconv.Itoa(s.turn.TLSAddr().Port) + "?transport=tcp"
	if len(urls) != 3 || !strings.HasSuffix(urls[0], "?transport=udp") || !strings.HasPrefix(urls[1], "turn:") || urls[2] != wantTURNS {
		t.Fatalf("ICE URLs %q, want udp, tcp, then %s", urls, wantTURNS)
	}
	if h := health(t, client, base); h.Conns.WebSockets != 1 {
		t.Fatalf("healthz counts %d WebSockets over TLS, want 1", h.Conns.WebSockets)
	}

	// The host reaches TURN over TLS only, its guest over UDP.
	guest := wssLobby(t, s, client, "Bob")
	gj, err := guest.join(rj.Room.Code, "")
	if err != nil {
		t.Fatal(err)
	}
	tlsConn, err := tls.Dial("tcp", s.Addrs().TURNTLS, certs.ClientConfig("127.0.0.1"))
	if err != nil {
		t.Fatalf("TURN over TLS: %v", err)
	}
	hostTURN := startTURNClient(t, pionturn.NewSTUNConn(tlsConn), s.Addrs().TURNTLS, rj.ICE.Servers[0])
	hostRelay := allocateRelay(t, hostTURN)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	guestTURN := startTURNClient(t, udp, s.Addrs().TURNUDP, gj.ICE.Servers[0])
	guestRelay := allocateRelay(t, guestTURN)
	if err := hostTURN.CreatePermission(guestRelay.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if err := guestTURN.CreatePermission(hostRelay.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	relays(t, hostRelay, guestRelay, "host to guest, in over TLS")
	relays(t, guestRelay, hostRelay, "guest to host, out over TLS")
	if h := health(t, client, base); h.Conns.TurnTLS != 1 {
		t.Fatalf("healthz counts %d TURN TLS connections, want 1", h.Conns.TurnTLS)
	}
}

// wssLobby opens the lobby over WSS and says hello as name.
func wssLobby(t *testing.T, s *Server, client *http.Client, name string) *lobby {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Within)
	defer cancel()
	conn, _, err := lobbytest.Dial(ctx, "wss://"+s.Addrs().HTTP+"/ws", lobbytest.Options{HTTPClient: client})
	if err != nil {
		t.Fatalf("WSS: %v", err)
	}
	l := newLobby(t, conn)
	if err := l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: name}, &l.welcome); err != nil {
		t.Fatalf("hello over WSS: %v", err)
	}
	return l
}

func allocateRelay(t *testing.T, c *pionturn.Client) net.PacketConn {
	t.Helper()
	relay, err := c.Allocate()
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	t.Cleanup(func() { _ = relay.Close() })
	return relay
}

// relays sends msg from one relay to the other until it arrives (UDP may
// drop the first while permissions settle), or fails the test.
func relays(t *testing.T, from, to net.PacketConn, msg string) {
	t.Helper()
	got := make(chan bool, 1)
	_ = to.SetReadDeadline(time.Now().Add(testwait.Within))
	go func() {
		buf := make([]byte, 1500)
		for {
			n, _, err := to.ReadFrom(buf)
			if err != nil {
				got <- false
				return
			}
			if string(buf[:n]) == msg {
				got <- true
				return
			}
		}
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := from.WriteTo([]byte(msg), to.LocalAddr()); err != nil {
			t.Fatalf("relay write: %v", err)
		}
		select {
		case ok := <-got:
			if !ok {
				t.Fatalf("%q never arrived", msg)
			}
			return
		case <-tick.C:
		}
	}
}

// startTURNClient runs a pion TURN client on pc with ice's credentials,
// closed at test end.
func startTURNClient(t *testing.T, pc net.PacketConn, server string, ice protocol.ICEServer) *pionturn.Client {
	t.Helper()
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		STUNServerAddr: server, TURNServerAddr: server, Conn: pc,
		Username: ice.Username, Password: ice.Credential,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		_ = pc.Close()
	})
	return c
}

// The redirect listener sends every method and path, query kept, to the
// same host over HTTPS on the HTTPS listener's port, with 308 so a POST
// stays a POST; the browser that follows it lands on the lobby page.
func TestHTTPRedirect(t *testing.T) {
	certs := testcert.New(t)
	s := startTLSServer(t, certs, "-http-redirect", "127.0.0.1:0")
	redirect := "http://" + s.Addrs().HTTPRedirect
	if s.Addrs().HTTPRedirect == "" {
		t.Fatal("no redirect listener")
	}
	client := httpsClient(t, certs.ClientConfig("127.0.0.1"))
	httpsPort := strconv.Itoa(s.ln.Addr().(*net.TCPAddr).Port) //nolint:forcetypeassert // a TCP listener

	resp, _ := get(t, client, redirect+"/r/ABC2345?from=qr")
	want := "https://127.0.0.1:" + httpsPort + "/r/ABC2345?from=qr"
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("GET: %d to %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	page, body := get(t, client, want)
	checkLobbyPage(t, page, body)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, redirect+"/api/v1/ice", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "play.example.test"
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want = "https://play.example.test:" + httpsPort + "/api/v1/ice"
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("POST: %d to %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

// TestRedirectAddr: "auto" means :80 with ACME or with HTTPS on 443, and
// nothing otherwise; "off" and "" are off.
func TestRedirectAddr(t *testing.T) {
	for _, c := range []struct {
		cfg      TLSConfig
		httpAddr string
		want     string
	}{
		{TLSConfig{RedirectAddr: "auto", CertFile: "c", KeyFile: "k"}, ":8443", ""},
		{TLSConfig{RedirectAddr: "auto", CertFile: "c", KeyFile: "k"}, ":443", ":80"},
		{TLSConfig{RedirectAddr: "auto", ACMEDomains: []string{"play.example.test"}}, ":8443", ":80"},
		{TLSConfig{RedirectAddr: "off", ACMEDomains: []string{"play.example.test"}}, ":443", ""},
		{TLSConfig{RedirectAddr: "", CertFile: "c", KeyFile: "k"}, ":443", ""},
		{TLSConfig{RedirectAddr: "127.0.0.1:8080", CertFile: "c", KeyFile: "k"}, ":8443", "127.0.0.1:8080"},
	} {
		if got := c.cfg.redirectAddr(c.httpAddr); got != c.want {
			t.Errorf("%+v with -http %s: %q, want %q", c.cfg, c.httpAddr, got, c.want)
		}
	}
}

// Every TLS option that is wrong is refused before anything listens, with
// the flag named: in the flags themselves, or in the files they name.
func TestTLSConfigErrors(t *testing.T) {
	certs, other := testcert.New(t), testcert.New(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	writeTestFile(t, garbage, []byte("not PEM"))
	missing := filepath.Join(dir, "missing.pem")
	notDir := filepath.Join(dir, "file")
	writeTestFile(t, notDir, nil)
	noEnv := func(string) string { return "" }
	base := []string{"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-turn-tls", "127.0.0.1:0", "-turn-secret", "0123456789abcdef0123456789abcdef"}
	for _, c := range []struct {
		args []string
		want []string // in the error
	}{
		{[]string{"-tls-cert", certs.CertFile}, []string{"-tls-key (tls.key_file)", "-tls-cert and -tls-key together"}},
		{[]string{"-acme-domain", "play.example.test", "-tls-cert", certs.CertFile, "-tls-key", certs.KeyFile}, []string{"-acme-domain (tls.acme_domains)", "not both"}},
		{[]string{"-acme-domain", "192.0.2.1"}, []string{"-acme-domain (tls.acme_domains)", "DNS name"}},
		{[]string{"-acme-domain", "*.example.test"}, []string{"-acme-domain (tls.acme_domains)", "DNS name"}},
		{[]string{"-acme-domain", "play.example.test", "-acme-cache", ""}, []string{"-acme-cache (tls.acme_cache)", "required"}},
		{[]string{"-turn-offer", "udp,smoke"}, []string{"-turn-offer (turn.offer)", "smoke"}},
		{[]string{"-turn-offer", ""}, []string{"-turn-offer (turn.offer)", "at least one"}},
		{[]string{"-turn-offer", "tls"}, []string{"-turn-offer (turn.offer) tls", "TURN over TLS is off"}},
		{[]string{"-tls-cert", certs.CertFile, "-tls-key", certs.KeyFile, "-turn-offer", "tls", "-turn-tls", "off"}, []string{"-turn-offer (turn.offer) tls", "TURN over TLS is off"}},
		{[]string{"-http-redirect", "127.0.0.1:0"}, []string{"-http-redirect (tls.redirect_addr)", "needs TLS"}},
		{[]string{"-tls-cert", certs.CertFile, "-tls-key", certs.KeyFile, "-http-redirect", "80"}, []string{"-http-redirect (tls.redirect_addr) 80", "missing port"}},
		{[]string{"-tls-cert", certs.CertFile, "-tls-key", certs.KeyFile, "-turn-tls", "5349"}, []string{"-turn-tls (turn.tls_addr) 5349", "missing port"}},
	} {
		_, err := LoadConfig(append(append([]string{}, base...), c.args...), noEnv, io.Discard)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %v, want it to name %q", c.args, err, w)
			}
		}
	}

	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing certificate", []string{"-tls-cert", missing, "-tls-key", certs.KeyFile}, []string{`-tls-cert "` + missing + `"`, "no such file"}},
		{"missing key", []string{"-tls-cert", certs.CertFile, "-tls-key", missing}, []string{`-tls-key "` + missing + `"`, "no such file"}},
		{"certificate not PEM", []string{"-tls-cert", garbage, "-tls-key", certs.KeyFile}, []string{`-tls-cert "` + garbage + `"`}},
		{"key not PEM", []string{"-tls-cert", certs.CertFile, "-tls-key", garbage}, []string{`-tls-key "` + garbage + `"`}},
		{"key of another certificate", []string{"-tls-cert", certs.CertFile, "-tls-key", other.KeyFile}, []string{"-tls-cert", "-tls-key", "does not match"}},
		{"ACME cache not a directory", []string{"-acme-domain", "play.example.test", "-acme-cache", filepath.Join(notDir, "acme")}, []string{"-acme-cache"}},
	} {
		cfg, err := LoadConfig(append(append([]string{}, base...), c.args...), noEnv, io.Discard)
		if err != nil {
			t.Fatalf("%s: LoadConfig: %v", c.name, err)
		}
		s, err := New(t.Context(), cfg, slog.New(slog.DiscardHandler))
		if err == nil {
			_ = s.Shutdown(t.Context())
			t.Fatalf("%s: the server started", c.name)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q, want it to name %q", c.name, err, w)
			}
		}
	}
}

// The ICE servers list UDP, then TCP, then TLS, whatever -turn-offer's
// order; turns: only with TLS on; -turn-offer narrows them.
func TestICEServerOrder(t *testing.T) {
	certs := testcert.New(t)
	plain := startServer(t)
	udp, tcp := "turn:play.example.test:"+strconv.Itoa(plain.turn.UDPAddr().Port)+"?transport=udp",
		"turn:play.example.test:"+strconv.Itoa(plain.turn.TCPAddr().Port)+"?transport=tcp"
	if got := plain.turnURLs("play.example.test"); !equalStrings(got, []string{udp, tcp}) {
		t.Errorf("TLS off: %q", got)
	}

	for _, c := range []struct {
		args []string
		want func(s *Server) []string
	}{
		{nil, func(s *Server) []string { return []string{urlOf(s, "udp"), urlOf(s, "tcp"), urlOf(s, "tls")} }},
		{[]string{"-turn-offer", "tls,tcp,udp"}, func(s *Server) []string { return []string{urlOf(s, "udp"), urlOf(s, "tcp"), urlOf(s, "tls")} }},
		{[]string{"-turn-offer", "tls"}, func(s *Server) []string { return []string{urlOf(s, "tls")} }},
		{[]string{"-turn-offer", "tcp,udp"}, func(s *Server) []string { return []string{urlOf(s, "udp"), urlOf(s, "tcp")} }},
		{[]string{"-turn-tls", "off"}, func(s *Server) []string { return []string{urlOf(s, "udp"), urlOf(s, "tcp")} }},
	} {
		s := startTLSServer(t, certs, c.args...)
		if got, want := s.turnURLs("play.example.test"), c.want(s); !equalStrings(got, want) {
			t.Errorf("%q: %q, want %q", c.args, got, want)
		}
	}
}

func urlOf(s *Server, transport string) string {
	scheme, proto := "turn:", transport
	if transport == "tls" {
		scheme, proto = "turns:", "tcp"
	}
	return scheme + "play.example.test:" + strconv.Itoa(s.turnAddr(transport).Port) + "?transport=" + proto
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, " ") == strings.Join(b, " ")
}

// peerCert returns the leaf addr serves to a client that trusts tc.
func peerCert(t *testing.T, addr string, tc *tls.Config) []byte {
	t.Helper()
	c, err := tls.Dial("tcp", addr, tc)
	if err != nil {
		t.Fatalf("TLS to %s: %v", addr, err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Raw
}

// Replaced certificate files are served from the next handshake on, on
// HTTPS and TURN over TLS alike; files that cannot be used (a renewal half
// written) leave the previous certificate in service.
func TestCertificateReload(t *testing.T) {
	first, second := testcert.New(t), testcert.New(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	install := func(c testcert.Certs, mod time.Time) {
		t.Helper()
		for _, f := range []struct{ from, to string }{{c.CertFile, certFile}, {c.KeyFile, keyFile}} {
			b, err := os.ReadFile(f.from)
			if err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, f.to, b)
			// Explicit times: two writes within the file system's clock
			// resolution would otherwise look unchanged.
			if err := os.Chtimes(f.to, mod, mod); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Now()
	install(first, now.Add(-time.Hour))
	var logs logBuffer
	s := startServerLogging(t, slog.LevelInfo, &logs, "-tls-cert", certFile, "-tls-key", keyFile, "-turn-tls", "127.0.0.1:0")
	trustFirst, trustSecond := first.ClientConfig("127.0.0.1"), second.ClientConfig("127.0.0.1")
	if !bytes.Equal(peerCert(t, s.Addrs().HTTP, trustFirst), first.Leaf.Certificate[0]) {
		t.Fatal("HTTPS does not serve the first certificate")
	}

	install(second, now)
	for _, addr := range []string{s.Addrs().HTTP, s.Addrs().TURNTLS} {
		if !bytes.Equal(peerCert(t, addr, trustSecond), second.Leaf.Certificate[0]) {
			t.Fatalf("%s does not serve the replaced certificate", addr)
		}
	}

	// The new certificate arrives before its key: unusable, so the second
	// stays, with one warning.
	b, err := os.ReadFile(first.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, certFile, b)
	if err := os.Chtimes(certFile, now.Add(time.Hour), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if !bytes.Equal(peerCert(t, s.Addrs().HTTP, trustSecond), second.Leaf.Certificate[0]) {
			t.Fatal("a half-renewed pair replaced a working certificate")
		}
	}
	if n := strings.Count(logs.String(), "cannot be used"); n != 1 {
		t.Fatalf("%d warnings about the unusable pair, want 1:\n%s", n, logs.String())
	}
}

// acmeCert writes certs' leaf into an autocert cache as autocert stores an
// ECDSA certificate it obtained for domain: the key, then the chain.
func acmeCert(t *testing.T, cache, domain string, certs testcert.Certs) {
	t.Helper()
	key, err := os.ReadFile(certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := os.ReadFile(certs.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(cache, domain), append(key, cert...))
}

// ACME as wired, with no CA to reach (none can be from here): a certificate
// autocert holds in its cache is served on HTTPS, to a client sending no
// server name too, and on TURN over TLS; a name not configured gets none;
// the redirect listener answers an HTTP-01 challenge for a configured name
// (and refuses one for another) and redirects everything else. The
// directory is a closed loopback port, so a renewal could not leave the
// machine; the certificate is valid for 90 days, so none is due.
func TestACMEWiring(t *testing.T) {
	const domain = "play.example.test"
	certs := testcert.NewFor(t, 90*24*time.Hour, domain)
	cache := t.TempDir()
	acmeCert(t, cache, domain, certs)
	const token = "evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA"
	writeTestFile(t, filepath.Join(cache, token+"+http-01"), []byte(token+".key-authorization"))
	s := startServer(t, "-acme-domain", domain, "-acme-cache", cache, "-acme-directory", "http://127.0.0.1:9/directory",
		"-acme-email", "ops@example.test", "-http-redirect", "127.0.0.1:0", "-turn-tls", "127.0.0.1:0")

	trust := certs.ClientConfig(domain)
	for _, addr := range []string{s.Addrs().HTTP, s.Addrs().TURNTLS} {
		if !bytes.Equal(peerCert(t, addr, trust), certs.Leaf.Certificate[0]) {
			t.Fatalf("%s does not serve the cached certificate", addr)
		}
	}
	noName := certs.ClientConfig("")
	noName.InsecureSkipVerify = true //nolint:gosec // only checks which certificate comes back
	if !bytes.Equal(peerCert(t, s.Addrs().HTTP, noName), certs.Leaf.Certificate[0]) {
		t.Fatal("a client sending no server name got no certificate")
	}
	if c, err := tls.Dial("tcp", s.Addrs().HTTP, certs.ClientConfig("other.example.test")); err == nil {
		c.Close()
		t.Fatal("a name not in -acme-domain got a certificate")
	}
	client := httpsClient(t, trust)
	resp, body := get(t, client, "https://"+s.Addrs().HTTP+"/")
	checkLobbyPage(t, resp, body)

	challenge := func(host, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+s.Addrs().HTTPRedirect+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host // as the CA sends it: port 80, so none
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := challenge(domain, "/.well-known/acme-challenge/"+token); resp.StatusCode != http.StatusOK || body != token+".key-authorization" {
		t.Fatalf("challenge: %d %q", resp.StatusCode, body)
	}
	if resp, _ := challenge("other.example.test", "/.well-known/acme-challenge/"+token); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("challenge for a name not configured: %d, want 403", resp.StatusCode)
	}
	port := strconv.Itoa(s.ln.Addr().(*net.TCPAddr).Port) //nolint:forcetypeassert // a TCP listener
	if resp, _ := challenge(domain, "/r/ABC2345"); resp.StatusCode != http.StatusPermanentRedirect ||
		resp.Header.Get("Location") != "https://"+domain+":"+port+"/r/ABC2345" {
		t.Fatalf("page on the redirect listener: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestACMEManager: the autocert manager is set up as configured: the
// names allowed and no other, the cache directory, the contact, the CA.
func TestACMEManager(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "acme")
	m, err := newACME(TLSConfig{ACMEDomains: []string{"play.example.test", "www.play.example.test"}, ACMECache: cache,
		ACMEEmail: "ops@example.test", ACMEDirectory: "https://acme-staging-v02.api.letsencrypt.org/directory"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"play.example.test", "www.play.example.test"} {
		if err := m.HostPolicy(t.Context(), d); err != nil {
			t.Errorf("%s refused: %v", d, err)
		}
	}
	if err := m.HostPolicy(t.Context(), "example.test"); err == nil {
		t.Error("a name not configured is allowed")
	}
	if info, err := os.Stat(cache); err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
		t.Errorf("cache directory: %v %v", info, err)
	}
	if m.Cache == nil || m.Email != "ops@example.test" || m.Client == nil ||
		m.Client.DirectoryURL != "https://acme-staging-v02.api.letsencrypt.org/directory" || m.Prompt("terms") != true {
		t.Errorf("manager %+v", m)
	}
	if err := m.Cache.Put(t.Context(), "probe", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cache, "probe")); err != nil {
		t.Errorf("the cache does not write to -acme-cache: %v", err)
	}
	if d, err := newACME(TLSConfig{ACMEDomains: []string{"play.example.test"}, ACMECache: cache}); err != nil || d.Client != nil {
		t.Errorf("without -acme-directory: client %+v (%v), want autocert's default (Let's Encrypt)", d.Client, err)
	}
}

// writeTestFile writes b to path, a file in the test's temporary directory.
func writeTestFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil { //nolint:gosec // a test's own temporary file
		t.Fatal(err)
	}
}

func TestValidHost(t *testing.T) {
	for h, want := range map[string]bool{
		"play.example.test": true, "127.0.0.1": true, "::1": true, "xn--bcher-kva.example": true,
		"": false, "a b": false, "evil.example/x": false, "evil.example@x": false, "%2e": false,
	} {
		if got := validHost(h); got != want {
			t.Errorf("validHost(%q) = %v, want %v", h, got, want)
		}
	}
}

// `make run` needs no flag: by default TLS, its redirect listener and TURN
// over TLS are all off, and the defaults validate.
func TestTLSOffByDefault(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.TLS.Enabled() || cfg.turnTLSAddr() != "" || cfg.TLS.redirectAddr(cfg.HTTP.Addr) != "" {
		t.Fatalf("TLS on by default: %+v, turn %q", cfg.TLS, cfg.TURN.TLSAddr)
	}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.ICE.Offer, ","); got != "udp,tcp,tls" {
		t.Fatalf("offer %s", got)
	}
}

// Issue 24, finding 3: 600 idle connections from one address, reopened as
// the server closes them, do not starve the redirect listener: another
// address's ACME HTTP-01 challenge and redirect are answered at once, so
// certificate renewal goes on.
func TestRedirectListenerUnderIdleFlood(t *testing.T) {
	const domain = "play.example.test"
	certs := testcert.NewFor(t, 90*24*time.Hour, domain)
	cache := t.TempDir()
	acmeCert(t, cache, domain, certs)
	const token = "evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA"
	writeTestFile(t, filepath.Join(cache, token+"+http-01"), []byte(token+".key-authorization"))
	s := startServer(t, "-acme-domain", domain, "-acme-cache", cache, "-acme-directory", "http://127.0.0.1:9/directory",
		"-http-redirect", "127.0.0.1:0")
	addr := s.Addrs().HTTPRedirect

	floodIdle(t, addr, "127.0.0.1", 600)
	probeAll(t, 5, addr, "127.0.0.2", domain, "/.well-known/acme-challenge/"+token, http.StatusOK, 2*time.Second)
	probeAll(t, 5, addr, "127.0.0.2", domain, "/r/ABC2345", http.StatusPermanentRedirect, 2*time.Second)
}

// The redirect listener gives a request header 3 s and a kept-alive
// connection 5 s: the CA and browsers send at once, so a socket holding
// either longer is idle for nothing (10 s each before issue 24).
func TestRedirectListenerTimeouts(t *testing.T) {
	s := startTLSServer(t, testcert.New(t), "-http-redirect", "127.0.0.1:0")
	addr := s.Addrs().HTTPRedirect
	stalled := dialHTTP(t, addr)
	if _, err := io.WriteString(stalled.c, "GET / HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	kept := dialHTTP(t, addr)
	if code := kept.get("/"); code != http.StatusPermanentRedirect {
		t.Fatalf("status %d", code)
	}
	start := time.Now()
	if !stalled.closedWithin(6 * time.Second) {
		t.Fatal("a stalled request header was left open 6 s")
	}
	if !kept.closedWithin(8*time.Second - time.Since(start)) {
		t.Fatal("an idle keep-alive connection was left open 8 s")
	}
}
