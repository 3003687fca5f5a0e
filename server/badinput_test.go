package server

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// TestMsgpackBombsAgainstLiveServer is DESIGN.md's required regression test:
// the frames that make msgpack/v5 allocate gigabytes, and 100,000 levels of
// nesting, sent to the real /ws. The server answers with an error or a
// close, stays up, and neither keeps nor even briefly allocates more than
// a little memory.
func TestMsgpackBombsAgainstLiveServer(t *testing.T) {
	s := startServer(t)
	addr := s.Addrs().HTTP
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	l := dialLobby(t, addr, "Mallory")
	var start runtime.MemStats
	runtime.ReadMemStats(&start)
	for _, bomb := range [][]byte{{0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdf, 0xff, 0xff, 0xff, 0xff}} {
		if err := l.Write(t.Context(), bomb); err != nil {
			t.Fatal(err)
		}
		var e protocol.Error
		l.next(protocol.TypeError, &e)
		if e.Code != protocol.CodeBadMessage {
			t.Fatalf("reply to %x: %+v", bomb, e)
		}
	}

	// 100,000 levels is past the frame limit: the server closes with 1009.
	deep := append(bytes.Repeat([]byte{0x91}, 100_000), 0xc0)
	if err := l.Write(t.Context(), deep); err != nil {
		t.Fatal(err)
	}
	if err := l.closed(); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("closed with %v, want 1009", err)
	}
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	// TotalAlloc counts what was allocated while the server handled the
	// bombs, freed or not: a decoder that made a multi-gigabyte slice for
	// a moment would pass the heap check below but not this. Client and
	// server share this process, so both are counted: about 330 KiB under
	// -race (the deep frame alone is 100 KB on each side). 32 MiB leaves
	// ample room for the runtime and the other connections' background
	// work, and is still far below what one bomb decoded naively asks for
	// (4 billion elements: gigabytes).
	allocated := end.TotalAlloc - start.TotalAlloc
	t.Logf("handling the bombs allocated %d KiB", allocated>>10)
	if allocated > 32<<20 {
		t.Fatalf("handling the bombs allocated %d MiB", allocated>>20)
	}

	// Still serving.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz after bombs: %v %v", resp, err)
	}
	resp.Body.Close()
	dialLobby(t, addr, "After").create("still up", 2, "")

	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 32<<20 {
		t.Fatalf("heap grew by %d MiB", grew>>20)
	}
}
