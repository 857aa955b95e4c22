// Package systemdunit checks what deploy/systemd/dealer-edge.service does
// to the edge at run time.
package systemdunit

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

// unitHas reports whether the unit sets key=value.
func unitHas(t *testing.T, key, value string) bool {
	t.Helper()
	f, err := os.Open(filepath.Join(edgeproc.RepoRoot(), "deploy", "systemd", "dealer-edge.service"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == key+"="+value {
			return true
		}
	}
	return false
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// backlog reads the accept-queue size of the listening socket on port
// (ss's Send-Q of a LISTEN socket), 0 while none listens.
func backlog(t *testing.T, port int) int {
	t.Helper()
	out, err := exec.Command("ss", "-ltnH", "sport = :"+strconv.Itoa(port)).Output()
	if err != nil {
		t.Skipf("ss: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(f[2])
	return n
}

// The unit's ProcSubset=pid hides /proc/sys, where Go's net package reads
// net.core.somaxconn for every listen(2) backlog; without it Go falls back
// to syscall.SOMAXCONN, 128. The public listener of an edge run by the unit
// then queues at most 128 connections not yet accepted (4096 on a default
// kernel since 5.4): a burst of new connections (a load balancer
// reconnecting, a restart of many clients, an accept pause on EMFILE)
// overflows it and the kernel drops the SYNs, which clients retry after 1 s,
// 3 s, ... The test runs the edge with /proc mounted as the unit mounts it
// and wants the kernel's somaxconn as the backlog.
func TestUnitKeepsKernelListenBacklog(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private /proc (unshare -m)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	raw, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		t.Skip(err)
	}
	want, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	want = min(want, 65535)

	bin := edgeproc.Binary(t)
	pub, adm := freePort(t), freePort(t)
	args := []string{bin, "--demo", "--listen", "127.0.0.1:" + strconv.Itoa(pub), "--admin-listen", "127.0.0.1:" + strconv.Itoa(adm)}
	var cmd *exec.Cmd
	if unitHas(t, "ProcSubset", "pid") {
		// The /proc the unit gives its process (ProcSubset=pid: subset=pid).
		cmd = exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c",
			`mount -t proc -o subset=pid proc /proc && exec "$@"`, "sh"}, args...)...)
	} else {
		cmd = exec.Command(args[0], args[1:]...)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	got := 0
	for deadline := time.Now().Add(20 * time.Second); got == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = backlog(t, pub)
	}
	if got != want {
		t.Errorf("public listener backlog %d under the unit's /proc, want the kernel's net.core.somaxconn %d (ProcSubset=pid hides /proc/sys/net/core/somaxconn; Go then uses 128)", got, want)
	}
}
