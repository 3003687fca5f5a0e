package client

import "testing"

// TestSDPSession: the o= session id tells a renegotiation (same
// RTCPeerConnection, answered in place) from a new connection.
func TestSDPSession(t *testing.T) {
	for _, c := range []struct{ sdp, want string }{
		{"v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\n", "4611731400430051336"},
		{"v=0\no=mozilla...THIS_IS_SDPARTA-99.0 123 0 IN IP4 0.0.0.0\n", "123"},
		{"v=0\r\ns=-\r\n", ""}, // no o= line
		{"v=0\r\no=-\r\n", ""}, // o= line without a session id
		{"", ""},
	} {
		if got := sdpSession(c.sdp); got != c.want {
			t.Errorf("sdpSession(%q) = %q, want %q", c.sdp, got, c.want)
		}
	}
}
