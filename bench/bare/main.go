// Command bare is a fasthttp server with nothing of the edge in it: no
// auth, rate limiting, routing, cache or decoding. The benchmark measures
// the edge against what it costs.
//
// With -body it answers every request with a fixed body read from a file
// (the same bytes the edge sends): the ceiling of a hit (row a'), since what
// it reaches on a core is the most any fasthttp-based server, the edge
// included, can reach on the same machine for that body size.
//
// With -proxy it is the floor of a miss: every request is passed to the
// upstream URL (-proxy plus the request's URI) with a fasthttp client and
// the upstream's body is sent back as it came, nothing decoded or encoded
// (row c', the floor of row c: the exchange with the upstream and the
// client alone, at every connection count).
//
//	bare -listen 127.0.0.1:PORT -body FILE
//	bare -listen 127.0.0.1:PORT -proxy http://127.0.0.1:UPSTREAM
package main

import (
	"flag"
	"log"
	"os"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	bodyFile := flag.String("body", "", "file whose bytes are every response's body")
	proxy := flag.String("proxy", "", "upstream base URL (http://host:port): pass every request there instead")
	flag.Parse()
	var handler fasthttp.RequestHandler
	switch {
	case *proxy != "":
		handler = proxyHandler(strings.TrimSuffix(*proxy, "/"))
	case *bodyFile != "":
		body, err := os.ReadFile(*bodyFile)
		if err != nil {
			log.Fatal(err)
		}
		handler = func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(body)
		}
	default:
		log.Fatal("bare: one of -body or -proxy is needed")
	}
	srv := &fasthttp.Server{Handler: handler, NoDefaultServerHeader: true}
	log.Fatal(srv.ListenAndServe(*listen))
}

// proxyHandler passes each request's URI to base and sends the upstream's
// status and body back, as the edge's upstream client does (one pooled
// HostClient, a 64 KiB read buffer) without anything the edge does on top.
func proxyHandler(base string) fasthttp.RequestHandler {
	addr := strings.TrimPrefix(base, "http://")
	hc := &fasthttp.HostClient{Addr: addr, MaxConns: 1024, ReadBufferSize: 64 << 10}
	return func(ctx *fasthttp.RequestCtx) {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(base + string(ctx.RequestURI()))
		if err := hc.DoTimeout(req, resp, 10*time.Second); err != nil {
			ctx.Error("upstream: "+err.Error(), fasthttp.StatusBadGateway)
			return
		}
		ctx.SetStatusCode(resp.StatusCode())
		ctx.SetContentType("application/json")
		ctx.SetBody(resp.Body())
	}
}
