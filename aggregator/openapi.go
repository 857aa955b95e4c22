package aggregator

import (
	"bytes"
	"compress/gzip"
	"strconv"

	"github.com/valyala/fasthttp"
)

// openapiDoc is the OpenAPI document in the two forms it is served in,
// made once at start: plain with a strong ETag, gzip-coded with the weak
// form of the same tag (the same data under another coding, as for cached
// responses), so If-None-Match with either gets a 304 in either coding.
type openapiDoc struct {
	plain, gz    []byte
	etag, gzETag string
	gzOK         bool
	cacheControl []byte
}

// openapiCacheControl lets clients and shared caches keep the document an
// hour (it changes only with a release) and revalidate it with the ETag.
const openapiCacheControl = "public, max-age=3600"

func newOpenAPIDoc(doc []byte) openapiDoc {
	d := openapiDoc{
		plain:        doc,
		etag:         `"` + strconv.FormatUint(fnv64(doc), 16) + `"`,
		cacheControl: []byte(openapiCacheControl),
	}
	d.gzETag = "W/" + d.etag
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err == nil {
		_, err = w.Write(doc)
	}
	if err == nil {
		err = w.Close()
	}
	// A compressed form that is not smaller is not worth a coding.
	if err == nil && buf.Len() < len(doc) {
		d.gz, d.gzOK = buf.Bytes(), true
	}
	return d
}

// openAPI serves GET and HEAD /dealer/openapi.json: no key needed (it is
// documentation, identical for everyone), gzip-coded to clients that
// accept it while compression is on, cacheable, revalidated by ETag. Requests without a key pass
// the anonymous limit first, when one is configured.
func (s *Server) openAPI(ctx *fasthttp.RequestCtx) {
	rs := state(ctx)
	rs.route = RouteOpenAPI
	if s.anonLimit != nil {
		if ok, retry := s.anonLimit(ctx); !ok {
			s.writeProblem(ctx, rs, &apiError{code: codeRateLimited, detail: "too many requests from this address; retry after the number of seconds in Retry-After", retryAfter: max(retry, 1)})
			return
		}
	}
	d := &s.openapi
	body, etag := d.plain, d.etag
	// server.gzip_min_bytes applies as to any body: 0 turns compression
	// off here too.
	if least := s.settings.Load().GzipMinBytes; d.gzOK && least > 0 && len(d.plain) >= least && acceptsGzip(rs.hdr.acceptEncoding) {
		body, etag, rs.gzip = d.gz, d.gzETag, true
	}
	// The document is the same for every caller: it varies by coding only.
	s.writeBodyHdr(ctx, rs, body, etag, d.cacheControl, valVaryEncoding)
}
