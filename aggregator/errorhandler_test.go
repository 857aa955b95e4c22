package aggregator

import (
	"errors"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestErrorHandlerReportsAndEchoes: answers to unparsable requests are
// logged and counted like any other (OnRequest), with the client's request
// id echoed when its headers were parsed.
func TestErrorHandlerReportsAndEchoes(t *testing.T) {
	s := newBenchServer(t, true)
	var got []RequestInfo
	s.onRequest = func(ri *RequestInfo) {
		c := *ri
		c.RequestID = append([]byte(nil), ri.RequestID...)
		got = append(got, c)
	}
	cases := []struct {
		name   string
		reqID  string
		err    error
		status int
		code   string
		echo   bool
	}{
		{"body too large", "client-id-1", fasthttp.ErrBodyTooLarge, 413, codeRequestTooLarge, true},
		{"header too large", "", &fasthttp.ErrSmallBuffer{}, 431, codeHeaderTooLarge, false},
		{"malformed", "bad id with spaces", errors.New("cannot parse"), 400, codeBadRequest, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got = nil
			var ctx fasthttp.RequestCtx
			if c.reqID != "" {
				ctx.Request.Header.Set("X-Request-ID", c.reqID)
			}
			s.ErrorHandler(&ctx, c.err)
			if ctx.Response.StatusCode() != c.status {
				t.Fatalf("status %d, want %d", ctx.Response.StatusCode(), c.status)
			}
			if len(got) != 1 {
				t.Fatalf("OnRequest called %d times, want 1", len(got))
			}
			ri := got[0]
			if ri.Status != c.status || ri.Code != c.code || ri.Route != RouteNotFound {
				t.Errorf("reported %+v", ri)
			}
			rid := string(ctx.Response.Header.Peek("X-Request-ID"))
			if string(ri.RequestID) != rid || rid == "" {
				t.Errorf("reported request id %q, header %q", ri.RequestID, rid)
			}
			if echoed := rid == c.reqID; echoed != c.echo {
				t.Errorf("X-Request-ID %q (client sent %q), echo expected %v", rid, c.reqID, c.echo)
			}
		})
	}
}
