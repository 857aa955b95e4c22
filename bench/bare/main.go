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
// With -mirror it answers a set of requests from memory: at start it asks
// the server at the -mirror URL every request of the -reqs file (lines of
// "key<TAB>path", the scale mix's format; the key goes in X-Api-Key), once
// plain and once with Accept-Encoding: gzip, and keeps both bodies; then it
// answers each path with the kept body (the gzip one when the request
// accepts gzip), 404 for any other. It is the scale mix's floor (row s'):
// what any fasthttp server that held the whole working set in memory would
// spend on the mix, with no cache, no Redis and nothing of the edge.
//
//	bare -listen 127.0.0.1:PORT -body FILE
//	bare -listen 127.0.0.1:PORT -proxy http://127.0.0.1:UPSTREAM
//	bare -listen 127.0.0.1:PORT -mirror http://127.0.0.1:EDGE -reqs FILE
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
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
	mirror := flag.String("mirror", "", "base URL (http://host:port) whose answers to the -reqs requests are kept and served")
	reqsFile := flag.String("reqs", "", "with -mirror: file of key<TAB>path lines")
	flag.Parse()
	var handler fasthttp.RequestHandler
	switch {
	case *mirror != "":
		bodies, err := fetchAll(strings.TrimSuffix(*mirror, "/"), *reqsFile)
		if err != nil {
			log.Fatal(err)
		}
		handler = mirrorHandler(bodies)
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
		log.Fatal("bare: one of -body, -proxy or -mirror is needed")
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

// kept is one path's answer in both codings.
type kept struct{ plain, gzip []byte }

// fetchAll asks base every request of the reqs file, plain and gzip, and
// returns the answers by path; any answer but a 200 is an error.
func fetchAll(base, reqsFile string) (map[string]kept, error) {
	f, err := os.Open(reqsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make(map[string]kept)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, path, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		var k kept
		for _, gz := range []bool{false, true} {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			req.SetRequestURI(base + path)
			req.Header.Set("X-Api-Key", key)
			if gz {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			err := fasthttp.DoTimeout(req, resp, 10*time.Second)
			switch {
			case err != nil:
			case resp.StatusCode() != fasthttp.StatusOK:
				err = fmt.Errorf("status %d", resp.StatusCode())
			}
			if err != nil {
				return nil, fmt.Errorf("bare: GET %s: %w", path, err)
			}
			body := bytes.Clone(resp.Body())
			if gz {
				if string(resp.Header.ContentEncoding()) == "gzip" {
					k.gzip = body
				}
			} else {
				k.plain = body
			}
			fasthttp.ReleaseRequest(req)
			fasthttp.ReleaseResponse(resp)
		}
		out[path] = k
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bare: no requests in %s", reqsFile)
	}
	return out, nil
}

// mirrorHandler answers each kept path from memory: the gzip body to a
// request that accepts gzip (when the path has one), the plain one
// otherwise.
func mirrorHandler(bodies map[string]kept) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		k, ok := bodies[string(ctx.RequestURI())]
		if !ok {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		ctx.SetContentType("application/json")
		if k.gzip != nil && ctx.Request.Header.HasAcceptEncoding("gzip") {
			ctx.Response.Header.SetContentEncoding("gzip")
			ctx.SetBody(k.gzip)
			return
		}
		ctx.SetBody(k.plain)
	}
}
