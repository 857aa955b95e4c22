// Package testcorpus builds the listing pages the benchmarks of the cache
// and of internal/inflate replay: the scale mix's pages, cut from the
// vehicles of internal/inflate/testdata/listing100.json. It is imported by
// tests only.
package testcorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
)

// MixPages returns n listing pages as the scale mix asks for them (row u:
// every page of every page size 1-80 equally likely, so a page's size is
// 1/ps likely), built from the vehicles 21-100 of the listing100.json at
// path (which the shared Huffman code's corpus holds only in that file
// itself). The sequence is the same on every call.
func MixPages(path string, n int) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return nil, err
	}
	if len(page.Items) <= 20 {
		return nil, fmt.Errorf("testcorpus: %s has %d items, want more than 20", path, len(page.Items))
	}
	items := page.Items[20:]
	r := rand.New(rand.NewPCG(11, 12))
	var weights []float64
	sum := 0.0
	for ps := 1; ps <= len(items); ps++ {
		sum += 1 / float64(ps)
		weights = append(weights, sum)
	}
	var out [][]byte
	for len(out) < n {
		x := r.Float64() * sum
		ps := 1
		for weights[ps-1] < x {
			ps++
		}
		p := r.IntN((len(items)+ps-1)/ps) + 1
		lo, hi := (p-1)*ps, min(p*ps, len(items))
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"service":"REWIND","page":%d,"page_size":%d,"total":330,"has_next":true,"items":[`, p, ps)
		for i, it := range items[lo:hi] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(it)
		}
		b.WriteString(`]}`)
		out = append(out, b.Bytes())
	}
	return out, nil
}
