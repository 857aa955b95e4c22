package fake

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// ControlPath is the fault-control endpoint of the fake, so that a test can
// change the faults of a fake running in another process (cmd/fake-upstream):
//
//	POST /_control/faults?service=catalog&latency=2s&fail_rate=0.5&down=true&reset=true
//	GET  /_control/calls
//	POST /_control/keys?action=add&key=RAW&dealer=101[&plan=default][&expires=RFC3339]
//	POST /_control/keys?action=revoke&key=RAW   (or action=expire: expires_at = now)
//	POST /_control/keys?action=reset_log        (new epoch: every old cursor gets 410)
//
// Every parameter of the POST is optional; an omitted one keeps its value,
// service="" or absent means every service, and POST /_control/faults?clear=true
// removes every fault first. service may also name one content type of the
// content service, service=content:videos (see ContentTypeService): those
// faults apply to that type's requests only, together with the faults of
// service=content, which apply to every type. GET /_control/calls answers the
// call counters as a JSON object keyed by service and content:<type>, plus
// KeyLookupsName, the per-key lookups of the dealers service (GET
// keys/{hash}; the key index feed's calls are not among them). It is not part of the internal-service contract
// (no real service has it) and lives under a path no service uses.
const ControlPath = "/_control/"

// control answers the fault-control endpoint; it reports whether the path
// was one of its own.
func (s *Server) control(ctx *fasthttp.RequestCtx) bool {
	p := string(ctx.Path())
	if !strings.HasPrefix(p, ControlPath) {
		return false
	}
	switch {
	case p == ControlPath+"calls" && ctx.IsGet():
		var b strings.Builder
		b.WriteByte('{')
		for i, svc := range FaultNames() {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%d", svc, s.Calls(svc))
		}
		fmt.Fprintf(&b, ",%q:%d", KeyLookupsName, s.KeyLookups())
		b.WriteByte('}')
		writeJSON(ctx, []byte(b.String()))
	case p == ControlPath+"keys" && ctx.IsPost():
		if err := s.controlKeys(ctx.QueryArgs()); err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, err.Error())
			return true
		}
		writeJSON(ctx, []byte(`{"status":"ok"}`))
	case p == ControlPath+"faults" && ctx.IsPost():
		if err := s.applyControl(ctx.QueryArgs()); err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, err.Error())
			return true
		}
		writeJSON(ctx, []byte(`{"status":"ok"}`))
	default:
		writeError(ctx, fasthttp.StatusNotFound, "not found")
	}
	return true
}

func (s *Server) applyControl(a *fasthttp.Args) error {
	svc := string(a.Peek("service"))
	if svc != "" && s.faults[svc] == nil {
		return fmt.Errorf("unknown service %q", svc)
	}
	if a.GetBool("clear") {
		s.SetLatency(svc, 0)
		s.SetFailRate(svc, 0)
		s.SetDown(svc, false)
		s.SetReset(svc, false)
	}
	if v := a.Peek("latency"); v != nil {
		d, err := time.ParseDuration(string(v))
		if err != nil {
			return fmt.Errorf("latency: %w", err)
		}
		s.SetLatency(svc, d)
	}
	if v := a.Peek("fail_rate"); v != nil {
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return fmt.Errorf("fail_rate: %w", err)
		}
		s.SetFailRate(svc, f)
	}
	if v := a.Peek("down"); v != nil {
		s.SetDown(svc, a.GetBool("down"))
	}
	if v := a.Peek("reset"); v != nil {
		s.SetReset(svc, a.GetBool("reset"))
	}
	return nil
}

// SetReset makes service ("" for all) drop every request's connection
// without an answer (a TCP reset: linger 0, then close) while reset is true.
func (s *Server) SetReset(service string, reset bool) {
	s.each(service, func(f *faults) { f.reset.Store(reset) })
}

// resetConn aborts the connection of ctx: the peer sees a reset, not an
// answer.
func resetConn(ctx *fasthttp.RequestCtx) {
	c := ctx.Conn()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
