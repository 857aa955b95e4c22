package aggregator

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

func raw(query string) *rawParams {
	var a fasthttp.Args
	a.Parse(query)
	r := &rawParams{}
	r.collect(&a)
	return r
}

func fields(ae *apiError) string {
	if ae == nil {
		return ""
	}
	var f []string
	for _, e := range ae.fields {
		f = append(f, e.Field)
	}
	return ae.code + ":" + strings.Join(f, ",")
}

func TestParseInventoryListing(t *testing.T) {
	cases := []struct {
		name, service, query string
		want                 string // "" = ok
		page, size           int
		q, ct, upfit         string
	}{
		{"defaults", "REWIND", "", "", 1, 20, "", "", ""},
		{"bounds low", "REWIND", "page=1&page_size=1", "", 1, 1, "", "", ""},
		{"bounds high", "NOS", "page_size=100", "", 1, 100, "", "", ""},
		{"page 0", "REWIND", "page=0", "validation_error:page", 0, 0, "", "", ""},
		{"page negative", "REWIND", "page=-1", "validation_error:page", 0, 0, "", "", ""},
		{"page not int", "REWIND", "page=abc", "validation_error:page", 0, 0, "", "", ""},
		{"page empty", "REWIND", "page=", "validation_error:page", 0, 0, "", "", ""},
		{"page huge", "REWIND", "page=99999999999", "validation_error:page", 0, 0, "", "", ""},
		{"size 0", "REWIND", "page_size=0", "validation_error:page_size", 0, 0, "", "", ""},
		{"size 101", "REWIND", "page_size=101", "validation_error:page_size", 0, 0, "", "", ""},
		{"both bad", "REWIND", "page=0&page_size=101", "validation_error:page,page_size", 0, 0, "", "", ""},
		{"duplicate", "REWIND", "page=1&page=2", "validation_error:page", 0, 0, "", "", ""},
		{"q collapsed", "REWIND", "q=++fiat+++panda+", "", 1, 20, "fiat panda", "", ""},
		{"q control", "REWIND", "q=a%00b", "validation_error:q", 0, 0, "", "", ""},
		{"q bad utf8", "REWIND", "q=%ff%fe", "validation_error:q", 0, 0, "", "", ""},
		{"q too long", "REWIND", "q=" + strings.Repeat("a", 201), "validation_error:q", 0, 0, "", "", ""},
		{"catalog", "REWIND", "catalog_type=vcom", "", 1, 20, "", "vcom", ""},
		{"catalog bad", "REWIND", "catalog_type=truck", "validation_error:catalog_type", 0, 0, "", "", ""},
		{"catalog on NLT", "NLT", "catalog_type=auto", "validation_error:catalog_type", 0, 0, "", "", ""},
		{"upfit", "NOS", "professional_upfit=furgone-isotermico", "", 1, 20, "", "", "furgone-isotermico"},
		{"upfit 80", "NOS", "professional_upfit=" + strings.Repeat("a", 80), "", 1, 20, "", "", strings.Repeat("a", 80)},
		{"upfit 81", "NOS", "professional_upfit=" + strings.Repeat("a", 81), "validation_error:professional_upfit", 0, 0, "", "", ""},
		{"upfit empty", "NOS", "professional_upfit=", "validation_error:professional_upfit", 0, 0, "", "", ""},
		{"upfit upper", "NOS", "professional_upfit=Furgone", "validation_error:professional_upfit", 0, 0, "", "", ""},
		{"upfit double hyphen", "NOS", "professional_upfit=a--b", "validation_error:professional_upfit", 0, 0, "", "", ""},
		{"upfit with auto", "REWIND", "catalog_type=auto&professional_upfit=gru", "validation_error:professional_upfit", 0, 0, "", "", ""},
		{"upfit on NLT", "NLT", "professional_upfit=gru", "validation_error:professional_upfit", 0, 0, "", "", ""},
		{"unknown ignored", "REWIND", "foo=bar&page=2", "", 2, 20, "", "", ""},
		{"size with 20 leading zeros", "REWIND", "page_size=0000000000000000000050", "", 1, 50, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ae := parseInventoryListing(raw(c.query), c.service)
			if got := fields(ae); got != c.want {
				t.Fatalf("error = %q, want %q", got, c.want)
			}
			if ae != nil {
				return
			}
			if p.page != c.page || p.pageSize != c.size || p.q != c.q || p.catalogType != c.ct || p.upfit != c.upfit {
				t.Fatalf("params = %+v", p)
			}
		})
	}
}

