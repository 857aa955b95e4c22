package listener

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lingerPair returns a connection accepted from ln (over tcp) and its
// client, the server having read n bytes the client sent first (a
// lingering close is for a client that sent something).
func lingerPair(t *testing.T, tcp net.Listener, ln net.Listener) (server, client net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	_ = server.SetDeadline(time.Now().Add(10 * time.Second))
	return server, client
}

// TestLingerOnClose: a connection the server answers and closes after
// LingerOnClose ends with the answer and a FIN, never a reset, while the
// client goes on sending (what it sends is read and discarded), whatever
// more Close calls come, and stays counted in Open until the client ends
// its side; an unmarked connection
// is closed and uncounted at once, as before.
func TestLingerOnClose(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Limit(tcp, LimitOptions{})
	defer ln.Close()
	for i := range 20 {
		server, client := lingerPair(t, tcp, ln)
		wrote := make(chan error, 1)
		go func() {
			_, err := io.WriteString(client, strings.Repeat("x", 512<<10))
			wrote <- err
		}()
		if _, err := io.ReadFull(server, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(server, "answer"); err != nil {
			t.Fatal(err)
		}
		LingerOnClose(server)
		if err := server.Close(); err != nil {
			t.Fatal(err)
		}
		// A second Close (a shutdown's closing of connections, or the
		// server's own again) leaves the lingering close alone.
		if err := server.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(client)
		if string(b) != "answer" || err != nil {
			t.Fatalf("round %d: client read %q, %v; want the answer, then EOF", i, b, err)
		}
		if err := <-wrote; err != nil {
			t.Fatalf("round %d: the client's write: %v; want all of it taken", i, err)
		}
		if n := ln.Open(); n != 1 {
			t.Fatalf("round %d: Open %d while the connection lingers, want 1", i, n)
		}
		_ = client.Close()
		waitFor(t, "the lingering close to end", func() bool { return ln.Open() == 0 })
	}

	server, client := lingerPair(t, tcp, ln)
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	_ = server.Close()
	if n := ln.Open(); n != 0 {
		t.Errorf("an unmarked connection: Open %d after Close, want 0", n)
	}
}

// TestLingerOnCloseBounded: a lingering close ends on its own against a
// client that neither sends nor ends its side (LingerIdle) and against one
// that never stops sending (LingerBytes: its writes then fail), and at most
// MaxLingering connections of a listener linger at once: one more is
// closed at once.
func TestLingerOnCloseBounded(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Limit(tcp, LimitOptions{})
	defer ln.Close()
	markClose := func(server, client net.Conn) {
		t.Helper()
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		LingerOnClose(server)
		_ = server.Close()
	}

	t.Run("silent client", func(t *testing.T) {
		server, client := lingerPair(t, tcp, ln)
		markClose(server, client)
		if n := ln.Open(); n != 1 {
			t.Fatalf("Open %d, want 1 (lingering)", n)
		}
		waitFor(t, "the lingering close of a silent client to end", func() bool { return ln.Open() == 0 })
	})

	t.Run("endless sender", func(t *testing.T) {
		server, client := lingerPair(t, tcp, ln)
		markClose(server, client)
		chunk := []byte(strings.Repeat("y", 64<<10))
		sent := 0
		for {
			n, err := client.Write(chunk)
			sent += n
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("the client's writes did not fail after %d bytes: the lingering close read without a bound", sent)
				}
				break
			}
		}
		if sent < LingerBytes {
			t.Errorf("the client's writes failed after %d bytes, before the lingering close's %d", sent, LingerBytes)
		}
		waitFor(t, "the lingering close to end", func() bool { return ln.Open() == 0 })
	})

	t.Run("cap", func(t *testing.T) {
		clients := make([]net.Conn, 0, MaxLingering+1)
		for range MaxLingering + 1 {
			server, client := lingerPair(t, tcp, ln)
			markClose(server, client)
			clients = append(clients, client)
		}
		if n := ln.Open(); n != MaxLingering {
			t.Errorf("Open %d with %d connections closed lingering, want %d (the cap)", n, MaxLingering+1, MaxLingering)
		}
		for _, c := range clients {
			_ = c.Close()
		}
		waitFor(t, "the lingering closes to end", func() bool { return ln.Open() == 0 })
	})
}

// TestLingerOnCloseUnderTLS: through the TLS layer too, the client reads
// the answer and the end of the connection while it is still sending.
func TestLingerOnCloseUnderTLS(t *testing.T) {
	cert, tcp, pool := tlsTestListener(t)
	lim := Limit(tcp, LimitOptions{})
	ln := TLS(lim, ServerConfig(cert), nil)
	defer ln.Close()
	for i := range 10 {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			server, err := ln.Accept()
			if err != nil {
				t.Error(err)
				return
			}
			_ = server.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(server, make([]byte, 100)); err != nil {
				t.Error(err)
			}
			_, _ = io.WriteString(server, "answer")
			LingerOnClose(server)
			_ = server.Close()
		}()
		client, err := tls.Dial("tcp", tcp.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		_ = client.SetDeadline(time.Now().Add(10 * time.Second))
		wrote := make(chan error, 1)
		go func() {
			_, err := io.WriteString(client, strings.Repeat("x", 512<<10))
			wrote <- err
		}()
		b, err := io.ReadAll(client)
		if string(b) != "answer" || err != nil {
			t.Fatalf("round %d: client read %q, %v; want the answer, then the end", i, b, err)
		}
		if err := <-wrote; err != nil {
			t.Fatalf("round %d: the client's write: %v", i, err)
		}
		_ = client.Close()
		wg.Wait()
		waitFor(t, "the lingering close to end", func() bool { return lim.Open() == 0 })
	}
}
