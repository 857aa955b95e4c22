// Package runtimeenv checks that every way the edge ships sets the same Go
// runtime environment (GODEBUG; README, "Runtime settings"): the image's
// Dockerfile, the systemd unit and the Helm chart's default values, and that
// the benchmarks measure the edge with it (scripts/lib.sh's SHIPPED_GODEBUG,
// which bench/run.sh and bench/ab.sh start their edges with).
package runtimeenv

import (
	"os"
	"regexp"
	"testing"
)

func TestGODEBUGAgrees(t *testing.T) {
	sources := []struct {
		file, pattern string
	}{
		{"../../helm/dealer-edge/values.yaml", `(?m)^godebug: "([^"]*)"$`},
		{"../../../Dockerfile", `(?m)^ENV GODEBUG=(\S+)$`},
		{"../../systemd/dealer-edge.service", `(?m)^Environment=GODEBUG=(\S+)$`},
		{"../../../scripts/lib.sh", `(?m)^SHIPPED_GODEBUG="([^"]*)"$`},
	}
	var want string
	for i, s := range sources {
		b, err := os.ReadFile(s.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(s.pattern).FindAllSubmatch(b, -1)
		if len(m) != 1 {
			t.Errorf("%s: %d settings of GODEBUG (pattern %s), want one", s.file, len(m), s.pattern)
			continue
		}
		got := string(m[0][1])
		if i == 0 {
			want = got
			if want == "" {
				t.Fatalf("%s: godebug is empty", s.file)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: GODEBUG %q, the chart's default is %q", s.file, got, want)
		}
	}
}
