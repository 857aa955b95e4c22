package listener

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
)

// TestUnansweredCapUnderTLSKeyUpdate: under TLS 1.3 the limits layer
// counts the ciphertext read and starts the count again on any write to
// the socket. A client's KeyUpdate with update_requested makes crypto/tls
// write a KeyUpdate of its own (a write the server never made: no
// answer), and crypto/tls's non-advancing-record counter restarts at
// every application-data record, so a client that sends one KeyUpdate
// per few MiB of application data is never refused: the chunk extension
// of 5146678 reads without bound again on a TLS listener.
//
// The client is openssl s_client, whose stdin line "K" sends a KeyUpdate
// asking for the peer's.
func TestUnansweredCapUnderTLSKeyUpdate(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	const limit = 1 << 20
	for _, keyUpdates := range []bool{false, true} {
		name := "plain"
		if keyUpdates {
			name = "keyupdate"
		}
		t.Run(name, func(t *testing.T) {
			ca := testpki.NewCA(t)
			cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
			pair, err := tls.X509KeyPair(cp, kp)
			if err != nil {
				t.Fatal(err)
			}
			tcp, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			st, err := New(tcp, Options{Limits: LimitOptions{MaxUnansweredBytes: limit}, TLS: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13}})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			type result struct {
				n   int64
				err error
			}
			done := make(chan result, 1)
			go func() {
				c, err := st.Accept()
				if err != nil {
					done <- result{0, err}
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(20 * time.Second))
				// The server reads and never answers (a chunk-size line
				// being read).
				n, err := io.Copy(io.Discard, c)
				done <- result{n, err}
			}()
			cmd := exec.Command("openssl", "s_client", "-connect", tcp.Addr().String(), "-tls1_3")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The client's output buffers are read only once it has
			// ended (exec's goroutines write them until Wait returns).
			stopClient := sync.OnceFunc(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			defer stopClient()
			time.Sleep(300 * time.Millisecond) // handshake
			blk := bytes.Repeat([]byte("a"), 16<<10)
			var sent int64
			const total = 8 << 20
			for sent < total {
				select {
				case r := <-done:
					t.Logf("server stopped after %d bytes: %v (client sent %d)", r.n, r.err, sent)
					if !errors.Is(r.err, ErrRequestTooLarge) || r.n > 2*limit {
						t.Fatalf("server read %d bytes, err %v: want ErrRequestTooLarge near %d", r.n, r.err, limit)
					}
					return
				default:
				}
				if keyUpdates && sent%(limit/2) == 0 && sent > 0 {
					time.Sleep(30 * time.Millisecond)
					_, _ = io.WriteString(stdin, "K\n")
					time.Sleep(30 * time.Millisecond)
				}
				if _, err := stdin.Write(blk); err != nil {
					break
				}
				sent += int64(len(blk))
			}
			_ = stdin.Close()
			var r result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("server still reading after the client sent %d bytes with no answer (cap %d)", sent, limit)
			}
			stopClient()
			t.Logf("server read %d bytes, err %v; client stderr KEYUPDATE lines: %d", r.n, r.err, bytes.Count(errb.Bytes(), []byte("KEYUPDATE")))
			if !errors.Is(r.err, ErrRequestTooLarge) || r.n > 2*limit {
				t.Fatalf("server read %d bytes without answering one, err %v: MaxUnansweredBytes %d not enforced", r.n, r.err, limit)
			}
		})
	}
}
