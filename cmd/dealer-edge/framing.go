package main

import (
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/aggregator/ops"
	"github.com/dealer-edge/dealer-edge/listener"
)

// adminFraming runs, before the admin handler, the checks the public
// handler makes of a request's head (aggregator.FramingProblem): the admin
// server is fasthttp too and took what fasthttp takes. Until 2026-11-29 it
// served "Transfer-Encoding: identity" and "chunked, gzip" as requests
// without a body, so the bytes after their head were read as the next
// request (RFC 9112 section 6.3: 400 and close), kept the connection after
// Content-Length beside Transfer-Encoding (section 6.1: MUST close) and
// after "Connection: Close" (section 9.6), and took bare LFs, obs-folds,
// spaces in field names, Host values such as "a@b" and targets such as
// "http:///healthz" (TestAdminHTTP1Framing).
func adminFraming(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		detail, closeAfter := aggregator.FramingProblem(&ctx.Request.Header)
		if detail != "" {
			ops.BadRequest(ctx, detail)
			listener.LingerOnClose(ctx.Conn()) // see lingerRefusals
			return
		}
		if closeAfter {
			ctx.SetConnectionClose()
		}
		h(ctx)
	}
}

// lingerRefusals makes the close after a request the handler refused with
// 400 and Connection: close (its head or framing: a bare LF, a fold,
// Transfer-Encoding, a space in a field name, the Host) a lingering one,
// as the server's ErrorHandler does for what fasthttp refuses: the client
// may still be sending (a body the edge never framed, a pipelined
// request), and a close with its bytes unread makes the kernel reset the
// connection, so the client met "connection reset by peer" after, or
// instead of, its 400 (TestRefusedRequestAnswerSurvivesUnreadBytes, the
// "400" cases refused by a handler; until 2026-11-29). It costs a request
// a status compare.
func lingerRefusals(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		if ctx.Response.StatusCode() == fasthttp.StatusBadRequest && ctx.Response.ConnectionClose() {
			listener.LingerOnClose(ctx.Conn())
		}
	}
}
