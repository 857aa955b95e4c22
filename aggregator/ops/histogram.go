package ops

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// durationBuckets are the upper bounds (le) of the latency histograms,
// from 0.5 ms to 10 s: an edge answers cache hits in well under a
// millisecond and gives up on upstreams after seconds.
var durationBuckets = []time.Duration{
	500 * time.Microsecond,
	time.Millisecond,
	2500 * time.Microsecond,
	5 * time.Millisecond,
	10 * time.Millisecond,
	25 * time.Millisecond,
	50 * time.Millisecond,
	100 * time.Millisecond,
	250 * time.Millisecond,
	500 * time.Millisecond,
	time.Second,
	2500 * time.Millisecond,
	5 * time.Second,
	10 * time.Second,
}

// durationHistogram is a Prometheus histogram with fixed `le` buckets,
// lock-free and allocation-free to update.
//
// VictoriaMetrics/metrics' own Histogram exposes `vmrange` buckets, which
// only VictoriaMetrics' query language turns into quantiles; Prometheus'
// histogram_quantile needs cumulative `le` buckets, so the latency
// histograms are written by this type through Set.RegisterMetricsWriter.
type durationHistogram struct {
	counts [16]atomic.Uint64 // per bucket, not cumulative; last used index is len(durationBuckets) (+Inf)
	sumNs  atomic.Uint64
}

func (h *durationHistogram) observe(d time.Duration) {
	if d < 0 {
		d = 0
	}
	i := 0
	for i < len(durationBuckets) && d > durationBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(uint64(d))
}

// count returns the number of observations.
func (h *durationHistogram) count() uint64 {
	var n uint64
	for i := 0; i <= len(durationBuckets); i++ {
		n += h.counts[i].Load()
	}
	return n
}

// write writes the histogram's series; labels is `k="v",...` or "".
func (h *durationHistogram) write(w io.Writer, name, labels string) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum uint64
	for i, b := range durationBuckets {
		cum += h.counts[i].Load()
		fmt.Fprintf(w, "%s_bucket{%s%sle=%q} %d\n", name, labels, sep, strconv.FormatFloat(b.Seconds(), 'g', -1, 64), cum)
	}
	cum += h.counts[len(durationBuckets)].Load()
	fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, cum)
	sum := strconv.FormatFloat(float64(h.sumNs.Load())/1e9, 'g', -1, 64)
	if labels == "" {
		fmt.Fprintf(w, "%s_sum %s\n%s_count %d\n", name, sum, name, cum)
		return
	}
	fmt.Fprintf(w, "%s_sum{%s} %s\n%s_count{%s} %d\n", name, labels, sum, name, labels, cum)
}
