package aggregator

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

func TestNormalizeQuery(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"one word", "noleggio", "noleggio"},
		{"case", "NoLeGGio", "noleggio"},
		{"order", "panda fiat", "fiat panda"},
		{"order and case", "Panda FIAT", "fiat panda"},
		{"duplicate", "fiat fiat panda", "fiat panda"},
		{"duplicate in another case", "Fiat fiat", "fiat"},
		{"word inside another", "nol noleggio", "noleggio"},
		{"word inside another, later", "auto autonomia", "autonomia"},
		{"two single letters stay", "a b", "a b"},
		{"repeated letter", "a A", "a"},
		{"accented upper case", "ELETTRICA Città", "città elettrica"},
		{"dotted capital I", "İstanbul", strings.ToLower("İstanbul")},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := normalizeQuery(c.in)
			if got != c.want {
				t.Errorf("normalizeQuery(%q) = %q, want %q", c.in, got, c.want)
			}
			if again := normalizeQuery(got); again != got {
				t.Errorf("not a fixed point: %q -> %q", got, again)
			}
		})
	}
}

// TestToLowerIdempotent: both the content service and the edge lowercase
// q, and the edge sends the lowercased canonical form, which the service
// lowercases again. That is the same only if lowercasing is idempotent,
// which holds for every rune.
func TestToLowerIdempotent(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		once := strings.ToLower(string(r))
		if twice := strings.ToLower(once); twice != once {
			t.Errorf("U+%04X: ToLower %q, twice %q", r, once, twice)
		}
		if strings.ContainsFunc(once, unicode.IsSpace) != unicode.IsSpace(r) {
			t.Errorf("U+%04X: lowercasing changes whether it is a space", r)
		}
	}
}

// TestNormalizeQueryKeepsMatches is the property the cache key relies on,
// over the whole corpus: for generated queries and many variants of each
// (case changed, words shuffled, repeated, parts of words added, spacing),
// the content service's matching (corpus.Filter, which the fake serves)
// and the edge's ranking give the same records in the same order for the
// variant as for its canonical form, and every variant of one query has
// the same canonical form.
func TestNormalizeQueryKeepsMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	queries, variants := 0, 0
	for _, dealer := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			recs := corpus.Records(dealer, ct)
			if len(recs) == 0 {
				t.Fatalf("dealer %d %s: no records", dealer, ct)
			}
			var vocab []string
			for _, r := range recs {
				vocab = append(vocab, strings.Fields(r.Title)...)
				vocab = append(vocab, strings.Fields(r.Excerpt)...)
			}
			for range 25 {
				base := genQuery(rng, vocab)
				canon := normalizeQuery(normalizeSpace([]byte(base)))
				want := matchIDs(recs, canon)
				queries++
				for range 12 {
					v := variantOf(rng, base)
					variants++
					if got := normalizeQuery(normalizeSpace([]byte(v))); got != canon {
						t.Fatalf("dealer %d %s: variant %q of %q normalises to %q, the query to %q", dealer, ct, v, base, got, canon)
					}
					if got := matchIDs(recs, v); !slices.Equal(got, want) {
						t.Fatalf("dealer %d %s: %q matches %v, its canonical form %q matches %v", dealer, ct, v, got, canon, want)
					}
				}
			}
		}
	}
	t.Logf("%d queries, %d variants", queries, variants)
}

// matchIDs is the service's matching followed by the edge's ranking: the
// ids in the order a search would list them.
func matchIDs(recs []upstream.ContentRecord, q string) []int64 {
	m := corpus.Filter(recs, upstream.ContentFilter{Q: q})
	ptrs := make([]*upstream.ContentRecord, len(m))
	for i := range m {
		ptrs[i] = &m[i]
	}
	ids := make([]int64, 0, len(m))
	for _, r := range mapping.Ranked(ptrs, q) {
		ids = append(ids, r.ID)
	}
	return ids
}

