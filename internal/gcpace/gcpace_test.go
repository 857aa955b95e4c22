package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	const noLimit = math.MaxInt64
	for _, tc := range []struct {
		name                     string
		live, roots, room, limit uint64
		base, want               int
	}{
		{"2 MiB live, 16 MiB room", 2 * mib, mib, 16 * mib, 160 * mib, 100, 450}, // the minimum heap bounds it: 4 MiB x 4.5 = live + room
		{"8 MiB live, 16 MiB room", 8 * mib, 0, 16 * mib, 160 * mib, 100, 200},
		{"roots count", 6 * mib, 2 * mib, 16 * mib, 160 * mib, 100, 200},
		{"live heap above the room: the default", 20 * mib, 2 * mib, 16 * mib, 232 * mib, 100, 100},
		{"no limit", 8 * mib, 0, 16 * mib, noLimit, 100, 200},
		{"limit above MaxInt64", 8 * mib, 0, 16 * mib, math.MaxUint64, 100, 200},
		{"half the room to the limit at most", 8 * mib, 0, 16 * mib, 24 * mib, 100, 100},
		{"half the room to the limit at most, above the default", 8 * mib, 0, 64 * mib, 40 * mib, 100, 200},
		{"live above the limit", 300 * mib, 0, 16 * mib, 232 * mib, 100, 100},
		{"live unknown", 0, mib, 16 * mib, 232 * mib, 100, 100},
		{"room 0", 2 * mib, 0, 0, 232 * mib, 100, 100},
		{"clamped high", 32 * mib, 0, 1 << 50, noLimit, 100, maxPercent},
		{"operator's base kept as the floor", 8 * mib, 0, 16 * mib, 232 * mib, 300, 300},
		{"base 0 is the default", 20 * mib, 0, 16 * mib, 232 * mib, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percent(tc.live, tc.roots, tc.room, tc.limit, tc.base); got != tc.want {
				t.Fatalf("Percent(live %d MiB, roots %d MiB, room %d MiB, limit %d MiB, %d) = %d, want %d",
					tc.live/mib, tc.roots/mib, tc.room/mib, tc.limit/mib, tc.base, got, tc.want)
			}
		})
	}
}

// TestPercentGoal: whatever the live heap and its roots, a GOGC above the
// default aims the runtime's goal, max(live + (live + roots) x GOGC/100,
// 4 MiB x GOGC/100), at most room past the live heap, and at most
// half-way to the limit.
func TestPercentGoal(t *testing.T) {
	const limit = 512 * mib
	for live := uint64(mib / 8); live < limit; live += mib / 2 {
		for _, roots := range []uint64{0, mib / 4, 8 * mib} {
			for _, room := range []uint64{4 * mib, 16 * mib, 64 * mib, 400 * mib} {
				p := Percent(live, roots, room, limit, 100)
				if p == 100 {
					continue
				}
				goal := max(float64(live)+float64(live+roots)*float64(p)/100, heapMinimum*float64(p)/100)
				if goal > float64(live+room)+1 {
					t.Fatalf("live %d roots %d room %d: GOGC %d aims at %.0f, above live + room", live, roots, room, p, goal)
				}
				if goal > float64(live+(limit-live)/2)+1 {
					t.Fatalf("live %d roots %d room %d: GOGC %d aims at %.0f, past half-way to the limit %d", live, roots, room, p, goal, limit)
				}
			}
		}
	}
}

func readMetric(t *testing.T, name string) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("metric %s: kind %v", name, s[0].Value.Kind())
	}
	return s[0].Value.Uint64()
}

// TestPacerFollowsCollections: in this process, with a memory limit far
// above a small live heap, the pacer raises GOGC after collections, keeps
// the heap goal the runtime reports below the limit, follows a change of
// the limit at the next collection, and Stop restores the default.
func TestPacerFollowsCollections(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 * mib))
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	const room = 64 * mib
	p := Start(room)
	if p == nil {
		t.Fatal("Start(64 MiB) = nil")
	}
	defer p.Stop()
	// Each collection finds the last sentinel; the finalizer goroutine
	// then adjusts. Wait for it rather than for a fixed time.
	waitAdjusted := func(after int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for p.Adjustments() <= after {
			if time.Now().After(deadline) {
				t.Fatalf("no adjustment after %d within 5 s", after)
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
	}
	waitAdjusted(p.Adjustments())
	runtime.GC() // a goal computed from the GOGC just set
	live := readMetric(t, "/gc/heap/live:bytes")
	roots := readMetric(t, "/gc/scan/stack:bytes") + readMetric(t, "/gc/scan/globals:bytes")
	gogc := readMetric(t, "/gc/gogc:percent")
	want := Percent(live, roots, room, 256*mib, 100)
	if live > 64*mib {
		t.Skipf("live heap %d MiB: too large for this check", live/mib)
	}
	if gogc <= 100 || p.Percent() <= 100 {
		t.Fatalf("GOGC %d (pacer says %d) with live %d KiB and a 64 MiB room, want above 100 (about %d)", gogc, p.Percent(), live>>10, want)
	}
	// The runtime's own goal: about the room past the live heap (the
	// live heap moves a little between the reads).
	if goal, want := readMetric(t, "/gc/heap/goal:bytes"), live+room; goal > want+want/10 || goal < want-want/10 {
		t.Fatalf("heap goal %d MiB with live %d MiB and a 64 MiB room, want about %d MiB", goal/mib, live/mib, want/mib)
	}

	// A limit closer than twice the room lowers GOGC at the next
	// collection.
	debug.SetMemoryLimit(int64(live) + 16*mib)
	n := p.Adjustments()
	waitAdjusted(n)
	waitAdjusted(p.Adjustments())
	if got := readMetric(t, "/gc/gogc:percent"); got >= gogc {
		t.Fatalf("GOGC %d after the limit fell to live + 16 MiB, want below %d", got, gogc)
	}

	p.Stop()
	if got := readMetric(t, "/gc/gogc:percent"); got != 100 {
		t.Fatalf("GOGC %d after Stop, want 100", got)
	}
	n = p.Adjustments()
	for range 3 {
		runtime.GC()
	}
	time.Sleep(20 * time.Millisecond)
	if p.Adjustments() != n {
		t.Fatalf("adjusted after Stop (%d -> %d)", n, p.Adjustments())
	}
	if got := readMetric(t, "/gc/gogc:percent"); got != 100 {
		t.Fatalf("GOGC %d after Stop and collections, want 100", got)
	}
}

func TestStartRefusesRoomZero(t *testing.T) {
	if p := Start(0); p != nil {
		p.Stop()
		t.Fatal("Start(0) started a pacer")
	}
	var p *Pacer
	p.Stop()
	if p.Percent() != 0 || p.Adjustments() != 0 {
		t.Fatal("nil pacer reports values")
	}
}

func TestStartLeavesGOGCOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if p := Start(16 * mib); p != nil {
		p.Stop()
		t.Fatal("Start with GOGC=off started a pacer")
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC %d after Start with GOGC=off, want it left off", got)
	}
}
