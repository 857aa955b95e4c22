package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/configs"
	"github.com/dealer-edge/dealer-edge/listener"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// maxConcurrency is fasthttp's own default and the most the edge derives.
const maxConcurrency = 256 * 1024

// fdLimit returns the soft limit of open files of the process (Go raises
// it to the hard limit at start), or 0 when it cannot be read.
func fdLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur >= 1<<62 {
		return 0
	}
	return rl.Cur
}

// fdReserve is how many file descriptors the edge keeps for everything
// but public connections: the upstream pools (one per service), the
// Redis connections (redisReserve), the admin listener's connections
// (those the admin server serves, and those in a lingering close after an
// error answer, listener.MaxLingering, which the admin listener does not
// count against a cap) and some for files, the listeners themselves and
// the embedded services. The public listener's lingering connections
// count against server.concurrency (listener.LingerOnClose).
func fdReserve(cfg *configs.Config, services int, rs redisServers) uint64 {
	perHost := cfg.Upstream.MaxConnsPerHost
	if perHost == 0 {
		perHost = upstream.DefaultMaxConnsPerHost // 0 means the default (upstream.New)
	}
	return uint64(services*perHost) + redisReserve(cfg, rs) + adminConcurrency + listener.MaxLingering + 64
}

// redisServers is what the Redis client was found talking to at start
// (findRedisServers): the masters of a Cluster, each with pools of its
// own, and its replicas. Zero: not a Cluster, or not reachable then.
type redisServers struct {
	masters, replicas int
	// embedded: the Redis is the in-process one (no redis.addrs), whose
	// end of each connection is a descriptor of this process too.
	embedded bool
}

// redisReserve is the most connections the Redis client opens: go-redis
// keeps, per server it sends commands to (the one node, the Sentinel's
// master, each master of a Cluster), a pool of redis.pool_size and a
// pipeline pool of redis.DefaultPipelinePoolSize (10: the cache's batcher,
// generation reads and purges are pipelines), both filled under load
// (TestFDReserveCoversRedisConnections). A Cluster's masters are those
// found at start, or the addresses listed when more (a seed list of 3 of
// a 6-master Cluster: 6 pools, TestFDReserveCoversDiscoveredMasters);
// its replicas get a connection each (the slot map is read from any
// node). One more for the purge subscription, two for a Sentinel's.
func redisReserve(cfg *configs.Config, rs redisServers) uint64 {
	pool := cfg.Redis.PoolSize
	if pool == 0 {
		pool = 10 * runtime.GOMAXPROCS(0) // go-redis' default
	}
	perServer := uint64(pool + redis.DefaultPipelinePoolSize)
	if rs.embedded {
		// The in-process Redis: both ends of every connection
		// (TestFDReserveCoversEmbeddedRedis).
		return 2 * (perServer + 1)
	}
	switch n := len(cfg.Redis.Addrs); {
	case cfg.Redis.MasterName != "":
		return perServer + 1 + 2
	case n > 1: // Cluster mode
		return uint64(max(n, rs.masters))*perServer + uint64(rs.replicas) + 1
	}
	return perServer + 1
}

// findRedisServers counts the masters and replicas of a Cluster rdb is a
// client of, within budget (reading the slot map opens no pool of its
// own): the pools go-redis opens are per node found, not per seed listed.
// Zero for a client of one server, or when the Cluster cannot be read.
func findRedisServers(rdb redis.UniversalClient, budget time.Duration) redisServers {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return redisServers{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return redisServers{}
	}
	masters, replicas := map[string]bool{}, map[string]bool{}
	for _, s := range slots {
		for i, n := range s.Nodes {
			if i == 0 {
				masters[n.Addr] = true
			} else {
				replicas[n.Addr] = true
			}
		}
	}
	return redisServers{masters: len(masters), replicas: len(replicas)}
}

// concurrency returns the public listener's connection cap: the
// configured one, or, when 0, the file-descriptor limit minus what the
// edge needs besides (at least half the limit), so that a flood of
// connections is answered 503 by the server before the process runs out
// of descriptors. The note says how it was found.
func concurrency(cfg *configs.Config, limit uint64, services int, rs redisServers) (n int, note string) {
	if cfg.Server.Concurrency > 0 {
		n = cfg.Server.Concurrency
		if limit > 0 && uint64(n) > limit {
			return n, "configured above the file-descriptor limit: a flood can exhaust descriptors (accept is then retried, /readyz is 503 meanwhile)"
		}
		return n, "configured"
	}
	if limit == 0 {
		return maxConcurrency, "no file-descriptor limit"
	}
	reserve := fdReserve(cfg, services, rs)
	free := limit / 2
	if limit > reserve && limit-reserve > free {
		free = limit - reserve
	}
	return int(min(free, maxConcurrency)), fmt.Sprintf("derived: file-descriptor limit %d minus %d kept for upstream, Redis and admin connections (at least half the limit)", limit, reserve)
}

