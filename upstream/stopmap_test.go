package upstream

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// checkStopMap: for every start j, the map's answer is stopRun's, and for
// runs of every length from every start asciiRun's answer is the bytes',
// on b as it is and on every shorter prefix (the map's last, partial
// word). The expected answers come from one pass over the bytes (the next
// stop after each position, and a running count of bytes beyond ASCII):
// calling stopRun and scanning each run for every start made the check
// quadratic, and FuzzStopMap took 150 s of CI for 20,000 inputs. stopRun
// itself is checked against the same byte rule (strSafe) here, at a
// sample of starts, and whole by FuzzRuns.
func checkStopMap(t *testing.T, b []byte) {
	t.Helper()
	for _, n := range []int{len(b), len(b) - 1, len(b) - 63, len(b) - 64, len(b) - 65} {
		if n < 0 {
			continue
		}
		s := &invScanner{}
		s.b = b[:n]
		if !s.mapStops() {
			if n >= minStopMapBytes && hasAVX2 {
				t.Fatalf("no map for %d bytes", n)
			}
			continue
		}
		// next[j]: the first stop at or after j (n if none); high[i]:
		// the bytes beyond ASCII before i.
		next := make([]int, n+1)
		next[n] = n
		for j := n - 1; j >= 0; j-- {
			next[j] = next[j+1]
			if c := s.b[j]; c < 0x80 && !strSafe[c] {
				next[j] = j
			}
		}
		high := make([]int, n+1)
		for i, c := range s.b {
			high[i+1] = high[i]
			if c >= 0x80 {
				high[i+1]++
			}
		}
		for j := 0; j <= n+70; j++ {
			want := next[min(j, n)]
			if got := s.stopFrom(j); got != want && !(j > n && got == n) {
				t.Fatalf("len %d: stopFrom(%d) = %d, want %d", n, j, got, want)
			}
			if j%97 == 0 && j <= n {
				if got := stopRun(s.b, j); got != want {
					t.Fatalf("len %d: stopRun(%d) = %d, want %d", n, j, got, want)
				}
			}
		}
		for i := 0; i <= n; i += 1 + i%7 {
			for _, w := range []int{0, 1, 2, 7, 63, 64, 65, 130, 300} {
				j := min(i+w, n)
				want := high[j] == high[i]
				if got := s.asciiRun(i, j); got != want {
					t.Fatalf("len %d: asciiRun(%d, %d) = %v, want %v", n, i, j, got, want)
				}
			}
		}
		s.dropStops()
		if s.stops != nil || s.highs != nil {
			t.Fatal("map still in use after dropStops")
		}
	}
}

// TestStopMap: the map stops where stopRun does, on bytes of every kind
// (quotes, backslashes, control characters, DEL, bytes beyond ASCII) at
// every density, with and without a final partial chunk.
func TestStopMap(t *testing.T) {
	alphabet := []byte{'a', ' ', '"', '\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xa8, 0xff, '\n', 'z'}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{minStopMapBytes, minStopMapBytes + 1, minStopMapBytes + 63, 5000, 70001} {
		for _, density := range []int{1, 10, 200, 5000} {
			b := make([]byte, size)
			for i := range b {
				if rng.IntN(density) == 0 {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				} else {
					b[i] = byte('a' + rng.IntN(26))
				}
			}
			checkStopMap(t, b)
		}
	}
}

// FuzzStopMap: stopFrom equals stopRun for any body and start.
func FuzzStopMap(f *testing.F) {
	f.Add([]byte(`"abc\"def\\"`), uint16(3))
	f.Fuzz(func(t *testing.T, seed []byte, pad uint16) {
		b := make([]byte, 0, minStopMapBytes+int(pad))
		for len(b) < minStopMapBytes+int(pad)%300 {
			b = append(b, seed...)
			b = append(b, 'x')
		}
		checkStopMap(t, b)
	})
}

// checkUTCSeconds: where utcSeconds takes a string it gives what
// time.Parse gives and parseTimestamp (the fallback, the reflection
// decoder's rules) accepts, and it takes every canonical timestamp
// time.Parse accepts.
func checkUTCSeconds(t *testing.T, v string) {
	t.Helper()
	if strings.ContainsAny(v, `"\`) {
		// Not one JSON string token: utcSeconds reads the token at
		// the start and leaves what follows to the scanner.
		return
	}
	b := []byte(`"` + v + `"`)
	got, ok := utcSeconds(b, 0)
	want, err := time.Parse(time.RFC3339Nano, v)
	if ok && (err != nil || got != want) {
		t.Fatalf("%q: utcSeconds %v, time.Parse %v %v", v, got, want, err)
	}
	if strict, err := parseTimestamp(v); ok && (err != nil || got != strict) {
		t.Fatalf("%q: utcSeconds %v, parseTimestamp %v %v", v, got, strict, err)
	}
	if !ok && err == nil && len(v) == 20 && want.Location() == time.UTC && v[19] == 'Z' && want.Format("2006-01-02T15:04:05Z") == v {
		t.Fatalf("%q: refused a canonical timestamp", v)
	}
}

// TestUTCSeconds: the canonical form is read as time.Parse reads it;
// every other form and every field out of range is left to time.Parse.
func TestUTCSeconds(t *testing.T) {
	for _, v := range []string{
		"2026-01-31T01:55:03Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
		"2000-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-12-31T24:00:00Z", "2026-12-31T23:60:00Z",
		"2026-12-31T23:59:60Z", "2026-00-10T00:00:00Z", "2026-13-10T00:00:00Z", "2026-01-00T00:00:00Z",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-01-31T01:55:03+01:00", "2026-01-31T01:55:03.5Z",
		"2026-01-31t01:55:03Z", "2026-01-31T01:55:03z", "2026-1-31T01:55:03Z", "+026-01-31T01:55:03Z",
		"2026-01-31T01:55:0aZ", "2026-01-31 01:55:03Z",
	} {
		checkUTCSeconds(t, v)
	}
	if _, ok := utcSeconds([]byte(`"2026-01-31T01:55:03Z`), 0); ok {
		t.Fatal("took a timestamp without its closing quote")
	}
	for y := 1999; y <= 2101; y++ {
		for m := 1; m <= 12; m++ {
			for d := 27; d <= 32; d++ {
				checkUTCSeconds(t, fmt.Sprintf("%04d-%02d-%02dT12:34:56Z", y, m, d))
			}
		}
	}
}

