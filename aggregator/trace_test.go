package aggregator

import (
	"strings"
	"testing"
)

func TestSpanMethod(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET", "GET"}, {"HEAD", "HEAD"}, {"DELETE", "DELETE"}, {"get", "_OTHER"}, {"FOO", "_OTHER"},
		{"", "_OTHER"}, {strings.Repeat("X", 1000), "_OTHER"},
	} {
		if got := spanMethod([]byte(c.in)); got != c.want {
			t.Errorf("spanMethod(%.10q) = %q, want %q", c.in, got, c.want)
		}
	}
}
