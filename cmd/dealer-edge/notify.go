package main

import (
	"net"
	"strings"
)

// notifier speaks systemd's sd_notify protocol: datagrams such as
// "READY=1" to the unix socket named by $NOTIFY_SOCKET (Type=notify
// units). Without that variable it does nothing. A leading "@" names an
// abstract socket. Hand-written: the protocol is one datagram, a library
// (coreos/go-systemd) would bring more than it saves.
type notifier struct{ addr string }

func newNotifier(getenv func(string) string) notifier {
	a := getenv("NOTIFY_SOCKET")
	if strings.HasPrefix(a, "@") {
		a = "\x00" + a[1:]
	}
	return notifier{addr: a}
}

// notify sends state lines ("READY=1", "STOPPING=1", "STATUS=...");
// errors are returned for tests and otherwise ignored: a missing
// listener must not stop the edge.
func (n notifier) notify(state ...string) error {
	if n.addr == "" {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(strings.Join(state, "\n")))
	return err
}
