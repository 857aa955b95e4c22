package ops

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// statusHTML is the live status page: one self-contained file (no
// external scripts, styles or fonts) whose script polls /admin/status.
//
//go:embed statuspage.html
var statusHTML []byte

func statusPage(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/html; charset=utf-8")
	// Only inline script and style of this very page, nothing fetched
	// from elsewhere; the page cannot be framed.
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.Response.Header.Set("Referrer-Policy", "no-referrer")
	ctx.SetBody(statusHTML)
}