func TestParseInventoryDetails(t *testing.T) {
	const id = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"
	cases := []struct{ name, service, query, want string }{
		{"uuid", "REWIND", "id_auto=" + id, ""},
		{"missing", "REWIND", "", "validation_error:id_auto"},
		{"bad uuid", "NOS", "id_auto=123", "invalid_identifier:"},
		{"offer on rewind", "REWIND", "id_auto=" + id + "&id_offerta=4", "validation_error:id_offerta"},
		{"only offer on rewind", "REWIND", "id_offerta=4", "validation_error:id_offerta,id_auto"},
		{"offer", "NLT", "id_offerta=42", ""},
		{"offer zero", "NLT", "id_offerta=0", "invalid_identifier:"},
		{"offer zeros", "NLT", "id_offerta=00000000000000000000", "invalid_identifier:"},
		{"offer with 20 leading zeros", "NLT", "id_offerta=000000000000000000009223372036854775807", ""},
		{"offer past int64", "NLT", "id_offerta=0009223372036854775808", "invalid_identifier:"},
		{"offer of 20 digits", "NLT", "id_offerta=10000000000000000000", "invalid_identifier:"},
		{"offer text", "NLT", "id_offerta=abc", "invalid_identifier:"},
		{"offer missing", "NLT", "", "validation_error:id_offerta"},
		{"offer dup", "NLT", "id_offerta=1&id_offerta=2", "validation_error:id_offerta"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ae := parseInventoryDetails(raw(c.query), c.service)
			if got := fields(ae); got != c.want {
				t.Fatalf("error = %q, want %q", got, c.want)
			}
			if ae == nil && c.service != "NLT" && p.idAuto != strings.ToLower(id) {
				t.Fatalf("id_auto not normalised: %q", p.idAuto)
			}
		})
	}
}

func TestParseContent(t *testing.T) {
	cases := []struct {
		name string
		fn   func(*rawParams) (params, *apiError)
		q    string
		want string
	}{
		{"hub default", parseHub, "", ""},
		{"hub 20", parseHub, "page_size=20", ""},
		{"hub 21", parseHub, "page_size=21", "validation_error:page_size"},
		{"hub 0", parseHub, "page_size=0", "validation_error:page_size"},
		{"search ok", parseSearch, "q=ab", ""},
		{"search short", parseSearch, "q=a", "validation_error:q"},
		{"search blank", parseSearch, "q=+a+", "validation_error:q"},
		{"search missing", parseSearch, "", "validation_error:q"},
		{"search size 21", parseSearch, "q=abc&page_size=21", "validation_error:page_size"},
		{"search unicode 2 runes", parseSearch, "q=%C3%A8%C3%A8", ""},
		{"details ok", parseContentDetails, "slug=x", ""},
		{"details empty", parseContentDetails, "slug=", "validation_error:slug"},
		{"details missing", parseContentDetails, "", "validation_error:slug"},
		{"details long", parseContentDetails, "slug=" + strings.Repeat("a", 1025), "validation_error:slug"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ae := c.fn(raw(c.q))
			if got := fields(ae); got != c.want {
				t.Fatalf("error = %q, want %q", got, c.want)
			}
		})
	}
	listing := []struct{ ct, q, want string }{
		{"faq", "category=acquisto", ""},
		{"news", "category=x&brand=Fiat", ""},
		{"glossary", "category=tecnica", ""},
		{"guides", "topic=noleggio", ""},
		{"guides", "category=x", "validation_error:category"},
		{"videos", "topic=x&brand=y", "validation_error:topic,brand"},
		{"faq", "page=0&page_size=101", "validation_error:page,page_size"},
	}
	for _, c := range listing {
		_, ae := parseContentListing(raw(c.q), c.ct)
		if got := fields(ae); got != c.want {
			t.Errorf("%s ?%s: error = %q, want %q", c.ct, c.q, got, c.want)
		}
	}
}

