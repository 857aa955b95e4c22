// Command bare is the benchmark's ceiling: a bare fasthttp server that
// answers every request with a fixed body read from a file (the same bytes
// the edge sends), without auth, rate limiting, routing or a cache. What it
// reaches on a core is the most any fasthttp-based server, the edge
// included, can reach on the same machine for that body size.
//
//	bare -listen 127.0.0.1:PORT -body FILE
package main

import (
	"flag"
	"log"
	"os"

	"github.com/valyala/fasthttp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	bodyFile := flag.String("body", "", "file whose bytes are every response's body")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(body)
		},
		NoDefaultServerHeader: true,
	}
	log.Fatal(srv.ListenAndServe(*listen))
}
