package aggregator

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	cases := []struct {
		v    string
		want bool
	}{
		{"", false},
		{"gzip", true},
		{"GZip", true},
		{"x-gzip", true},
		{"gzip, deflate, br", true},
		{"br;q=1.0, gzip;q=0.8, *;q=0.1", true},
		{" gzip ; q=0.001 ", true},
		{"gzip;Q=1", true},
		{"gzip;q=1.000", true},
		{"gzip;level=9;q=0.5", true},
		{"*", true},
		{"identity;q=0.5, *;q=0.1", true},
		{"gzip;q=0", false},
		{"gzip;q=0.000", false},
		{"gzip;q=0, *", false}, // an explicit refusal wins over *
		{"*, gzip;q=0", false}, // in either order
		{"*;q=0", false},
		{"*;q=0, gzip", true},
		{"identity", false},
		{"deflate, br", false},
		{"gzipx", false},
		{"gzip;q=abc", false},
		{"gzip;q=1.5", false},
		{"gzip;q=1.001", false},
		{"gzip;q=0.0001", false},
		{"gzip;q=", false},
		{"gzip;q=-1", false},
		{",,,", false},
		{";q=1", false},
		// White space around "=" is not in the grammar (RFC 9110 12.4.2:
		// "q=" qvalue), but such a parameter is still the weight the client
		// meant: read as one, never as no weight (which would mean q=1 and
		// send gzip to a client refusing it).
		{"gzip; q = 0", false},
		{"gzip;q =0", false},
		{"gzip;Q\t=\t0", false},
		{"gzip; q = 0.5", true},
		{"*;q =0", false},
		{"gzip;qq=0", true}, // another parameter, not a weight
	}
	for _, c := range cases {
		if got := acceptsGzip([]byte(c.v)); got != c.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestAcceptsGzipAllocs(t *testing.T) {
	v := []byte("br;q=1.0, gzip;q=0.8, *;q=0.1")
	if n := testing.AllocsPerRun(100, func() { acceptsGzip(v) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0", "*;q=0.5", "br, x-gzip;q=0.1", "gzip;q=1.0000", ";;,;q=", "\xff;q=1", "gzip ; Q=0.000", "*;q=0, identity", "br;q=1, *;q=0.001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := acceptsGzip([]byte(v))
		l := bytes.ToLower([]byte(v))
		if got && !bytes.Contains(l, []byte("gzip")) && !bytes.Contains(l, []byte("*")) {
			t.Fatalf("accepted %q without gzip or *", v)
		}
		// The answer depends on the entries, not on the case of the value.
		if acceptsGzip(bytes.ToUpper([]byte(v))) != got && isASCII(v) {
			t.Fatalf("%q: case changed the answer", v)
		}
		// On a value that follows the grammar and names gzip (or its
		// alias) and "*" at most once each, the answer is RFC 9110's.
		if want, ok := refAcceptsGzip(v); ok && got != want {
			t.Fatalf("acceptsGzip(%q) = %v, RFC 9110 12.5.3 says %v", v, got, want)
		}
	})
}

// refAcceptsGzip reads an Accept-Encoding value by RFC 9110's grammar
// (12.5.3, 12.4.2, 5.6.1): a list of codings (a token, "identity" or "*"),
// each with an optional weight (OWS ";" OWS "q=" qvalue), empty elements
// allowed. ok is false for a value that does not follow it or names gzip
// (x-gzip counting as gzip, 8.4.1.3) or "*" more than once. gzip is
// acceptable when listed with a weight above 0; unlisted, when "*" is.
func refAcceptsGzip(v string) (accepted, ok bool) {
	const tchar = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	gzipQ, starQ := -1, -1 // weight in thousandths, -1 when not listed
	for _, elem := range strings.Split(v, ",") {
		elem = strings.Trim(elem, " \t")
		if elem == "" {
			continue
		}
		coding, weight, hasWeight := strings.Cut(elem, ";")
		coding = strings.TrimRight(coding, " \t")
		if coding == "" || strings.Trim(coding, tchar) != "" {
			return false, false
		}
		q := 1000
		if hasWeight {
			w := strings.TrimLeft(weight, " \t")
			if len(w) < 3 || w[0]|0x20 != 'q' || w[1] != '=' {
				return false, false
			}
			var valid bool
			if q, valid = refQvalue(w[2:]); !valid {
				return false, false
			}
		}
		switch {
		case strings.EqualFold(coding, "gzip") || strings.EqualFold(coding, "x-gzip"):
			if gzipQ >= 0 {
				return false, false
			}
			gzipQ = q
		case coding == "*":
			if starQ >= 0 {
				return false, false
			}
			starQ = q
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0, true
	}
	return starQ > 0, true
}

// refQvalue parses a qvalue ("0" [ "." 0*3DIGIT ] / "1" [ "." 0*3("0") ])
// in thousandths.
func refQvalue(s string) (int, bool) {
	if s == "" || s[0] != '0' && s[0] != '1' {
		return 0, false
	}
	whole, frac := s[:1], s[1:]
	if frac != "" {
		if frac[0] != '.' || len(frac) > 4 {
			return 0, false
		}
		frac = frac[1:]
	}
	n := int(whole[0]-'0') * 1000
	for i, c := range []byte(frac) {
		if c < '0' || c > '9' || whole == "1" && c != '0' {
			return 0, false
		}
		n += int(c-'0') * []int{100, 10, 1}[i]
	}
	return n, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestAcceptEncodingLinesAreOneList: an Accept-Encoding sent on several
// lines is one list (RFC 9110 5.3), so a refusal on a later line holds
// against a "*" on the first, and a later line's gzip is accepted. Before,
// the first line alone was read: "*" then "gzip;q=0" was sent gzip.
func TestAcceptEncodingLinesAreOneList(t *testing.T) {
	s := newBenchServer(t, true)
	base := serveLoopback(t, s)
	const path = "/dealer/REWIND/listing?page_size=20"
	cases := []struct {
		name  string
		lines []string
		gzip  bool
	}{
		{"star then refusal", []string{"*", "gzip;q=0"}, false},
		{"refusal then star", []string{"gzip;q=0", "*"}, false},
		{"identity then gzip", []string{"identity", "gzip"}, true},
		{"br then x-gzip", []string{"br", "x-gzip;q=0.5"}, true},
		{"empty then gzip", []string{"", "gzip"}, true},
		{"one line", []string{"gzip"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", "demo-key-alpha")
			for _, l := range c.lines {
				req.Header.Add("Accept-Encoding", l)
			}
			resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			gz := resp.Header.Get("Content-Encoding") == "gzip"
			if resp.StatusCode != 200 || gz != c.gzip {
				t.Fatalf("Accept-Encoding lines %q: %d, Content-Encoding %q (%d bytes), want gzip %v",
					c.lines, resp.StatusCode, resp.Header.Get("Content-Encoding"), len(body), c.gzip)
			}
		})
	}
}
