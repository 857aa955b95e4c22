package reliability

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
)

// recorder is a TCP relay between the front proxy and the edge that keeps
// every byte the proxy sent: what the edge really received.
type recorder struct {
	ln net.Listener
	syncbuf.Buffer
}

func startRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(c, up); c.Close() }()
				// Record before forwarding: once the edge has the bytes it
				// may answer, and the client may Take() the record, before
				// a write that came second would have landed.
				_, _ = io.Copy(io.MultiWriter(r, up), c)
			}()
		}
	}()
	return r
}

// freePort finds a loopback port for nginx (which cannot be told to take
// port 0 and report it). It is free when chosen only: startNginx checks
// that nginx bound it.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// beforeNginx, when set (by a test), runs after startNginx has chosen a
// port and before nginx starts on it: the test takes the port there.
var beforeNginx func(port int)

// errNginxPortTaken reports that nginx did not get its port: another
// process bound it first.
var errNginxPortTaken = errors.New("port taken")

// startNginx runs nginx as the front proxy of upstream (host:port) with
// the usual front-proxy header policy: it sets X-Request-ID, traceparent
// and X-Forwarded-For itself and passes the client's X-Api-Key,
// Authorization, If-None-Match and Accept-Encoding on. The port is free
// when chosen, and another process can bind it before nginx does: nginx
// then exits, or another server answers there, and startNginx tries
// another port (5 in all).
func startNginx(t *testing.T, upstream string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("nginx not installed (scripts/test.sh installs it)")
		}
		t.Skip("nginx not installed")
	}
	for range 5 {
		port := freePort(t)
		if beforeNginx != nil {
			beforeNginx(port)
		}
		addr, err := launchNginx(t, bin, port, upstream)
		if err == nil {
			return addr
		}
		if !errors.Is(err, errNginxPortTaken) {
			t.Fatal(err)
		}
		t.Logf("nginx: trying another port: %v", err)
	}
	t.Fatal("nginx: no port of 5 tried was free")
	return ""
}

