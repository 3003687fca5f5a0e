package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
	"golang.org/x/net/idna"
)

// Enabled reports whether a certificate is configured: TLS is on.
func (c TLSConfig) Enabled() bool {
	return c.CertFile != "" || c.KeyFile != "" || len(c.ACMEDomains) > 0
}

// redirectAddr resolves RedirectAddr against the HTTP listen address.
func (c TLSConfig) redirectAddr(httpAddr string) string {
	switch c.RedirectAddr {
	case "", "off":
		return ""
	case "auto":
		if _, port, err := net.SplitHostPort(httpAddr); len(c.ACMEDomains) > 0 || (err == nil && port == "443") {
			return ":80"
		}
		return ""
	}
	return c.RedirectAddr
}

// turnTLSAddr is TURN over TLS's listen address, or "" if it is off (TLS
// off, or TURN.TLSAddr off).
func (c *Config) turnTLSAddr() string {
	if !c.TLS.Enabled() || c.TURN.TLSAddr == "off" {
		return ""
	}
	return c.TURN.TLSAddr
}

// TURN transports a client may be offered, in the order offered: UDP costs
// least, TLS most (and is there for networks that let nothing else out).
var turnTransports = []string{"udp", "tcp", "tls"} //nolint:gochecknoglobals // a read-only table

// checkOffer checks -turn-offer; tls says whether TURN over TLS listens.
func checkOffer(offer []string, tls bool) error {
	if len(offer) == 0 {
		return errors.New("name at least one of udp, tcp, tls")
	}
	for _, t := range offer {
		if !slices.Contains(turnTransports, t) {
			return fmt.Errorf("unknown transport %q (udp, tcp or tls)", t)
		}
	}
	if len(offer) == 1 && offer[0] == "tls" && !tls {
		return errors.New("TURN over TLS is off (it needs -tls-cert or -acme-domain, and -turn-tls not off), so no TURN server would be offered")
	}
	return nil
}

// offOrHostPort accepts "off", "" or a host:port.
func offOrHostPort(addr string) error {
	if addr == "" || addr == "off" {
		return nil
	}
	return hostPort(&addr)()
}

// validDomain reports whether d is a DNS name an ACME CA could issue for:
// not an IP address, no wildcard, at least two labels.
func validDomain(d string) bool {
	if net.ParseIP(d) != nil || !strings.Contains(d, ".") {
		return false
	}
	_, err := idna.Lookup.ToASCII(d)
	return err == nil
}

// tlsSetup is TLS as configured: one source of certificates for HTTPS and
// TURN over TLS, and the ACME manager if any.
type tlsSetup struct {
	getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	acme           *autocert.Manager // nil with certificate files
}

// newTLS reads the certificate files or prepares ACME; nil if TLS is off.
// Errors name the flag at fault.
func newTLS(c TLSConfig, log *slog.Logger) (*tlsSetup, error) {
	switch {
	case !c.Enabled():
		return nil, nil
	case len(c.ACMEDomains) > 0:
		m, err := newACME(c)
		if err != nil {
			return nil, err
		}
		get := m.GetCertificate
		first := c.ACMEDomains[0]
		return &tlsSetup{acme: m, getCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			// autocert refuses a hello without a server name; TURN clients
			// given an IP, and browsers typing one, send none.
			if hello.ServerName == "" {
				h := *hello
				h.ServerName = first
				hello = &h
			}
			return get(hello)
		}}, nil
	default:
		kp, err := loadKeyPair(c.CertFile, c.KeyFile, log)
		if err != nil {
			return nil, err
		}
		return &tlsSetup{getCertificate: kp.getCertificate}, nil
	}
}

func newACME(c TLSConfig) (*autocert.Manager, error) {
	// autocert creates the directory only when it first stores something,
	// so a cache it cannot write would surface at the first issuance.
	if err := os.MkdirAll(c.ACMECache, 0o700); err != nil {
		return nil, fmt.Errorf("server: -acme-cache %q: %w", c.ACMECache, err)
	}
	probe, err := os.CreateTemp(c.ACMECache, ".write-test-*")
	if err != nil {
		return nil, fmt.Errorf("server: -acme-cache %q: not writable: %w", c.ACMECache, err)
	}
	_ = probe.Close()
	_ = os.Remove(probe.Name())

	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(c.ACMECache),
		HostPolicy: autocert.HostWhitelist(c.ACMEDomains...),
		Email:      c.ACMEEmail,
	}
	if c.ACMEDirectory != "" {
		m.Client = &acme.Client{DirectoryURL: c.ACMEDirectory}
	}
	return m, nil
}

