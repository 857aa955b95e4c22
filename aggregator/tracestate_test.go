package aggregator

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestTracestateTruncated: a client's tracestate over 512 characters is
// cut as W3C Trace Context 3.3.1.5 asks (members over 128 characters go
// first, then members from the end) instead of being dropped whole, as it
// was before 2026-11-29: a client whose vendors' tracestate ran past 512
// lost all of it, the first (most recent) vendor's entry included.
func TestTracestateTruncated(t *testing.T) {
	m := func(key string, n int) string { return key + "=" + strings.Repeat("v", n-len(key)-1) } // n characters
	four := strings.Join([]string{m("a", 120), m("b", 120), m("c", 120), m("d", 120)}, ",")
	for _, c := range []struct {
		name, in, want string
	}{
		{"short, kept as is", " a=1 ,, b=2", " a=1 ,, b=2"},
		{"exactly 512", strings.Repeat("x", 512), strings.Repeat("x", 512)},
		{"from the end", four + "," + m("e", 120), four},
		{"long members first", m("big", 200) + "," + four + "," + m("e", 20), four + "," + m("e", 20)},
		{"whitespace and empty members", four + " ,\t, ,  " + m("e", 20) + " , " + m("f", 120), four + "," + m("e", 20)},
		{"one huge member", m("x", 600), ""},
		{"only commas", strings.Repeat(",", 600), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := TruncateTracestate([]byte(c.in)); got != c.want {
				t.Errorf("TruncateTracestate(%d characters) = %q (%d), want %q (%d)", len(c.in), got, len(got), c.want, len(c.want))
			}
		})
	}
}

// FuzzTruncateTracestate: whatever a client sends, what is kept is at most
// 512 bytes; a tracestate of at most 512 is kept as is; a longer one keeps
// the first of its members (trimmed, not empty) of at most 128 characters,
// in order, joined with ",", at most 32 of them.
func FuzzTruncateTracestate(f *testing.F) {
	f.Add([]byte("a=1,b=2"), 3)
	f.Add([]byte(" k=v ,\t,x="), 100)
	f.Add([]byte(",=,"), 300)
	f.Fuzz(func(t *testing.T, seed []byte, repeat int) {
		in := bytes.Repeat(seed, max(repeat%400, 1))
		got := TruncateTracestate(in)
		if len(got) > MaxTracestate {
			t.Fatalf("%d bytes kept", len(got))
		}
		if len(in) <= MaxTracestate {
			if got != string(in) {
				t.Fatalf("%q changed to %q", in, got)
			}
			return
		}
		var want []string
		for _, mem := range strings.Split(string(in), ",") {
			if mem = strings.Trim(mem, " \t"); mem != "" && len(mem) <= 128 {
				want = append(want, mem)
			}
		}
		var kept []string
		if got != "" {
			kept = strings.Split(got, ",")
		}
		if len(kept) > len(want) || len(kept) > 32 {
			t.Fatalf("kept %d members of %d", len(kept), len(want))
		}
		for i := range kept {
			if kept[i] != want[i] {
				t.Fatalf("member %d kept as %q, want %q", i, kept[i], want[i])
			}
		}
		if len(kept) < len(want) && len(kept) < 32 {
			need := len(want[len(kept)])
			if got != "" {
				need++ // its comma
			}
			if len(got)+need <= MaxTracestate {
				t.Fatalf("member %q would have fitted after %d bytes", want[len(kept)], len(got))
			}
		}
	})
}

// TestTracestateTruncatedTo32Members: a list can have at most 32 members
// (W3C Trace Context 3.3.1.1). A tracestate over 512 characters of short
// members was cut to 512 characters but kept 34 of them: a list the
// edge's own server span refused whole (trace.ParseTraceState), and that
// the services' parsers refuse, so the cut lost every vendor's entry it
// was meant to keep. The cut keeps the first 32.
func TestTracestateTruncatedTo32Members(t *testing.T) {
	var ms []string
	for i := range 40 {
		ms = append(ms, fmt.Sprintf("k%02d=vvvvvvvvvv", i)) // 14 characters: 40 of them are 599
	}
	got := TruncateTracestate([]byte(strings.Join(ms, ",")))
	if want := strings.Join(ms[:32], ","); got != want {
		t.Errorf("kept %d members (%d characters), want the first 32", strings.Count(got, ",")+1, len(got))
	}
	if _, err := trace.ParseTraceState(got); err != nil {
		t.Errorf("the cut tracestate does not parse: %v", err)
	}
}
