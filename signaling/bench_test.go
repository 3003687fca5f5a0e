package signaling

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// BenchmarkRoundTripWhileWatching is the round trip of one client's request
// that takes the hub's lock (setName) while 30 connections re-watch a room
// list of 3,000 public rooms at the default message rate (50/s each), the
// load of issue 11 item 6. ns/op is the mean; p50-ms, p99-ms and max-ms the spread.
func BenchmarkRoundTripWhileWatching(b *testing.B) {
	const rooms, watchers, perSecond = 3000, 30, 50
	hub, url := testHub(b, func(c *Config) {
		// The watchers pace themselves at the default rate; the measured
		// client is not limited, so it can make b.N requests.
		c.MessagesPerSecond, c.MessageBurst = 1e6, 1<<20
		c.MaxConnsPerIP = watchers + 1
	})
	seedRooms(b, hub, rooms, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, watchers)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range watchers {
			w := connect(b, url, "")
			go resubscribeList(ctx, w, time.Second/perSecond, errs)
		}
	}()
	<-done
	c := connect(b, url, "Ada")
	rtts := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		c.request(protocol.TypeSetName, &protocol.SetName{Name: "Ada"})
		c.expect(protocol.TypeOK, &protocol.OK{})
		rtts = append(rtts, time.Since(start))
	}
	b.StopTimer()
	cancel()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	slices.Sort(rtts)
	ms := func(q float64) float64 { return float64(rtts[int(q*float64(len(rtts)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(ms(1), "max-ms")
}