// launchNginx starts nginx on port and waits until it answers there as
// itself: a location of the config answers a token of this start, which
// another server on the port does not know.
func launchNginx(t *testing.T, bin string, port int, upstream string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"tmp/client_body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	token := fmt.Sprintf("front-ready-%d-%d", port, time.Now().UnixNano())
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %[1]s/tmp/client_body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    server {
        listen 127.0.0.1:%[2]d;
        location = /__front_ready {
            return 200 "%[4]s";
        }
        location / {
            proxy_pass http://%[3]s;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Request-ID "front-$connection-$connection_requests";
            proxy_set_header traceparent "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
            proxy_set_header X-Forwarded-For $remote_addr;
        }
    }
}
`, dir, port, upstream, token)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir+"/", "-c", confPath, "-e", filepath.Join(dir, "logs/error.log"))
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() { _ = cmd.Process.Kill(); <-done }
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	hc := &http.Client{Timeout: 300 * time.Millisecond}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "logs/error.log"))
			out := stderr.String() + string(log)
			if strings.Contains(out, "Address already in use") {
				return "", fmt.Errorf("%w: nginx could not bind %s", errNginxPortTaken, addr)
			}
			return "", fmt.Errorf("nginx exited before listening on %s:\n%s", addr, out)
		default:
		}
		if resp, err := hc.Get("http://" + addr + "/__front_ready"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) == token {
				t.Cleanup(stop)
				return addr, nil
			}
			stop()
			return "", fmt.Errorf("%w: another server answers on %s", errNginxPortTaken, addr)
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("nginx did not listen on %s:\n%s", addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startNginx moves to another port when the one it chose is taken before
// nginx binds it, by a listener that never answers or by another HTTP
// server, and returns a front proxy of its own. Before 2026-11-27 it
// waited for a TCP connect to the port: next to another server it
// returned that server's address, and the front-proxy tests then sent
// their requests to a stranger.
func TestStartNginxPortTakenMeanwhile(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "from the upstream")
	}))
	defer up.Close()
	cases := []struct {
		name  string
		serve func(ln net.Listener)
	}{
		{"silent listener", func(ln net.Listener) {}},
		{"another HTTP server", func(ln net.Listener) {
			go func() {
				_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.WriteString(w, "a stranger")
				}))
			}()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			taken := ""
			beforeNginx = func(port int) {
				beforeNginx = nil
				ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = ln.Close() })
				taken = ln.Addr().String()
				c.serve(ln)
			}
			t.Cleanup(func() { beforeNginx = nil })
			front := startNginx(t, strings.TrimPrefix(up.URL, "http://"))
			if taken == "" || front == taken {
				t.Fatalf("front %s, taken %q", front, taken)
			}
			resp, err := http.Get("http://" + front + "/x")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "from the upstream" {
				t.Errorf("through the front proxy: %q", body)
			}
		})
	}
}

// TestBareLFThroughNginx: no header the edge acts on can be smuggled past
// a real nginx in front with a bare LF. For each of them a client hides it
// behind a bare LF in another field (and, as a control, sends it on a
// line of its own). Whatever nginx does with the bare LF (it rejects the
// request or splits the line there), what it forwards has CRLF line ends
// only, so the edge acts on exactly the header fields nginx saw: the ones
// nginx sets itself (X-Request-ID, traceparent, X-Forwarded-For) arrive
// with nginx's values only, and the ones it passes on arrive as the
// separate lines nginx parsed. Sent to the edge directly, every bare-LF
// request is 400 and acted on in no way.
func TestBareLFThroughNginx(t *testing.T) {
	s := startStack(t, hostileConfig())
	edgeAddr := strings.TrimPrefix(s.edge.Base, "http://")
	rec := startRecorder(t, edgeAddr)
	front := startNginx(t, rec.ln.Addr().String())

	const path = "/dealer/REWIND/listing?page_size=1"
	cases := []struct {
		name, header, value string
		owned               bool // nginx sets it itself
	}{
		{"X-Api-Key", "X-Api-Key", "demo-key-beta", false},
		{"Authorization", "Authorization", "Bearer demo-key-beta", false},
		{"X-Request-ID", "X-Request-ID", "smuggled-id", true},
		{"If-None-Match", "If-None-Match", "*", false},
		{"Accept-Encoding", "Accept-Encoding", "gzip", false},
		{"traceparent", "traceparent", "00-11111111111111111111111111111111-2222222222222222-01", true},
		{"X-Forwarded-For", "X-Forwarded-For", "10.66.66.66", true},
	}
	send := func(t *testing.T, addr, req string) (*http.Response, []byte) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, body
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hidden := c.header + ": " + c.value
			// The legitimate key comes first, unless the key itself is the
			// hidden header (then it would be the second key).
			req := "GET " + path + " HTTP/1.1\r\nHost: edge.test\r\nX-Api-Key: " + hostileKey + "\r\nX-Note: a\n" + hidden + "\r\nConnection: close\r\n\r\n"
			if c.header == "X-Api-Key" || c.header == "Authorization" {
				req = "GET " + path + " HTTP/1.1\r\nHost: edge.test\r\nX-Note: a\n" + hidden + "\r\nConnection: close\r\n\r\n"
			}
			// Directly: always 400, nothing acted on.
			resp, body := send(t, edgeAddr, req)
			if resp.StatusCode != 400 || !strings.Contains(string(body), `"bad_request"`) || resp.Header.Get("X-Request-Id") == "smuggled-id" {
				t.Errorf("direct: %d %s (X-Request-Id %q), want 400 bad_request", resp.StatusCode, body, resp.Header.Get("X-Request-Id"))
			}
			// Through nginx.
			rec.Take()
			resp, body = send(t, front, req)
			fwd := rec.Take()
			if strings.Contains(strings.ReplaceAll(fwd, "\r\n", ""), "\n") {
				t.Fatalf("nginx forwarded a bare LF:\n%q", fwd)
			}
			lines := headerLines(fwd)
			t.Logf("nginx answered %d; forwarded %q", resp.StatusCode, lines)
			if resp.StatusCode >= 500 {
				t.Errorf("through nginx: %d %s", resp.StatusCode, body)
			}
			if fwd == "" {
				if resp.StatusCode != 400 {
					t.Errorf("nginx forwarded nothing but answered %d", resp.StatusCode)
				}
				return // nginx rejected it: nothing reached the edge
			}
			got := lines[strings.ToLower(c.header)]
			if c.owned {
				// nginx's value only: the client's never reaches the edge.
				for _, v := range got {
					if v == c.value {
						t.Errorf("%s: the client's value reached the edge past nginx's own: %q", c.header, got)
					}
				}
				if c.header == "X-Request-ID" && !strings.HasPrefix(resp.Header.Get("X-Request-Id"), "front-") {
					t.Errorf("edge answered with X-Request-Id %q, not nginx's", resp.Header.Get("X-Request-Id"))
				}
				return
			}
			// Passed on: the edge sees it only as a line of its own that
			// nginx parsed and forwarded, never inside another value.
			for name, vs := range lines {
				for _, v := range vs {
					if name != strings.ToLower(c.header) && strings.Contains(strings.ToLower(v), strings.ToLower(c.header)+":") {
						t.Errorf("%s forwarded inside %s: %q", c.header, name, v)
					}
				}
			}
		})
	}
	// Control: on lines of their own, nginx passes the client's headers
	// on and overrides its own, as configured.
	rec.Take()
	resp, _ := send(t, front, "GET "+path+" HTTP/1.1\r\nHost: edge.test\r\nX-Api-Key: "+hostileKey+"\r\nX-Request-ID: client-id\r\nIf-None-Match: *\r\nConnection: close\r\n\r\n")
	lines := headerLines(rec.Take())
	if resp.StatusCode != 304 || !strings.HasPrefix(resp.Header.Get("X-Request-Id"), "front-") || len(lines["x-api-key"]) != 1 {
		t.Errorf("control through nginx: %d, X-Request-Id %q, forwarded %q", resp.StatusCode, resp.Header.Get("X-Request-Id"), lines)
	}
}

// headerLines parses the header block of the first request in raw (CRLF
// line ends) into lowercase names and their values in order.
func headerLines(raw string) map[string][]string {
	out := map[string][]string{}
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	for i, line := range strings.Split(head, "\r\n") {
		if i == 0 {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[strings.ToLower(k)] = append(out[strings.ToLower(k)], strings.TrimSpace(v))
		}
	}
	return out
}
