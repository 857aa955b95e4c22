package listener

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestMaxUnansweredBytes: a connection that sends more than
// MaxUnansweredBytes without the server writing gets ErrRequestTooLarge at
// its next read (and says so through RequestTooLarge); a write in between
// starts the count again, so a keep-alive client sending request after
// request is never refused.
func TestMaxUnansweredBytes(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Limit(tcp, LimitOptions{MaxUnansweredBytes: 1000})
	defer ln.Close()
	client, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	_ = server.SetDeadline(time.Now().Add(5 * time.Second))
	readN := func(n int) error {
		_, err := io.ReadFull(server, make([]byte, n))
		return err
	}
	// Ten rounds of 600 bytes each answered: 6,000 bytes in all, never
	// more than 600 without an answer.
	for i := range 10 {
		if _, err := io.WriteString(client, strings.Repeat("a", 600)); err != nil {
			t.Fatal(err)
		}
		if err := readN(600); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if _, err := server.Write([]byte("ok")); err != nil {
			t.Fatal(err)
		}
	}
	// 1,200 bytes without an answer: the read past 1,000 fails.
	if _, err := io.WriteString(client, strings.Repeat("b", 1200)); err != nil {
		t.Fatal(err)
	}
	if err := readN(600); err != nil {
		t.Fatal(err)
	}
	err = readN(600)
	if err == nil {
		// The second read may have taken the rest with the first's
		// bytes under the cap; one more read is refused.
		err = readN(1)
	}
	if !errors.Is(err, ErrRequestTooLarge) {
		t.Fatalf("err %v after 1,200 unanswered bytes, want ErrRequestTooLarge", err)
	}
	if tl, ok := server.(interface{ RequestTooLarge() bool }); !ok || !tl.RequestTooLarge() {
		t.Errorf("the connection does not report RequestTooLarge")
	}
}
