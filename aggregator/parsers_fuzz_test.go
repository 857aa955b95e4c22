package aggregator

import (
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
)

// refETagList is a reference reading of an If-None-Match field value by
// the grammar of RFC 9110 (13.1.2, 8.8.3, 5.6.1): "*" alone, or a list of
// entity-tags ([ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E /
// obs-text) separated by commas with optional white space (SP, HTAB) and
// empty elements allowed. It returns the opaque tags (quotes included)
// and whether the value follows the grammar; star reports "*".
func refETagList(v string) (tags []string, star, valid bool) {
	v = strings.Trim(v, " \t")
	if v == "*" {
		return nil, true, true
	}
	i := 0
	ows := func() {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
	}
	for {
		ows()
		if i == len(v) {
			return tags, false, true
		}
		if v[i] == ',' { // an empty element
			i++
			continue
		}
		if strings.HasPrefix(v[i:], "W/") {
			i += 2
		}
		if i == len(v) || v[i] != '"' {
			return nil, false, false
		}
		start := i
		i++
		for i < len(v) && v[i] != '"' {
			c := v[i]
			if c < 0x21 || c == 0x7f {
				return nil, false, false
			}
			i++
		}
		if i == len(v) {
			return nil, false, false
		}
		i++
		tags = append(tags, v[start:i])
		ows()
		if i < len(v) {
			if v[i] != ',' {
				return nil, false, false
			}
			i++
		}
	}
}

// FuzzETagMatch: on an If-None-Match value that follows the grammar,
// etagMatch answers what the reference reading does under the weak
// comparison (RFC 9110 8.8.3.2): a 304 exactly when "*" or a listed tag
// has the entry's opaque tag, strong or weak. The entity tag is one the
// edge makes (cache.etagOf, respond.go's past-end answer): the hex of a
// 64-bit hash in quotes, the gzip variant's in its weak form. On any
// other value it must only not panic.
func FuzzETagMatch(f *testing.F) {
	for _, s := range []string{`"abc"`, `W/"abc"`, `"x", "abc"`, `*`, ` * `, `"x"`, ``, `abc`, `,,"abc",`,
		`"a,b", W/"abc"`, `W/ "abc"`, `w/"abc"`, "\t\"abc\"\t", `"abc""abc"`, `"abc" x`, `*, "abc"`} {
		f.Add(s, uint64(0xabc), false)
	}
	f.Add(`"f00d", W/"0"`, uint64(0), true)
	f.Fuzz(func(t *testing.T, inm string, hash uint64, weak bool) {
		opaque := `"` + strconv.FormatUint(hash, 16) + `"`
		etag := opaque
		if weak {
			etag = "W/" + opaque
		}
		got := etagMatch([]byte(inm), etag)
		tags, star, valid := refETagList(inm)
		if !valid {
			return
		}
		want := star
		for _, tg := range tags {
			want = want || tg == opaque
		}
		if got != want {
			t.Fatalf("etagMatch(%q, %q) = %v, the grammar's reading (tags %q, star %v) says %v", inm, etag, got, tags, star, want)
		}
	})
}

// FuzzDecodeHash: decodeHash, the reader of the key index's key_sha256
// (an upstream answer), accepts exactly the 64-hex-digit strings
// encoding/hex decodes, either case, and gives the same 32 bytes.
func FuzzDecodeHash(f *testing.F) {
	f.Add(strings.Repeat("0f", 32))
	f.Add(strings.Repeat("Af", 32))
	f.Add(strings.Repeat("g0", 32))
	f.Add(strings.Repeat("0", 63) + "\xff")
	f.Add(strings.Repeat("a", 63))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		var h [32]byte
		ok := decodeHash(&h, s)
		want, err := hex.DecodeString(s)
		wantOK := err == nil && len(want) == 32
		if ok != wantOK {
			t.Fatalf("decodeHash(%q) = %v, encoding/hex: %v, %d bytes", s, ok, err, len(want))
		}
		if ok && string(h[:]) != string(want) {
			t.Fatalf("decodeHash(%q) = %x, want %x", s, h, want)
		}
	})
}

// FuzzParseDecimal: parseDecimal, the reader of page, page_size and
// id_offerta, accepts exactly the ASCII digit strings whose value fits an
// int64 (leading zeros allowed, no sign) and gives strconv's value.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "42", "0042", "9223372036854775807", "9223372036854775808", "00000000000000000000009223372036854775807", "+1", "-1", "1e3", " 1", "", "١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseDecimal([]byte(s))
		digits := s != "" && strings.Trim(s, "0123456789") == ""
		want, err := strconv.ParseInt(s, 10, 64)
		wantOK := digits && err == nil
		if ok != wantOK || ok && got != want {
			t.Fatalf("parseDecimal(%q) = %d, %v; strconv: %d, %v (digits only: %v)", s, got, ok, want, err, digits)
		}
	})
}
