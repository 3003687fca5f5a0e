package main

import (
	"fmt"
	"math/bits"
	"slices"
)

// A flood comparison pools the quiet slices and the flood slices and
// compares their p99s. On a shared or small machine the p99 of the same
// load moves from run to run (the quiet lobby p99 was 9, 11, 13 and 17 ms
// in four runs of one shape), so a ratio alone cannot say whether the flood
// moved it. The slices can: if the flood changed nothing, which slices ran
// beside it is an arbitrary labelling, and every other labelling of the
// same slices (as many quiet as the run had) is as likely. relabelled
// computes the ratio for each of them; where the run's own ratio falls
// among them is a permutation test, and their spread is the run's noise.

// maxRelabelSlices bounds the enumeration: C(16, 8) = 12,870 labellings.
const maxRelabelSlices = 16

// noise is the spread of a figure's flood/quiet ratio over every labelling
// of the run's slices with as many quiet slices as it had.
type noise struct {
	Labellings int
	// Lo and Hi are the 5th and 95th percentiles of the ratios.
	Lo, Hi float64
	// AtLeast is the fraction of labellings whose ratio is at least the
	// run's own: the chance of a ratio this high with no flood at all.
	AtLeast float64
}

func (n noise) String() string {
	return fmt.Sprintf("noise: over %d labellings of the slices the ratio spans %.2f–%.2f (5th–95th percentile); "+
		"%.0f%% of them reach this run's", n.Labellings, n.Lo, n.Hi, 100*n.AtLeast)
}

// relabelled is the noise of the q-quantile's ratio for slices, whose
// even-numbered ones were quiet and odd-numbered ones flood (the run's own
// labelling); fig picks the histogram of a slice. ok is false when there
// are too few or too many slices to judge.
func relabelled(sl []phaseStats, fig func(*phaseStats) *hist, q float64) (n noise, ok bool) {
	if len(sl) < 4 || len(sl) > maxRelabelSlices {
		return noise{}, false
	}
	quietN := (len(sl) + 1) / 2
	var own uint32
	for i := 0; i < len(sl); i += 2 {
		own |= 1 << i
	}
	ratio := func(quiet uint32) float64 {
		var a, b hist
		for i := range sl {
			if quiet&(1<<i) != 0 {
				a.merge(fig(&sl[i]))
			} else {
				b.merge(fig(&sl[i]))
			}
		}
		qa := a.quantile(q)
		if qa == 0 {
			return 0
		}
		return float64(b.quantile(q)) / float64(qa)
	}
	ownRatio := ratio(own)
	var ratios []float64
	atLeast := 0
	for m := uint32(0); m < 1<<len(sl); m++ {
		if bits.OnesCount32(m) != quietN {
			continue
		}
		r := ratio(m)
		ratios = append(ratios, r)
		if r >= ownRatio {
			atLeast++
		}
	}
	slices.Sort(ratios)
	pick := func(p float64) float64 { return ratios[min(len(ratios)-1, int(p*float64(len(ratios))))] }
	return noise{Labellings: len(ratios), Lo: pick(0.05), Hi: pick(0.95),
		AtLeast: float64(atLeast) / float64(len(ratios))}, true
}