// genQuery picks one to four words of the corpus (or parts of them, or a
// word that matches nothing).
func genQuery(rng *rand.Rand, vocab []string) string {
	n := 1 + rng.IntN(4)
	words := make([]string, 0, n)
	for range n {
		w := []rune(strings.Trim(vocab[rng.IntN(len(vocab))], ".,;:?!«»()'\""))
		switch {
		case len(w) == 0:
			w = []rune("zzqq")
		case rng.IntN(4) == 0 && len(w) > 3: // a part of a word
			i := rng.IntN(len(w) - 2)
			w = w[i : i+2+rng.IntN(len(w)-i-1)]
		case rng.IntN(10) == 0:
			w = []rune("xqzw")
		}
		words = append(words, string(w))
	}
	return strings.Join(words, " ")
}

// variantOf rewrites q as a client might: another case per letter, the
// words in another order, a word repeated, a part of a word added,
// whitespace around and between them.
func variantOf(rng *rand.Rand, q string) string {
	words := strings.Fields(q)
	if rng.IntN(2) == 0 {
		w := []rune(words[rng.IntN(len(words))])
		if len(w) > 1 {
			i := rng.IntN(len(w) - 1)
			words = append(words, string(w[i:i+1+rng.IntN(len(w)-i)]))
		}
	}
	if rng.IntN(2) == 0 {
		words = append(words, words[rng.IntN(len(words))])
	}
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	for i, w := range words {
		rs := []rune(w)
		for j, r := range rs {
			switch rng.IntN(3) {
			case 0:
				rs[j] = unicode.ToUpper(r)
			case 1:
				rs[j] = unicode.ToLower(r)
			}
		}
		words[i] = string(rs)
	}
	seps := []string{" ", "  ", "\t", " \t "}
	var b strings.Builder
	b.WriteString(seps[rng.IntN(len(seps))])
	for i, w := range words {
		if i > 0 {
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		b.WriteString(w)
	}
	b.WriteString(seps[rng.IntN(len(seps))])
	return b.String()
}

// countingContent counts the content service calls that reach the backend.
type countingContent struct {
	Backend
	calls *atomic.Int64
}

func (c countingContent) Content(ctx context.Context, dealerID int64, ct string, f upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	c.calls.Add(1)
	return c.Backend.Content(ctx, dealerID, ct, f)
}

// TestQueryVariantsShareOneFill: variants of one query (case, order,
// repetition) are one cache entry: one fill's content calls in all, and
// the same body for every variant.
func TestQueryVariantsShareOneFill(t *testing.T) {
	for _, c := range []struct {
		name, path string
		fillCalls  int64
	}{
		{"search", "/dealer/content/search?q=", 2 * int64(len(upstream.ContentTypes))},
		{"content listing", "/dealer/content/faq/listing?q=", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newBenchServer(t, true)
			var calls atomic.Int64
			s.backend = countingContent{Backend: s.backend, calls: &calls}
			h := s.Handler()
			var first []byte
			for i, q := range []string{"noleggio auto", "Auto Noleggio", "NOLEGGIO++auto", "auto+noleggio+auto", "noleggio+AUTO+nol", "+auto+++noleggio+"} {
				var ctx fasthttp.RequestCtx
				ctx.Request.SetRequestURI(c.path + q)
				ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
				h(&ctx)
				if ctx.Response.StatusCode() != 200 {
					t.Fatalf("%q: %d %s", q, ctx.Response.StatusCode(), ctx.Response.Body())
				}
				if i == 0 {
					first = append([]byte(nil), ctx.Response.Body()...)
				} else if string(ctx.Response.Body()) != string(first) {
					t.Errorf("%q: body differs from the first variant's", q)
				}
			}
			if n := calls.Load(); n != c.fillCalls {
				t.Errorf("%d content calls for 6 variants of one query, want %d (one fill)", n, c.fillCalls)
			}
		})
	}
}
