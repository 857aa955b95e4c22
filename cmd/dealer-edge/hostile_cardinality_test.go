package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rawGet sends one request as written (control characters and all) on a
// new connection and reads the answer to its end.
func rawGet(t *testing.T, addr, method, target string, hdr ...string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n", method, target)
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, bufio.NewReader(c))
}

// Labels of /metrics take values from fixed sets only (README "Metrics"):
// no path, key, dealer id, method, header or query a client sends becomes
// a label value, so a hostile client cannot grow the series count; and
// the access log stays one JSON object a line whatever the headers carry
// (an X-Request-ID with control characters is replaced, User-Agent and
// Referer are not logged). Every input below is distinct and carries the
// marker "hostile".
func TestHostileInputGrowsNoSeriesAndInjectsNoLogLine(t *testing.T) {
	e := startEdge(t, "--demo")
	addr := strings.TrimPrefix(e.base, "http://")
	long := strings.Repeat("hostile-ua-", 400) // 4.4 KB
	round := func(from, to int) {
		for i := from; i < to; i++ {
			key := "demo-key-alpha"
			if i%3 == 0 {
				key = fmt.Sprintf("hostile-key-%d", i)
			}
			hdr := []string{"X-Api-Key", key, "X-Request-ID", fmt.Sprintf("hostile \x01\x1b[31m %d", i),
				"User-Agent", long, "Referer", "http://hostile/" + long, "traceparent", fmt.Sprintf("00-hostile%d", i)}
			for _, target := range []string{
				fmt.Sprintf("/dealer/hostile%d/listing", i),
				fmt.Sprintf("/dealer/content/hostile%d/listing", i),
				fmt.Sprintf("/hostile/%d/%%FF%%0A", i),
				fmt.Sprintf("/dealer/REWIND/listing?page=hostile%d&dealer_id=%d&hostile%d=1", i, 1000+i, i),
				fmt.Sprintf("/dealer/REWIND/details?id_offerta=%d", 900000+i),
			} {
				rawGet(t, addr, "GET", target, hdr...)
			}
			rawGet(t, addr, fmt.Sprintf("HOSTILE%d", i), "/dealer/REWIND/listing", hdr...)
		}
	}
	edgeSeries := func() map[string]float64 {
		out := map[string]float64{}
		for k, v := range e.scrape() {
			if strings.HasPrefix(k, "edge_") {
				out[k] = v
			}
		}
		return out
	}
	round(0, 30)
	first := edgeSeries()
	round(30, 150)
	second := edgeSeries()

	var grown []string
	for k := range second {
		if _, ok := first[k]; !ok {
			grown = append(grown, k)
		}
	}
	// A status first seen in the second round (the failed-auth limit's
	// 429, say) may add a few series; 120 more distinct clients must not.
	if len(grown) > 12 {
		t.Errorf("120 more distinct hostile clients added %d series: %v", len(grown), grown)
	}
	allowed := map[string]*regexp.Regexp{
		"route":  regexp.MustCompile(`^(inventory_listing|inventory_details|content_hub|content_search|content_listing|content_details|openapi|not_found|other)$`),
		"status": regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]xx|other)$`),
		"cache":  regexp.MustCompile(`^(hit|miss|stale|bypass|none|other)$`),
	}
	labelRE := regexp.MustCompile(`([a-z_]+)="([^"]*)"`)
	for k := range second {
		if strings.Contains(strings.ToLower(k), "hostile") {
			t.Errorf("a client's input became a label value: %s", k)
		}
		for _, m := range labelRE.FindAllStringSubmatch(k, -1) {
			if re := allowed[m[1]]; re != nil && !re.MatchString(m[2]) {
				t.Errorf("label %s=%q outside its fixed set: %s", m[1], m[2], k)
			}
		}
	}

	lines := 0
	for _, l := range strings.Split(e.stderr.String(), "\n") {
		if l == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("log line is not one JSON object: %q", l)
			continue
		}
		if rec["msg"] != "access" {
			continue
		}
		lines++
		if len(l) > 1024 {
			t.Errorf("access line of %d bytes: %.200s", len(l), l)
		}
		if strings.Contains(strings.ToLower(l), "hostile") {
			t.Errorf("a client's header or path reached the access line: %s", l)
		}
	}
	t.Logf("series %d then %d, %d access lines", len(first), len(second), lines)
	if lines < 50 {
		t.Errorf("only %d access lines logged", lines)
	}
}
