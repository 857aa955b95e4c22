package cache

import (
	"context"
	"testing"
	"time"
)

// TestSetRefreshTimeout: a shared fill whose caller has no deadline runs
// under the refresh timeout in force (Options.RefreshTimeout, then
// SetRefreshTimeout: 0 restores the default, a negative value changes
// nothing), read when the fill starts.
func TestSetRefreshTimeout(t *testing.T) {
	c := newCache(t, Options{})
	pol := Policy{TTL: time.Minute}
	left := func(key string) time.Duration {
		t.Helper()
		var d time.Duration
		fill := func(ctx context.Context) ([]byte, error) {
			dl, ok := ctx.Deadline()
			if !ok {
				t.Fatal("a shared fill without a deadline")
			}
			d = time.Until(dl)
			return []byte("x"), nil
		}
		if _, _, err := c.Get(context.Background(), 1, []byte(key), pol, fill); err != nil {
			t.Fatal(err)
		}
		return d
	}
	steps := []struct {
		set  time.Duration
		want time.Duration
	}{
		{-1, DefaultRefreshTimeout}, // nothing set yet: the option's default
		{9 * time.Second, 9 * time.Second},
		{-time.Second, 9 * time.Second},
		{0, DefaultRefreshTimeout},
	}
	for i, s := range steps {
		c.SetRefreshTimeout(s.set)
		if got := c.RefreshTimeout(); got != s.want {
			t.Errorf("step %d: RefreshTimeout() = %v, want %v", i, got, s.want)
		}
		if d := left(string(rune('a' + i))); d > s.want || d < s.want-time.Second {
			t.Errorf("step %d: the fill had %v left, want about %v", i, d, s.want)
		}
	}
}
