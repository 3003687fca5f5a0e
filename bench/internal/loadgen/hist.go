package loadgen

import (
	"sync/atomic"
	"time"
)

const (
	histBucket = 100 * time.Nanosecond
	histMax    = 20 * time.Millisecond
	histN      = int(histMax / histBucket)
)

// Hist is a latency histogram with 100 ns buckets up to 20 ms, safe for
// concurrent Add.
type Hist struct {
	buckets [histN + 1]atomic.Uint32
	n       atomic.Uint64
}

// Add records one sample; negative samples count as zero, samples past 20 ms
// land in the last bucket.
func (h *Hist) Add(d time.Duration) {
	i := int(d / histBucket)
	switch {
	case i < 0:
		i = 0
	case i > histN:
		i = histN
	}
	h.buckets[i].Add(1)
	h.n.Add(1)
}

// Count is the number of samples.
func (h *Hist) Count() uint64 { return h.n.Load() }

// HistMax is the largest latency the histogram tells apart; Quantile
// returns it for anything at or past it.
const HistMax = histMax

// Quantile returns the q-quantile (0..1), to the bucket's upper edge.
func (h *Hist) Quantile(q float64) time.Duration {
	total := h.n.Load()
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	if want >= total {
		want = total - 1
	}
	var seen uint64
	for i := range h.buckets {
		seen += uint64(h.buckets[i].Load())
		if seen > want {
			return min(time.Duration(i+1)*histBucket, histMax)
		}
	}

	return histMax
}