// FuzzUTCSeconds: utcSeconds never disagrees with time.Parse.
func FuzzUTCSeconds(f *testing.F) {
	f.Add("2026-01-31T01:55:03Z")
	f.Add("2024-02-29T23:59:59Z")
	f.Fuzz(func(t *testing.T, v string) {
		checkUTCSeconds(t, v)
	})
}

// TestUnixDays: unixDays is the day count time.Date gives, for every day
// of the years utcSeconds can read (0000-9999).
func TestUnixDays(t *testing.T) {
	for y := 0; y <= 9999; y++ {
		for m := 1; m <= 12; m++ {
			for d := 1; d <= daysIn(m, y); d++ {
				want := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400 // midnight: a whole number of days
				if got := unixDays(y, m, d); got != want {
					t.Fatalf("%04d-%02d-%02d: unixDays %d, time.Date %d", y, m, d, got, want)
				}
			}
		}
	}
}

// timestampCases are timestamps (JSON string contents) and whether the
// reflection decoder accepts them: time.Parse also takes the one-digit
// hour, the comma before the fraction and the offsets of hour 24 or
// minute 60 below. TestParseTimestamp, TestKeySnapshotPageAgreesWithGenericDecoder
// and TestTimestampsFollowTheReflectionDecoder (as TimestampCases) use them.
var timestampCases = []timestampCase{
	{"2026-01-02T03:04:05Z", true},
	{"2026-01-02T03:04:05.5Z", true},
	{"2026-01-02T03:04:05.123456789+01:00", true},
	{"2026-01-02T03:04:05.1234567891Z", true},
	{"2026-01-02T03:04:05-23:59", true},
	{"2026-01-02T03:04:05+00:00", true},
	{"2026-01-02T03:04:05-00:00", true},
	{"0000-01-01T00:00:00Z", true},
	{`2026-01-02T03:04:05\u002b01:00`, true},
	{"2026-01-02T3:04:05Z", false},
	{"2026-01-02T3:04:05+01:00", false},
	{`2026-01-02T3:04:05\u002b01:00`, false},
	{"2026-01-02T03:04:05,5Z", false},
	{"2026-01-02T03:04:05,123+01:00", false},
	{"2026-01-02T03:04:05+24:00", false},
	{"2026-01-02T03:04:05-24:00", false},
	{"2026-01-02T03:04:05+23:60", false},
	{"2026-01-02T03:04:05+99:99", false},
	{"2026-01-02T03:04:05z", false},
	{"2026-01-02t03:04:05Z", false},
	{"2026-01-02T03:04:05.Z", false},
	{"2026-01-02T03:04:60Z", false},
	{"2026-01-02T24:00:00Z", false},
	{"2026-02-30T03:04:05Z", false},
	{"2026-01-02T03:04:05", false},
	{"2026-01-02T03:04:05+0100", false},
	{"2026-01-02 03:04:05Z", false},
	{"", false},
}

type timestampCase struct {
	TS string // the contents of a JSON string
	OK bool
}

// TestParseTimestamp: parseTimestamp accepts exactly the timestamps the
// reflection decoder accepts and gives the same time.
func TestParseTimestamp(t *testing.T) {
	for _, c := range timestampCases {
		var want time.Time
		rerr := json.Unmarshal([]byte(`"`+c.TS+`"`), &want, decodeOptions)
		if (rerr == nil) != c.OK {
			t.Fatalf("%q: the reflection decoder's error %v, want ok %v", c.TS, rerr, c.OK)
		}
		if strings.Contains(c.TS, `\`) {
			continue // parseTimestamp reads unquoted text
		}
		got, err := parseTimestamp(c.TS)
		if (err == nil) != c.OK {
			t.Fatalf("%q: parseTimestamp error %v, want ok %v", c.TS, err, c.OK)
		}
		if err == nil && !got.Equal(want) {
			t.Fatalf("%q: parseTimestamp %v, the reflection decoder %v", c.TS, got, want)
		}
	}
}
