package aggregator

import (
	"bytes"
	"strings"
	"testing"
)

// TestScanBlock: what scanBlock reports of a raw header block.
func TestScanBlock(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want blockScan
	}{
		{"Host: x\r\nX-A: b c\r\n\r\n", blockScan{}},
		{"Host: x\r\nX-A:b c\r\n\r\n", blockScan{}},
		{"Host: x\r\nX-A: b c:d\r\n\r\n", blockScan{}},
		{"X A: b\r\n\r\n", blockScan{spaceInName: true}},
		{"Host: x\r\nContent Length: 5\r\n\r\n", blockScan{spaceInName: true}},
		{"Host: x\r\nXA b\r\n\r\n", blockScan{spaceInName: true}}, // no colon: the name is the line
		{"Host: x\r\n b c\r\n\r\n", blockScan{folded: true}},
		{"Host: x\nX A: b\r\n\r\n", blockScan{bareLF: true}},
		{"Connection: close\r\n\r\n", blockScan{close: true}},
		{"connection: Keep-Alive , CLOSE\r\n\r\n", blockScan{close: true}},
		{"Connection: close\r\nConnection: keep-alive\r\n\r\n", blockScan{close: true}},
		{"Connection:close\r\n\r\n", blockScan{close: true}},
		{"Connection: closed, x-close, keep-alive\r\n\r\n", blockScan{}},
		{"Connections: close\r\n\r\n", blockScan{}},
		{"X-Connection: close\r\n\r\n", blockScan{}},
		{"Transfer-Encoding: chunked\r\n\r\n", blockScan{te: true}},
		{"Host: x\r\ntransfer-encoding: chunked\r\n\r\n", blockScan{te: true}},
	} {
		if got := scanBlock([]byte(tc.raw)); got != tc.want {
			t.Errorf("scanBlock(%q) = %+v, want %+v", tc.raw, got, tc.want)
		}
	}
}

// TestValidHost: the Host values the edge serves and those it refuses
// (RFC 9110 section 7.2, RFC 3986 section 3.2.2); fasthttp refuses the
// structure's errors ("x/y", "x:a", "[::1") itself.
func TestValidHost(t *testing.T) {
	for _, h := range []string{"", "x", "x:80", "x:", "api.example.com", "[::1]:8080", "127.0.0.1", "a-b_c~d", "x%41", "x,y;z=!$&'()*+"} {
		if !validHost([]byte(h)) {
			t.Errorf("validHost(%q) = false", h)
		}
	}
	for _, h := range []string{"a@x", "x\"y", "x<y>", "caf\xc3\xa9", "x y", "x\ty", "x\\y", "x`y", "x{y}", "x|y", "x^y", "x\x00"} {
		if validHost([]byte(h)) {
			t.Errorf("validHost(%q) = true", h)
		}
	}
}

// TestBadAbsoluteTarget: absolute-form targets of the http(s) scheme with
// an empty host, userinfo or bytes no host has are refused; origin form
// and other targets are left to routing.
func TestBadAbsoluteTarget(t *testing.T) {
	for uri, want := range map[string]bool{
		"/dealer/x":                   false,
		"*":                           false,
		"x:443":                       false,
		"ftp://a@x/":                  false,
		"http://x/dealer/x":           false,
		"HTTPS://x:8443/dealer/x?q=1": false,
		"http://[::1]:80/":            false,
		"http://[::1]/":               false,
		"http://x":                    false,
		"http:///dealer/x":            true,
		"https://?x":                  true,
		"http://:80/":                 true,
		"http://a@x/":                 true,
		"http://x\"y/":                true,
		"http://":                     true,
	} {
		if got := badAbsoluteTarget([]byte(uri)); got != want {
			t.Errorf("badAbsoluteTarget(%q) = %v, want %v", uri, got, want)
		}
	}
}

// scanBlockReference is scanBlock written plainly, line by line, for
// FuzzScanBlock to compare with.
func scanBlockReference(raw []byte) (s blockScan) {
	lines := strings.Split(string(raw), "\n")
	for i, line := range lines {
		if i < len(lines)-1 { // ended by an LF
			if !strings.HasSuffix(line, "\r") {
				return blockScan{bareLF: true}
			}
			line = line[:len(line)-1]
		}
		if line == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			s.folded = true
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		if strings.Contains(name, " ") {
			s.spaceInName = true
		}
		if !strings.Contains(line, ":") {
			continue
		}
		switch strings.ToLower(name) {
		case "transfer-encoding":
			s.te = true
		case "connection":
			for _, opt := range strings.Split(value, ",") {
				if strings.EqualFold(strings.Trim(opt, " \t"), "close") {
					s.close = true
				}
			}
		}
	}
	return s
}

// FuzzScanBlock: scanBlock, a parser of client bytes on every request,
// answers what its plain reference does.
func FuzzScanBlock(f *testing.F) {
	for _, s := range []string{
		"Host: x\r\n\r\n", "X A: b\r\n\r\n", "Connection: keep-alive, close\r\n\r\n",
		"Host: x\r\n b\r\n\r\n", "Host: x\nY: z\r\n\r\n", "Transfer-Encoding: chunked\r\n",
		"\tConnection: close\r\n", "Connection :close\r\n", "a b", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := scanBlock(raw), scanBlockReference(raw); got != want {
			t.Fatalf("scanBlock(%q) = %+v, reference %+v", raw, got, want)
		}
	})
}

// BenchmarkHeadChecks: what serve's checks of a request head cost on a
// typical API request (scanBlock over its block, the Host value, the
// target's first byte).
func BenchmarkHeadChecks(b *testing.B) {
	raw := []byte("Host: api.example.com\r\nUser-Agent: Go-http-client/1.1\r\nX-Api-Key: demo-key-alpha\r\nAccept-Encoding: gzip\r\nX-Request-ID: 0123456789abcdef\r\n\r\n")
	host := []byte("api.example.com")
	uri := []byte("/dealer/REWIND/listing?page_size=20")
	b.Run("scanBlock", func(b *testing.B) {
		for b.Loop() {
			_ = scanBlock(raw)
		}
	})
	b.Run("scanHeaderBlock_before", func(b *testing.B) {
		for b.Loop() {
			_, _, _ = scanHeaderBlockBefore(raw)
		}
	})
	b.Run("host+target", func(b *testing.B) {
		for b.Loop() {
			_ = validHost(host) && !badAbsoluteTarget(uri)
		}
	})
}

// scanHeaderBlockBefore is serve's scan before 2026-11-29 (bare LF,
// obs-fold, Transfer-Encoding), for BenchmarkHeadChecks to compare with.
func scanHeaderBlockBefore(raw []byte) (bareLF, folded, te bool) {
	folded = len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t')
	te = isTELine(raw)
	off := 0
	for {
		i := bytes.IndexByte(raw[off:], '\n')
		if i < 0 {
			return false, folded, te
		}
		i += off
		if i == 0 || raw[i-1] != '\r' {
			return true, false, false
		}
		off = i + 1
		if off < len(raw) {
			switch raw[off] {
			case ' ', '\t':
				folded = true
			case 't', 'T':
				te = te || isTELine(raw[off:])
			}
		}
	}
}
