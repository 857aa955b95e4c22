package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestEmptyRuntimeVariables: GOMEMLIMIT or GOGC set to the empty string
// (a systemd "Environment=GOMEMLIMIT=", a chart value left empty) is
// unset for the Go runtime (no memory limit; GOGC 100), but the edge
// tests only that the variable exists (os.LookupEnv), so it skips the
// memory limit it sizes from cache.l1_max_bytes and the GC pacing of
// server.gc_min_growth_bytes: the process runs with no soft limit at all
// (go_memlimit_bytes 9223372036854775807) and logs "gc pacing" "by":
// "GOGC" with "gogc": "". The tracing section's rule ("a variable that is
// set (non-empty) wins") is the one the runtime applies.
func TestEmptyRuntimeVariables(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := edgeBinary(t)
	for _, c := range []struct{ env, want string }{
		{"GOMEMLIMIT=", `"msg":"memory limit"`},
		{"GOGC=", `"by":"server.gc_min_growth_bytes"`},
	} {
		cmd := exec.Command(bin, "--demo", "--listen", "127.0.0.1:0", "--admin-listen", "off")
		cmd.Env = append(os.Environ(), c.env)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(stderr.String(), `"msg":"listening"`) {
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if !strings.Contains(stderr.String(), c.want) {
			var pacing string
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(l, `"gc pacing"`) || strings.Contains(l, `"memory limit"`) {
					pacing += l
				}
			}
			t.Errorf("with %s (unset for the runtime) the edge did not log %s; it logged: %s", c.env, c.want, pacing)
		}
	}
}