func TestExtractKey(t *testing.T) {
	cases := []struct{ name, x, auth, key, code string }{
		{"x-api-key", "k1", "", "k1", ""},
		{"bearer", "", "Bearer k2", "k2", ""},
		{"bearer case", "", "bEaReR k2", "k2", ""},
		{"bearer spaces", "", "Bearer    k2", "k2", ""},
		{"none", "", "", "", codeMissingKey},
		{"both", "k1", "Bearer k1", "", codeInvalidKey},
		{"basic", "", "Basic dXNlcjpw", "", codeInvalidKey},
		{"bearer empty", "", "Bearer ", "", codeMissingKey},
		{"bearer only", "", "bearer", "", codeMissingKey},
		{"bearer spaces only", "", "Bearer   ", "", codeMissingKey},
		{"bearer tab", "", "Bearer\tk2", "", codeInvalidKey},
		{"scheme prefix", "", "Bear k2", "", codeInvalidKey},
		{"both, bearer empty", "k1", "Bearer ", "", codeInvalidKey},
		{"bearer no space", "", "Bearerk2", "", codeInvalidKey},
		{"control", "a\x01b", "", "", codeInvalidKey},
		{"space inside", "a b", "", "", codeInvalidKey},
		{"too long", strings.Repeat("k", 257), "", "", codeInvalidKey},
		{"max", strings.Repeat("k", 256), "", strings.Repeat("k", 256), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, code := ExtractKey([]byte(c.x), []byte(c.auth))
			if string(key) != c.key || code != c.code {
				t.Fatalf("got (%q, %q), want (%q, %q)", key, code, c.key, c.code)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	for _, c := range []struct {
		id string
		ok bool
	}{{"abc-123", true}, {"a.b_c:d", true}, {"", false}, {"a b", false}, {"a\nb", false}, {strings.Repeat("x", 129), false}, {strings.Repeat("x", 128), true}} {
		if got := ValidRequestID([]byte(c.id)); got != c.ok {
			t.Errorf("ValidRequestID(%q) = %v", c.id, got)
		}
	}
	g := newIDGen()
	a, b := g.appendID(nil), g.appendID(nil)
	if string(a) == string(b) || !ValidRequestID(a) {
		t.Fatalf("generated ids %q %q", a, b)
	}
}

// TestParseTraceparent: the traceparent the edge passes on is version 00
// with only the sampled flag, whatever version the client sent (W3C Trace
// Context 3.2.2.5 "Other Flags": vendors MUST set them to zero; 3.2.4
// "Versioning of traceparent": a higher version of at least 55 characters
// is parsed at version 00's positions, its delimiters checked, and the
// header rebuilt as the highest version known; ff is invalid; README,
// "Propagation"). Before 2026-11-27 a version above 00 was dropped (the
// trace restarted) and flag bits other than sampled were passed on.
func TestParseTraceparent(t *testing.T) {
	const ids = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"
	cases := []struct {
		name, tp, want string // want "" means rejected
	}{
		{"version 00 sampled", "00-" + ids + "-01", "00-" + ids + "-01"},
		{"version 00 unsampled", "00-" + ids + "-00", "00-" + ids + "-00"},
		{"version 00 undefined flags zeroed", "00-" + ids + "-ff", "00-" + ids + "-01"},
		{"version 00 undefined flags zeroed, unsampled", "00-" + ids + "-fe", "00-" + ids + "-00"},
		{"version 00 flag 09", "00-" + ids + "-09", "00-" + ids + "-01"},
		{"version 00 flag 0a", "00-" + ids + "-0a", "00-" + ids + "-00"},
		{"version 00 with more fields", "00-" + ids + "-01-what-the-future-holds", ""},
		{"version 00 one character more", "00-" + ids + "-01-", ""},
		{"version 00 uppercase ids", "00-" + strings.ToUpper(ids) + "-01", ""},
		{"version 00 uppercase flags", "00-" + ids + "-0A", ""},
		{"version 00 zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"version 00 zero parent id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},
		{"version 00 too short", "00-" + ids + "-1", ""},
		{"future version, same length", "01-" + ids + "-01", "00-" + ids + "-01"},
		{"future version, more fields", "cc-" + ids + "-01-what-the-future-holds", "00-" + ids + "-01"},
		{"future version, a dash after the flags", "cc-" + ids + "-00-", "00-" + ids + "-00"},
		{"future version, undefined flags zeroed", "fe-" + ids + "-0b-x", "00-" + ids + "-01"},
		{"future version, no dash after the flags", "cc-" + ids + "-01x", ""},
		{"future version, flags run on", "cc-" + ids + "-011", ""},
		{"future version, shorter than 55", "cc-" + ids + "-1", ""},
		{"future version, shorter than 55, no flags", "cc-" + ids, ""},
		{"future version, no dash after the trace id", "cc-4bf92f3577b34da6a3ce929d0e0e4736x00f067aa0ba902b7-01", ""},
		{"future version, no dash after the parent id", "cc-" + ids + "x01", ""},
		{"future version, zero trace id", "cc-00000000000000000000000000000000-00f067aa0ba902b7-01-x", ""},
		{"future version, uppercase ids", "cc-" + strings.ToUpper(ids) + "-01-x", ""},
		{"version ff", "ff-" + ids + "-01", ""},
		{"version ff, more fields", "ff-" + ids + "-01-x", ""},
		{"uppercase version", "CC-" + ids + "-01-x", ""},
		{"version not hex", "0g-" + ids + "-01", ""},
		{"no version", "-" + ids + "-01-", ""},
		{"garbage", "garbage", ""},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var dst [TraceparentLen]byte
			ok := ParseTraceparent(&dst, []byte(c.tp))
			got := ""
			if ok {
				got = string(dst[:])
			}
			if got != c.want {
				t.Errorf("ParseTraceparent(%q) = %q, %v; want %q", c.tp, got, ok, c.want)
			}
		})
	}
}

func TestETagMatch(t *testing.T) {
	cases := []struct {
		inm  string
		want bool
	}{
		{`"abc"`, true}, {`W/"abc"`, true}, {`"x", "abc"`, true}, {`*`, true}, {`"x"`, false}, {``, false}, {`abc`, false},
	}
	for _, c := range cases {
		if got := etagMatch([]byte(c.inm), `"abc"`); got != c.want {
			t.Errorf("etagMatch(%q) = %v", c.inm, got)
		}
	}
}

// TestStrongMatch: If-Match compares strongly (RFC 9110 13.1.1 and 8.8.3.2):
// "*" matches any representation, a weak tag on either side never matches.
func TestStrongMatch(t *testing.T) {
	for _, c := range []struct {
		im, etag string
		want     bool
	}{
		{`"abc"`, `"abc"`, true},
		{` "x" , "abc" `, `"abc"`, true},
		{`"x","abc"`, `"abc"`, true},
		{`*`, `"abc"`, true},
		{` * `, `W/"abc"`, true},
		{`W/"abc"`, `"abc"`, false},
		{`"abc"`, `W/"abc"`, false},
		{`W/"abc"`, `W/"abc"`, false},
		{`"x"`, `"abc"`, false},
		{`abc`, `"abc"`, false},
		{`,`, `"abc"`, false},
		{`"abc", *`, `"abc"`, true},
	} {
		if got := strongMatch([]byte(c.im), c.etag); got != c.want {
			t.Errorf("strongMatch(%q, %q) = %v, want %v", c.im, c.etag, got, c.want)
		}
	}
}

func TestCacheKeyNormalised(t *testing.T) {
	key := func(q string) string {
		p, ae := parseInventoryListing(raw(q), "REWIND")
		if ae != nil {
			t.Fatal(ae)
		}
		return string(appendKey(nil, RouteInventoryListing, "REWIND", &p))
	}
	same := [][2]string{
		{"", "page=1&page_size=20"},
		{"page_size=20&page=1", "page=1"},
		{"q=fiat++panda", "q=+fiat+panda+"},
		{"foo=1", ""},
	}
	for _, s := range same {
		if key(s[0]) != key(s[1]) {
			t.Errorf("keys of %q and %q differ", s[0], s[1])
		}
	}
	if key("page=2") == key("page=1") || key("q=a") == key("catalog_type=auto") {
		t.Error("distinct requests share a key")
	}
}

// Fuzz targets: every parser of client input. Their seed corpora run as
// plain tests; `go test -fuzz` explores further.

func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"", "page=1&page_size=20", "q=fiat%20panda", "catalog_type=vind&professional_upfit=gru-su-carro", "page=%00", "q=%ff", "id_auto=3f2504e0-4f89-41d3-9a0c-0305e82c3301", "id_offerta=7&id_offerta=8", "slug=a%2F..%2Fb", "page=1;page=2", "%zz=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r := raw(q)
		for _, svc := range []string{"REWIND", "NOS", "NLT"} {
			p, ae := parseInventoryListing(r, svc)
			if ae == nil {
				if p.page < 1 || p.pageSize < 1 || p.pageSize > 100 || !utf8.ValidString(p.q) {
					t.Fatalf("accepted out-of-bounds params %+v", p)
				}
				_ = appendKey(nil, RouteInventoryListing, svc, &p)
			} else if ae.code != codeValidation || len(ae.fields) == 0 {
				t.Fatalf("listing error without fields: %+v", ae)
			}
			if p, ae := parseInventoryDetails(r, svc); ae == nil && p.idAuto == "" && p.idOfferta < 1 {
				t.Fatalf("accepted details without identifier: %+v", p)
			}
		}
		for _, ct := range []string{"faq", "news", "guides", "videos"} {
			if p, ae := parseContentListing(r, ct); ae == nil && (p.pageSize > 100 || p.page < 1) {
				t.Fatalf("content listing out of bounds: %+v", p)
			}
		}
		if p, ae := parseSearch(r); ae == nil && (p.q == "" || normalizeQuery(p.q) != p.q || p.pageSize > 20) {
			// q was at least 2 characters; its canonical form may be
			// shorter ("a a" is "a") but is never empty and is a fixed
			// point.
			t.Fatalf("search accepted %+v", p)
		}
		if p, ae := parseContentDetails(r); ae == nil && p.slug == "" {
			t.Fatal("details accepted empty slug")
		}
	})
}

