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
// 512 bytes; a tracestate of at most 512 with fewer than 32 commas is kept
// as is; another keeps the first of its members (trimmed, not empty; of at
// most 128 characters when it is over 512), in order, joined with ",", at
// most 32 of them.
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
		short := len(in) <= MaxTracestate
		if short && bytes.Count(in, []byte(",")) < 32 {
			if got != string(in) {
				t.Fatalf("%q changed to %q", in, got)
			}
			return
		}
		var want []string
		for _, mem := range strings.Split(string(in), ",") {
			if mem = strings.Trim(mem, " \t"); mem != "" && (short || len(mem) <= 128) {
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

// TestTracestateMembersBounded: a tracestate of at most 512 characters but
// more than 32 list members (W3C Trace Context 3.3.1.1) was kept whole
// (only a longer one was cut): the internal services were sent a list
// their parsers refuse whole, and the server span dropped it. It keeps
// its first 32 non-empty members; one of fewer than 32 commas (at most 32
// members, empty ones counted) is kept as sent.
func TestTracestateMembersBounded(t *testing.T) {
	members := func(n int) []string {
		var ms []string
		for i := range n {
			ms = append(ms, fmt.Sprintf("k%d=v", i))
		}
		return ms
	}
	m33, m40 := members(33), members(40)
	long := "long=" + strings.Repeat("v", 200) // over 128: kept, the list is short
	for _, c := range []struct {
		name, in, want string
	}{
		{"32 members kept", strings.Join(members(32), ","), strings.Join(members(32), ",")},
		{"33 members", strings.Join(m33, ","), strings.Join(m33[:32], ",")},
		{"40 members", strings.Join(m40, ","), strings.Join(m40[:32], ",")},
		{"40 members, spaces and empties", " " + strings.Join(m40, " ,, ") + " ", strings.Join(m40[:32], ",")},
		{"empty members do not count", strings.Join(members(20), ",,"), strings.Join(members(20), ",")},
		{"a long member of a short list stays", long + "," + strings.Join(m40, ","), long + "," + strings.Join(m40[:31], ",")},
		{"31 commas kept as sent", strings.Repeat("a=1,", 31) + "a=1", strings.Repeat("a=1,", 31) + "a=1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.in) > MaxTracestate {
				t.Fatalf("case of %d characters: not a short tracestate", len(c.in))
			}
			got := TruncateTracestate([]byte(c.in))
			if got != c.want {
				t.Errorf("TruncateTracestate(%q) = %q, want %q", c.in, got, c.want)
			}
			if n := len(strings.Split(got, ",")); n > 32 {
				t.Errorf("kept %d members", n)
			}
		})
	}
}
