package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestLimitValidate(t *testing.T) {
	tests := []struct {
		name string
		lim  Limit
		want error
	}{
		{"demo", Limit{Rate: 10, Burst: 10}, nil},
		{"fractional rate", Limit{Rate: 0.5, Burst: 1}, nil},
		{"bench", Limit{Rate: 1e6, Burst: 1e6}, nil},
		{"zero rate", Limit{Rate: 0, Burst: 10}, ErrRate},
		{"negative rate", Limit{Rate: -1, Burst: 10}, ErrRate},
		{"NaN rate", Limit{Rate: math.NaN(), Burst: 10}, ErrRate},
		{"infinite rate", Limit{Rate: math.Inf(1), Burst: 10}, ErrRate},
		{"rate above max", Limit{Rate: 2e6, Burst: 10}, ErrRate},
		{"zero burst", Limit{Rate: 1, Burst: 0}, ErrBurst},
		{"burst above max", Limit{Rate: 1e6, Burst: MaxBurst + 1}, ErrBurst},
		{"refill too long", Limit{Rate: 1e-6, Burst: 1}, ErrRefill},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.lim.Validate(); !errors.Is(err, tt.want) {
				t.Fatalf("Validate() = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestAppendHeaders(t *testing.T) {
	tests := []struct {
		name       string
		d          Decision
		policyName string
		policy     string
		current    string
	}{
		{
			name:       "demo limit, fresh",
			d:          Decision{Allowed: true, Limit: Limit{Rate: 10, Burst: 10}, Remaining: 9, Reset: 100 * time.Millisecond},
			policyName: "limited",
			policy:     `"limited";q=10;w=1`,
			current:    `"limited";r=9;t=1`,
		},
		{
			name:       "default limit, window rounds up",
			d:          Decision{Allowed: true, Limit: Limit{Rate: 30, Burst: 100}, Remaining: 42, Reset: 1900 * time.Millisecond},
			policyName: "default",
			policy:     `"default";q=100;w=4`,
			current:    `"default";r=42;t=2`,
		},
		{
			name:       "rejected, full reset exact",
			d:          Decision{Limit: Limit{Rate: 1, Burst: 5}, Remaining: 0, Reset: 5 * time.Second, RetryAfter: time.Second},
			policyName: "p",
			policy:     `"p";q=5;w=5`,
			current:    `"p";r=0;t=5`,
		},
		{
			name:       "a search of cost 5",
			d:          Decision{Allowed: true, Limit: Limit{Rate: 50, Burst: 100}, Remaining: 95, Reset: 100 * time.Millisecond, Cost: 5},
			policyName: "default",
			policy:     `"default";q=100;w=2;edge-cost=5`,
			current:    `"default";r=95;t=1`,
		},
		{
			name:       "cost 1 is not written",
			d:          Decision{Allowed: true, Limit: Limit{Rate: 50, Burst: 100}, Remaining: 99, Cost: 1},
			policyName: "default",
			policy:     `"default";q=100;w=2`,
			current:    `"default";r=99;t=0`,
		},
		{
			name:       "empty name and negative remaining",
			d:          Decision{Limit: Limit{Rate: 10, Burst: 10}, Remaining: -3},
			policyName: "",
			policy:     `"default";q=10;w=1`,
			current:    `"default";r=0;t=0`,
		},
		{
			name:       "name escaped, controls dropped",
			d:          Decision{Limit: Limit{Rate: 10, Burst: 10}},
			policyName: "a\"b\\c\nd\xffe",
			policy:     `"a\"b\\cde";q=10;w=1`,
			current:    `"a\"b\\cde";r=0;t=0`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := []byte("prefix:")
			p, c := tt.d.AppendHeaders(buf, tt.policyName)
			if string(p) != tt.policy || string(c) != tt.current {
				t.Fatalf("got\n  %s\n  %s\nwant\n  %s\n  %s", p, c, tt.policy, tt.current)
			}
			// Appending to policy must not clobber current.
			_ = append(p, "xxxxxxxx"...)
			if string(c) != tt.current {
				t.Fatalf("current clobbered through policy: %s", c)
			}
		})
	}
}

func TestAppendHeadersNoAlloc(t *testing.T) {
	d := Decision{Allowed: true, Limit: Limit{Rate: 50, Burst: 100}, Remaining: 99, Reset: 20 * time.Millisecond}
	buf := make([]byte, 0, 128)
	if n := testing.AllocsPerRun(100, func() { d.AppendHeaders(buf[:0], "default") }); n != 0 {
		t.Fatalf("AppendHeaders allocates %v times", n)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		name string
		d    Decision
		want int
	}{
		{"allowed", Decision{Allowed: true}, 0},
		{"rejected, tiny wait", Decision{RetryAfter: time.Microsecond}, 1},
		{"rejected, zero wait still says 1", Decision{}, 1},
		{"exact second", Decision{RetryAfter: 2 * time.Second}, 2},
		{"rounds up", Decision{RetryAfter: 2*time.Second + time.Nanosecond}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.RetryAfterSeconds(); got != tt.want {
				t.Fatalf("RetryAfterSeconds() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFailModeString(t *testing.T) {
	for m, want := range map[FailMode]string{FallbackLocal: "local", FailOpen: "open", FailClosed: "closed", 7: "FailMode(7)"} {
		if got := m.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(m), got, want)
		}
	}
}

func FuzzAppendHeaders(f *testing.F) {
	f.Add("default", 10.0, 10, 3, int64(time.Second))
	f.Add("a\"\\b", 0.5, 1, -1, int64(-5))
	f.Fuzz(func(t *testing.T, name string, rate float64, burst, remaining int, reset int64) {
		d := Decision{Limit: Limit{Rate: rate, Burst: burst}, Remaining: remaining, Reset: time.Duration(reset)}
		if d.Limit.Validate() != nil {
			return
		}
		p, c := d.AppendHeaders(nil, name)
		for _, v := range [][]byte{p, c} {
			s := string(v)
			if !strings.HasPrefix(s, `"`) || strings.Count(s, ";") < 2 {
				t.Fatalf("malformed %q", s)
			}
			for _, ch := range v {
				if ch < 0x20 || ch >= 0x7f {
					t.Fatalf("non-printable byte in %q", s)
				}
			}
		}
	})
}

func ExampleDecision_AppendHeaders() {
	d := Decision{Allowed: true, Limit: Limit{Rate: 10, Burst: 10}, Remaining: 7, Reset: 250 * time.Millisecond}
	buf := make([]byte, 0, 64) // reuse per request: no allocation
	policy, current := d.AppendHeaders(buf, "limited")
	fmt.Printf("RateLimit-Policy: %s\nRateLimit: %s\n", policy, current)
	// Output:
	// RateLimit-Policy: "limited";q=10;w=1
	// RateLimit: "limited";r=7;t=1
}
