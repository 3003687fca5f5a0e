package server

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

const testAPIKey = "operator-key-0123456789"

func getICE(t *testing.T, url string, header http.Header) (int, iceResponse, apiError) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q", ct)
	}
	var ok iceResponse
	var bad apiError
	if resp.StatusCode == http.StatusOK {
		err = json.NewDecoder(resp.Body).Decode(&ok)
	} else {
		err = json.NewDecoder(resp.Body).Decode(&bad)
	}
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, ok, bad
}

func TestICEEndpoint(t *testing.T) {
	s := startServer(t, "-api-keys", testAPIKey)
	base := "http://" + s.Addrs().HTTP + "/api/v1/ice"
	l := dialLobby(t, s.Addrs().HTTP, "Bot")
	token, session := l.welcome.Token, l.welcome.Session

	cases := []struct {
		name   string
		url    string
		header http.Header
		status int
		code   string
	}{
		{"no auth", base, http.Header{}, 401, "unauthenticated"},
		{"malformed auth", base, http.Header{"Authorization": {"Basic Zm9vOmJhcg=="}}, 401, "unauthenticated"},
		{"wrong token", base, http.Header{"Authorization": {"Bearer st_nope"}}, 401, "invalid_token"},
		{"wrong key", base + "?session=" + session, http.Header{"X-Api-Key": {"operator-key-0123456780"}}, 401, "invalid_api_key"},
		{"key without session", base, http.Header{"X-Api-Key": {testAPIKey}}, 400, "invalid_argument"},
		{"key, unknown session", base + "?session=s_unknown", http.Header{"X-Api-Key": {testAPIKey}}, 403, "session_closed"},
		{"valid session token", base, http.Header{"Authorization": {"Bearer " + token}}, 200, ""},
		{"valid key", base + "?session=" + session, http.Header{"X-Api-Key": {testAPIKey}}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, ok, bad := getICE(t, tc.url, tc.header)
			if status != tc.status || bad.Error.Code != tc.code {
				t.Fatalf("status %d code %q (%s), want %d %q", status, bad.Error.Code, bad.Error.Message, tc.status, tc.code)
			}
			if status != 200 {
				if bad.Error.Message == "" {
					t.Fatal("error without a message")
				}
				return
			}
			if len(ok.ICEServers) != 1 || len(ok.ICEServers[0].URLs) != 2 || ok.TTL <= 0 ||
				!strings.HasSuffix(ok.ICEServers[0].Username, ":"+session) || ok.ICEServers[0].Credential == "" ||
				ok.ExpiresAt.Before(time.Now()) {
				t.Fatalf("response %+v", ok)
			}
			// The credentials really work on our TURN.
			allocate(t, s.Addrs().TURNUDP, iceFromJSON(ok))
		})
	}

	// Once the lobby session ends, its token and the key route both refuse.
	l.WS().Close(websocket.StatusNormalClosure, "")
	testwait.For(t, "the session to end", func() bool { return !s.Hub().SessionLive(session) })
	if status, _, bad := getICE(t, base, http.Header{"Authorization": {"Bearer " + token}}); status != 401 || bad.Error.Code != "invalid_token" {
		t.Fatalf("expired session token: %d %+v", status, bad)
	}
	if status, _, bad := getICE(t, base+"?session="+session, http.Header{"X-Api-Key": {testAPIKey}}); status != 403 || bad.Error.Code != "session_closed" {
		t.Fatalf("key for an expired session: %d %+v", status, bad)
	}
}