// busyConns is the most open public connections before the edge counts as
// under pressure (idle connections then close after
// server.idle_timeout_busy): about 100 MB of idle connections at the
// default settings (README, "Memory per idle connection").
const busyConns = 4096

// adminConcurrency caps the admin listener's connections (kept free of
// the public listener's share of file descriptors).
const adminConcurrency = 256

// listenPublic binds the public listener and builds its layers: accept
// retry, PROXY protocol, limits, TLS.
func (a *app) listenPublic(cfg *configs.Config, conc int) error {
	tcp, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	o := listener.Options{
		Retry: listener.RetryOptions{Name: "public", Logger: a.log, OnError: func(kind string) { a.metrics.AcceptError("public", kind) }},
		Limits: listener.LimitOptions{
			MaxConnsPerIP:   cfg.Server.MaxConnsPerIP,
			MaxConns:        conc, // parked connections count too
			BusyConns:       min(conc/2, busyConns),
			BusyIdleTimeout: cfg.Server.IdleTimeoutBusy.D(),
			ParkAfter:       cfg.Server.ParkIdleAfter.D(),
			ParkAbove:       cfg.Server.ParkAbove,
			OnReject:        func(reason string) { a.metrics.ConnRejected(reason) },
			// Far above any request the server takes (a header block of
			// max_header_bytes and a body of 1 KiB) or a run of pipelined
			// ones read before their answers go out, far below the
			// megabytes a second one connection can send for the read
			// timeout's length.
			MaxUnansweredBytes: max(4<<20, 64*int64(cfg.Server.MaxHeaderBytes)),
			ReadBufferSize:     cfg.Server.MaxHeaderBytes, // the server's (main.go)
		},
	}
	a.metrics.DeclareConnRejections()
	if cfg.Server.ProxyProtocol {
		o.Proxy = &listener.ProxyOptions{From: cfg.Server.ProxyProtocolFrom, HeaderTimeout: cfg.Server.ReadTimeout.D()}
	}
	if cfg.TLS.CertFile != "" {
		cert, err := listener.LoadCertificate(cfg.TLS.CertFile, cfg.TLS.KeyFile)
		if err != nil {
			_ = tcp.Close()
			return err
		}
		a.cert = cert
		a.metrics.CertLoaded(cert.NotAfter())
		o.TLS = listener.ServerConfig(cert)
	} else {
		o.Limits.RejectResponse = tooManyConns(cfg.Server.ProblemBaseURL)
		o.Limits.OverloadResponse = overloaded(cfg.Server.ProblemBaseURL)
	}
	st, err := listener.New(tcp, o)
	if err != nil {
		_ = tcp.Close()
		return err
	}
	a.public = st
	a.addr = tcp.Addr().String()
	return nil
}

// refusal is the whole HTTP answer to a plain-HTTP connection refused by
// a listener limit: the contract's problem body for code (its status and
// title), with Retry-After: 1 (the contract promises it with every 429;
// a 503 here means the same, retry shortly) and no request id (the request
// was not read). Built once at start.
func refusal(problemBase, code, detail string) []byte {
	status, title, _ := publicshape.ProblemFor(code)
	body, _ := json.Marshal(publicshape.Problem{
		Type: publicshape.ProblemTypeURI(problemBase, code), Title: title, Status: status, Code: code, Detail: detail,
	})
	return []byte("HTTP/1.1 " + strconv.Itoa(status) + " " + fasthttp.StatusMessage(status) + "\r\nConnection: close\r\nRetry-After: 1\r\n" +
		"Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nContent-Type: application/problem+json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}

// tooManyConns answers a connection over server.max_conns_per_ip.
func tooManyConns(problemBase string) []byte {
	return refusal(problemBase, "rate_limited", "too many connections from this client address")
}

// overloaded answers a connection beyond server.concurrency (instead of
// fasthttp's text/plain 503).
func overloaded(problemBase string) []byte {
	return refusal(problemBase, "service_unavailable", "the edge is serving as many connections as it can; retry shortly")
}

// reloadCertificate re-reads the TLS files: part of every reload (SIGHUP,
// POST /admin/reload, a change of the config file or of the TLS files,
// which configs.Config.WatchedFiles lists).
func (a *app) reloadCertificate() error {
	if a.cert == nil {
		return nil
	}
	changed, err := a.cert.Reload()
	a.certReloaded(changed, err)
	return err
}

func (a *app) certReloaded(changed bool, err error) {
	a.metrics.CertReload(err)
	certFile, _ := a.cert.Files()
	switch {
	case err != nil:
		a.log.Error("TLS certificate reload rejected; the certificate in force stays", "file", certFile, "error", err.Error())
	case changed:
		a.metrics.CertLoaded(a.cert.NotAfter())
		a.log.Info("TLS certificate reloaded", "file", certFile, "not_after", a.cert.NotAfter().UTC().Format(time.RFC3339))
	}
}

// errListenerStopped is returned by Serve's callers for a listener that
// ended while the edge was not shutting down.
var errListenerStopped = errors.New("listener stopped")