func FuzzExtractKey(f *testing.F) {
	f.Add("demo-key-alpha", "")
	f.Add("", "Bearer demo-key-alpha")
	f.Add("x", "Bearer y")
	f.Add("", "bearer\t x")
	f.Add("\xff", "")
	f.Fuzz(func(t *testing.T, x, auth string) {
		key, code := ExtractKey([]byte(x), []byte(auth))
		if (code == "") == (key == nil) {
			t.Fatalf("key %q with code %q", key, code)
		}
		// missing_api_key exactly when no key was sent: no header with a
		// value, or only Authorization holding the Bearer scheme and spaces.
		bearerOnly := x == "" && len(auth) >= 6 && strings.EqualFold(auth[:6], "bearer") && strings.Trim(auth[6:], " ") == ""
		if (code == codeMissingKey) != (x == "" && auth == "" || bearerOnly) {
			t.Fatalf("ExtractKey(%q, %q) = %q", x, auth, code)
		}
		if code == "" {
			if len(key) > maxKeyLen {
				t.Fatal("key too long accepted")
			}
			for _, c := range key {
				if c < 0x21 || c > 0x7e {
					t.Fatalf("non-printable key byte %#x accepted", c)
				}
			}
		}
	})
}

func FuzzRequestHeaders(f *testing.F) {
	f.Add("req-1", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", `"abc", W/"d"`)
	f.Add("\r\n", "00-", "*")
	f.Add("id", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0b-future", "")
	f.Add("id", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
	f.Add("id", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", "")
	f.Fuzz(func(t *testing.T, id, tp, inm string) {
		if ValidRequestID([]byte(id)) {
			for _, c := range []byte(id) {
				if c < 0x21 || c > 0x7e {
					t.Fatalf("request id with byte %#x accepted", c)
				}
			}
		}
		checkParseTraceparent(t, tp)
		_ = etagMatch([]byte(inm), `"abc"`)
	})
}

// checkParseTraceparent is FuzzRequestHeaders' property of
// ParseTraceparent: what it accepts is a valid version-00 traceparent of
// the input's trace-id and parent-id with the sampled bit of its flags
// only; the input is version 00 of exactly 55 characters, or a version
// other than 00 and ff of at least 55 whose 56th character, if any, is
// "-"; and a version-00 result is accepted as itself.
func checkParseTraceparent(t *testing.T, tp string) {
	t.Helper()
	var dst [TraceparentLen]byte
	if !ParseTraceparent(&dst, []byte(tp)) {
		return
	}
	out := string(dst[:])
	if len(tp) < TraceparentLen || tp[:2] == "ff" || (tp[:2] == "00" && len(tp) != TraceparentLen) ||
		(len(tp) > TraceparentLen && tp[TraceparentLen] != '-') {
		t.Fatalf("traceparent %q accepted", tp)
	}
	if out[:3] != "00-" || out[3:53] != tp[3:53] || out[53] != '0' || (out[54] != '0' && out[54] != '1') {
		t.Fatalf("traceparent %q passed on as %q", tp, out)
	}
	if sampled := strings.IndexByte("13579bdf", tp[54]) >= 0; sampled != (out[54] == '1') {
		t.Fatalf("traceparent %q passed on as %q: sampled flag changed", tp, out)
	}
	for i, c := range []byte(out) {
		if i == 2 || i == 35 || i == 52 {
			if c != '-' {
				t.Fatalf("traceparent %q passed on as %q", tp, out)
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			t.Fatalf("traceparent %q passed on as %q: not lowercase hex", tp, out)
		}
	}
	if strings.Trim(out[3:35], "0") == "" || strings.Trim(out[36:52], "0") == "" {
		t.Fatalf("traceparent %q passed on as %q: an all-zero id", tp, out)
	}
	var again [TraceparentLen]byte
	if !ParseTraceparent(&again, dst[:]) || again != dst {
		t.Fatalf("traceparent %q passed on as %q, which is not accepted as itself", tp, out)
	}
}