// httpsConfig is the HTTP listener's: HTTP/1.1 only, since the lobby's
// WebSocket (coder/websocket v1.8.15) upgrades only HTTP/1.1 requests and a
// browser would try it over an HTTP/2 connection that offered RFC 8441
// (Go does with GODEBUG=http2xconnect=1). With ACME it also answers
// TLS-ALPN-01 challenges.
func (t *tlsSetup) httpsConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: t.getCertificate, NextProtos: []string{"http/1.1"}}
	if t.acme != nil {
		c.NextProtos = append(c.NextProtos, acme.ALPNProto)
	}
	return c
}

// turnConfig is TURN over TLS's: the same certificates, no ALPN (browsers
// send none for TURN).
func (t *tlsSetup) turnConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: t.getCertificate}
}

// redirectHandler answers the redirect listener: ACME HTTP-01 challenges
// (with ACME), and a redirect to the same host and path over HTTPS on
// httpsPort for everything else.
func (t *tlsSetup) redirectHandler(httpsPort int) http.Handler {
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		if !validHost(host) {
			http.Error(w, "hostrelay: HTTPS only; no valid Host header to redirect to", http.StatusBadRequest)
			return
		}
		if httpsPort != 443 {
			host = net.JoinHostPort(host, strconv.Itoa(httpsPort))
		} else if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		// 308 keeps the method and body, so a POST is not silently a GET.
		// The host is the one the browser asked for: a browser cannot be
		// made to send another, so this sends no one to a site they did
		// not name.
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect) //nolint:gosec // see above
	})
	if t.acme != nil {
		return t.acme.HTTPHandler(redirect)
	}
	return redirect
}

// validHost reports whether h is an IP address or a DNS name, and so safe
// to put in a URL as it is.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Limits of the redirect listener, which serves nothing but redirects and
// ACME tokens. It is limited as the HTTP listener is (connLimiter): at the
// cap the longest-waiting idle connection makes room, and one address may
// hold only a quarter of it, so idle connections from one address cannot
// keep out the CA checking an HTTP-01 token (issue 24, finding 3: 600 idle
// sockets behind netutil.LimitListener delayed a request by 40 s). The CA
// and browsers send their request at once, so the header must come within
// a few seconds, and a kept-alive connection has little to wait for.
const (
	redirectMaxConns      = 256
	redirectHeaderTimeout = 3 * time.Second
	redirectIdleTimeout   = 5 * time.Second
	redirectTimeout       = 10 * time.Second // a whole request, or a response
)

// redirectServer is the plain-HTTP listener that sends browsers to HTTPS.
type redirectServer struct {
	conns *connLimiter
	srv   *http.Server
	log   *slog.Logger
	serve chan error
}

// startRedirect listens on addr; exempt (trusted proxies) are not held to
// the per-address share.
func startRedirect(ctx context.Context, addr string, h http.Handler, exempt []netip.Prefix, log *slog.Logger) (*redirectServer, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: -http-redirect %s: %w", addr, err)
	}
	conns := newConnLimiter(ln, connCaps{listener: "redirect", max: redirectMaxConns,
		perAddr: addrShare(redirectMaxConns, 1), exempt: exempt}, log)
	r := &redirectServer{conns: conns, log: log, serve: make(chan error, 1), srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: redirectHeaderTimeout,
		ReadTimeout:       redirectTimeout,
		WriteTimeout:      redirectTimeout,
		IdleTimeout:       redirectIdleTimeout,
		MaxHeaderBytes:    8 << 10,
		ConnState:         conns.connState,
		ErrorLog:          httpErrorLog(log),
	}}
	go func() { r.serve <- r.srv.Serve(conns) }()
	return r, nil
}

func (r *redirectServer) addr() string {
	if r == nil {
		return ""
	}
	return r.conns.Addr().String()
}

func (r *redirectServer) shutdown(ctx context.Context) error {
	if r == nil {
		return nil
	}
	err := drainHTTP(ctx, r.srv, "redirect", r.log)
	if serr := <-r.serve; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("http redirect: %w", err)
	}
	return nil
}