// TestSecretsNeverLogged: API keys (right or wrong), session tokens (live,
// ended or made up), resume tokens, TURN credentials and the TURN secret
// never reach the log, at any level down to pion's trace, while every path
// that handles them runs: hello, room creation, the ICE endpoint's refusals
// and successes, TURN allocations with good and bad credentials, a forged
// resume.
func TestSecretsNeverLogged(t *testing.T) {
	key, wrongKey, secret := "key-"+rand.Text(), "key-"+rand.Text(), rand.Text()
	var logs logBuffer
	s := startServerLogging(t, slog.LevelDebug-8, &logs, "-api-keys", key, "-turn-secret", secret)
	base := "http://" + s.Addrs().HTTP + "/api/v1/ice"
	l := dialLobby(t, s.Addrs().HTTP, "Bot")
	token, session := l.welcome.Token, l.welcome.Session
	rj := l.create("r", 2, "")
	fakeToken := "st_" + rand.Text()

	secrets := map[string]string{"API key": key, "wrong API key": wrongKey, "session token": token,
		"made-up session token": fakeToken, "resume token": l.welcome.Resume, "TURN secret": secret,
		"TURN credential (lobby)": rj.ICE.Servers[0].Credential}
	for _, h := range []http.Header{
		{"X-Api-Key": {key}},
		{"X-Api-Key": {wrongKey}},
		{"Authorization": {"Bearer " + token}},
		{"Authorization": {"Bearer " + fakeToken}},
		{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+key))}},
	} {
		status, ok, _ := getICE(t, base+"?session="+session, h)
		if status == http.StatusOK {
			secrets["TURN credential (API) "+ok.ICEServers[0].Username] = ok.ICEServers[0].Credential
			allocate(t, s.Addrs().TURNUDP, iceFromJSON(ok))
		}
	}
	allocate(t, s.Addrs().TURNUDP, rj.ICE)
	bad := rj.ICE
	bad.Servers = []protocol.ICEServer{bad.Servers[0]}
	bad.Servers[0].Credential = "x" + bad.Servers[0].Credential
	if _, err := tryAllocate(t, s.Addrs().TURNUDP, bad); err == nil {
		t.Fatal("allocation with a wrong credential succeeded")
	}
	forgedResume := "rt_" + rand.Text()
	secrets["forged resume token"] = forgedResume
	conn, _, err := dialWS(t, s.Addrs().HTTP, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = newLobby(t, conn).call(protocol.TypeHello,
		&protocol.Hello{Version: protocol.Version, Name: "Other", Resume: forgedResume}, &protocol.Welcome{})
	if !isCode(err, protocol.CodeResumeFailed) {
		t.Fatalf("forged resume: %v, want resume_failed", err)
	}
	// After the session ends its token and key route are refused (and may
	// log that).
	l.WS().Close(websocket.StatusNormalClosure, "")
	testwait.For(t, "the session to end", func() bool { return !s.Hub().SessionLive(session) })
	getICE(t, base, http.Header{"Authorization": {"Bearer " + token}})
	getICE(t, base+"?session="+session, http.Header{"X-Api-Key": {key}})

	out := logs.String()
	// The log is not silent, so its silence on secrets means something:
	// the refused key and the sessions were logged.
	for _, want := range []string{"refused API key", session} {
		if !strings.Contains(out, want) {
			t.Fatalf("log never mentions %q; is it captured?\n%s", want, out)
		}
	}
	for what, v := range secrets {
		if v == "" {
			t.Fatalf("%s: empty, nothing to look for", what)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, v) {
				t.Errorf("%s logged: %s", what, line)
			}
		}
	}
}

// logBuffer collects a server's log for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestICEEndpointWithoutConfiguredKeys(t *testing.T) {
	s := startServer(t)
	l := dialLobby(t, s.Addrs().HTTP, "Bot")
	status, _, bad := getICE(t, "http://"+s.Addrs().HTTP+"/api/v1/ice?session="+l.welcome.Session, http.Header{"X-Api-Key": {""}})
	if status != 401 || bad.Error.Code != "unauthenticated" {
		t.Fatalf("empty key: %d %+v", status, bad)
	}
	status, _, bad = getICE(t, "http://"+s.Addrs().HTTP+"/api/v1/ice?session="+l.welcome.Session, http.Header{"X-Api-Key": {testAPIKey}})
	if status != 401 || bad.Error.Code != "invalid_api_key" {
		t.Fatalf("key on a server with none: %d %+v", status, bad)
	}
}

func TestHostOnly(t *testing.T) {
	for in, want := range map[string]string{
		"example.com:8080": "example.com", "example.com": "example.com", "127.0.0.1:80": "127.0.0.1",
		"[::1]:8080": "::1", "[::1]": "::1", "::1": "::1",
	} {
		if got := hostOnly(in); got != want {
			t.Errorf("hostOnly(%q) = %q, want %q", in, got, want)
		}
	}
}
