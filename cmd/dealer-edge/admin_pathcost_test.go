package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// adminNormalizeCost bounds what fasthttp's path normalisation copies for
// a request target: the path's length times the places where one of its
// loops acts ('/' before '/' or '.', and '%'), the measure the public
// server's guard uses (aggregator, TestPathNormalizationCostBounded).
func adminNormalizeCost(uri []byte) int {
	if i := bytes.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	k := 0
	for i, c := range uri {
		if c == '%' || c == '/' && i+1 < len(uri) && (uri[i+1] == '/' || uri[i+1] == '.') {
			k++
		}
	}
	return len(uri) * k
}

// TestAdminPathNormalizationBounded: the admin server, which parses every
// request's target before any token check, never normalises a path whose
// normalisation is quadratic in its length: after its HeaderReceived hook
// (which runs right before fasthttp parses the target) no target within
// the 4 KiB read buffer costs more than 64 Ki byte copies, and such a
// request is a 404 problem. Before 2026-11-29 the admin server had no
// hook: a 4 KB path of slashes cost it about 0.9 ms of CPU (about 13 µs
// for /healthz), any client of the admin port, no token needed, and the
// public listener's guard was the public server's alone.
func TestAdminPathNormalizationBounded(t *testing.T) {
	e := startEdge(t, "--demo")
	hook := e.app.adminSrv.HeaderReceived
	if hook == nil {
		t.Fatal("the admin server has no HeaderReceived hook: every target's path is normalised, at a cost quadratic in its length")
	}
	const maxCost = 64 << 10
	targets := []string{
		"/" + strings.Repeat("/", 4000),
		"/" + strings.Repeat("/.", 1990),
		"/" + strings.Repeat("/..", 1300),
		"/" + strings.Repeat("%2f", 1300),
		"/metrics?x=" + strings.Repeat("%2f", 1300), // the query is not normalised
		"/healthz",
		"/debug/pprof/goroutine?debug=1",
	}
	for _, target := range targets {
		var h fasthttp.RequestHeader
		h.SetMethod("GET")
		h.SetRequestURI(target)
		hook(&h)
		if c := adminNormalizeCost(h.RequestURI()); c > maxCost {
			t.Errorf("target %.40q... (%d bytes): after the hook its path costs %d to normalise, want at most %d", target, len(target), c, maxCost)
		}
		if adminNormalizeCost([]byte(target)) <= maxCost && string(h.RequestURI()) != target {
			t.Errorf("target %q changed to %q: a cheap target must be left alone", target, h.RequestURI())
		}
	}
	// End to end: a costly target is a 404 problem, like any path no
	// admin endpoint has.
	r := e.do("GET", e.admin+"/"+strings.Repeat("/", 3000))
	if r.status != 404 || r.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("a path of 3000 slashes: %d %s %q, want 404 problem", r.status, r.header.Get("Content-Type"), r.body)
	}
}