// keyPair is a certificate and key from files, read again at a handshake
// after either file's modification time changed.
type keyPair struct {
	certFile, keyFile string
	log               *slog.Logger

	mu   sync.Mutex
	cert *tls.Certificate
	// The files' modification times when last read, whether that read
	// succeeded or not: a pair that failed is not read again (nor logged)
	// at every handshake, only once one of the files changes again.
	certMod, keyMod time.Time
}

// loadKeyPair reads the pair for the first time; here a bad file is an
// error, later only a warning (the pair in use stays).
func loadKeyPair(certFile, keyFile string, log *slog.Logger) (*keyPair, error) {
	k := &keyPair{certFile: certFile, keyFile: keyFile, log: log}
	certMod, keyMod, err := k.modTimes()
	if err == nil {
		err = k.load(certMod, keyMod)
	}
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return k, nil
}

func (k *keyPair) modTimes() (certMod, keyMod time.Time, err error) {
	ci, err := os.Stat(k.certFile)
	if err != nil {
		return certMod, keyMod, fmt.Errorf("-tls-cert %q: %w", k.certFile, err)
	}
	ki, err := os.Stat(k.keyFile)
	if err != nil {
		return certMod, keyMod, fmt.Errorf("-tls-key %q: %w", k.keyFile, err)
	}
	return ci.ModTime(), ki.ModTime(), nil
}

// load reads and parses both files; k.mu is held or k is not shared yet.
func (k *keyPair) load(certMod, keyMod time.Time) error {
	k.certMod, k.keyMod = certMod, keyMod
	certPEM, err := os.ReadFile(k.certFile)
	if err != nil {
		return fmt.Errorf("-tls-cert %q: %w", k.certFile, err)
	}
	keyPEM, err := os.ReadFile(k.keyFile)
	if err != nil {
		return fmt.Errorf("-tls-key %q: %w", k.keyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// tls says which input it could not parse; a mismatch is both.
		switch msg := err.Error(); {
		case strings.Contains(msg, "certificate input"):
			return fmt.Errorf("-tls-cert %q: %w", k.certFile, err)
		case strings.Contains(msg, "key input"):
			return fmt.Errorf("-tls-key %q: %w", k.keyFile, err)
		}
		return fmt.Errorf("-tls-cert %q and -tls-key %q: %w", k.certFile, k.keyFile, err)
	}
	k.cert = &cert
	k.logLoaded()
	return nil
}

// logLoaded says which certificate is now served, and warns if it is not
// valid now or expires within a week (renewal failing unseen).
func (k *keyPair) logLoaded() {
	leaf, err := x509.ParseCertificate(k.cert.Certificate[0])
	if err != nil {
		return // X509KeyPair parsed it already
	}
	attrs := []any{"component", "server", "cert", k.certFile, "subject", leaf.Subject.CommonName,
		"dns_names", leaf.DNSNames, "not_after", leaf.NotAfter.UTC()}
	now := time.Now()
	switch {
	case now.After(leaf.NotAfter) || now.Before(leaf.NotBefore):
		k.log.Warn("TLS certificate is not valid now: browsers will refuse it", attrs...)
	case leaf.NotAfter.Sub(now) < 7*24*time.Hour:
		k.log.Warn("TLS certificate expires within a week: renew it (the new files are read at the next handshake)", attrs...)
	default:
		k.log.Info("TLS certificate loaded", attrs...)
	}
}

// getCertificate is tls.Config.GetCertificate: the pair in use, read again
// first if the files changed.
func (k *keyPair) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	certMod, keyMod, statErr := k.modTimes()
	k.mu.Lock()
	defer k.mu.Unlock()
	if statErr == nil && (!certMod.Equal(k.certMod) || !keyMod.Equal(k.keyMod)) {
		if err := k.load(certMod, keyMod); err != nil {
			// Mid-renewal one file may be new and the other not yet: keep
			// serving the old pair; the second file's change retries.
			k.log.Warn("TLS certificate files changed but cannot be used; still serving the previous certificate",
				"component", "server", "err", err)
		}
	}
	return k.cert, nil
}

// httpErrorLog is the HTTP servers' ErrorLog: its lines at warn, except
// failed TLS handshakes, at debug: on a public port, scanners and clients
// that dislike a certificate make them all day.
func httpErrorLog(log *slog.Logger) *stdlog.Logger {
	return stdlog.New(httpErrorWriter{log: log}, "", 0)
}

type httpErrorWriter struct{ log *slog.Logger }

func (w httpErrorWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		level = slog.LevelDebug
	}
	w.log.Log(context.Background(), level, msg, "component", "server")
	return len(p), nil
}
