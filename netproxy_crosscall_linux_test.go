//go:build linux && cgo

package sandboxexec

// What one call with AllowedDomains can reach of another's proxy, tried
// against the kernel: a call's proxy, its listener and its credential are
// its own, and gone when it returns. TestUnprivilegedHostPolicies runs
// these again as nobody, where the namespaces are made in a user namespace
// and a process the command leaves outlives the call.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npTunnel is Python that opens a CONNECT tunnel through the call's proxy
// to localhost:PORT (sys.argv[1]) as tunnel(), with the call's credential,
// and asks for /t through it as get(tun).
const npTunnel = `
import base64, time
token = os.environ["HTTP_PROXY"].split(":")[2].split("@")[0]
def auth(tok):
    return b"Proxy-Authorization: Basic " + base64.b64encode(("sbx:" + tok).encode()) + b"\r\n"
def status(s):
    return s.recv(200).split(b"\r\n")[0].decode()
def tunnel(tok=token, port=sys.argv[1], timeout=5):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=timeout)
    s.sendall(b"CONNECT localhost:%s HTTP/1.1\r\n" % port.encode() + auth(tok) + b"\r\n")
    return s, status(s)
def get(s):
    s.sendall(b"GET /t HTTP/1.1\r\nHost: localhost\r\n\r\n")
    return status(s)
`

// A call's command learns no other call's credential (their environments
// are refused: /proc is the host's, and Landlock refuses another domain's
// environ), cannot join another call's network namespace, and its own
// proxy keeps to its own list: a name only the other call allows is
// refused, and listed in its DeniedHosts alone.
func TestNetworkProxyCallsApart(t *testing.T) {
	npRequireNetns(t)
	plain, _ := npServers(t)
	port := plain.URL[strings.LastIndexByte(plain.URL, ':')+1:]
	root := lxRealDir(t)
	ready, done := filepath.Join(root, "b-ready"), filepath.Join(root, "a-done")
	type result struct {
		out ExecToolCallOutput
		err error
	}
	b := make(chan result, 1)
	go func() {
		out, err := lxRun(t, lxPy(t, npTunnel+`
s, st = tunnel()
print("b_tunnel=" + st.replace(" ", "_"))
print("b_get=" + get(s).replace(" ", "_"))
open(sys.argv[2], "w").close()
deadline = time.time() + 10
while not os.path.exists(sys.argv[3]) and time.time() < deadline:
    time.sleep(0.02)
print("b_after=" + get(s).replace(" ", "_"))
`, port, ready, done), []string{root}, npPolicy)
		b <- result{out, err}
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 10*time.Second, 10*time.Millisecond)
	a, err := lxRun(t, lxPy(t, npTunnel+`
import glob, re
tokens, joined, refused = set(), [], {}
for d in glob.glob("/proc/[0-9]*"):
    try:
        for tok in re.findall(rb"sbx:([0-9a-f]{32})@", open(d + "/environ", "rb").read()):
            if tok.decode() != token:
                tokens.add(tok.decode())
    except OSError as e:
        refused[errno.errorcode.get(e.errno, e.errno)] = True
    try:
        fd = os.open(d + "/ns/net", os.O_RDONLY)
        if libc.setns(fd, 0x40000000) == 0 and os.readlink("/proc/thread-self/ns/net") != os.readlink("/proc/self/ns/net"):
            joined.append(d)
    except OSError:
        pass
print("a_tokens=%d" % len(tokens))
print("a_joined=%r" % joined)
for tok in tokens:
    print("a_with_other=" + tunnel(tok)[1].replace(" ", "_"))
print("a_own=" + tunnel()[1].replace(" ", "_"))
open(sys.argv[2], "w").close()
`, port, done), []string{root}, SandboxPolicy{AllowedDomains: []string{"a.test"}})
	os.WriteFile(done, nil, 0o644) // B waits no longer, whatever A did
	lxRequireOK(t, a, err)
	r := <-b
	lxRequireOK(t, r.out, r.err)
	t.Logf("A: %sB: %s", a.Stdout, r.out.Stdout)

	ra, rb := lxResults(a.Stdout), lxResults(r.out.Stdout)
	assert.Equal(t, "0", ra["a_tokens"], "A read another call's credential")
	assert.Equal(t, "[]", ra["a_joined"], "A joined another network namespace")
	assert.NotContains(t, a.Stdout, "a_with_other=")
	assert.Equal(t, "HTTP/1.1_403_Forbidden", ra["a_own"], "A's proxy allows only A's list")
	assert.Equal(t, []string{"localhost:" + port}, a.DeniedHosts)
	assert.Equal(t, "HTTP/1.1_200_Connection_established", rb["b_tunnel"])
	assert.Equal(t, "HTTP/1.1_200_OK", rb["b_get"])
	assert.Equal(t, "HTTP/1.1_200_OK", rb["b_after"], "B's tunnel outlived A's call")
	assert.Empty(t, r.out.DeniedHosts, "A's refusal in B's output")
}

// A process the command leaves behind (a host user's calls have no PID
// namespace, and often no cgroup, to end it) loses the call's proxy when
// the call returns: its open tunnel is closed, the listener is gone, and
// it reaches no later call's proxy, which listens in another namespace.
// Each attempt is stamped when it starts, so that one that began before
// the call returned, and got through, is not counted after it.
func TestNetworkProxyGoneWithItsCall(t *testing.T) {
	npRequireNetns(t)
	plain, _ := npServers(t)
	port := plain.URL[strings.LastIndexByte(plain.URL, ':')+1:]
	root := lxRealDir(t)
	log := filepath.Join(root, "left.log")
	out, err := lxRun(t, lxPy(t, npTunnel+`
log = sys.argv[2]
def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(1)
        os.close(2)
        tun, st = tunnel()
        note("tunnel " + st)
        deadline = time.time() + 4
        while time.time() < deadline:
            start, res = time.time(), []
            try:
                res.append("tun:" + get(tun))
            except Exception as e:
                res.append("tun:" + type(e).__name__)
            try:
                res.append("new:" + tunnel(timeout=0.5)[1])
            except Exception as e:
                res.append("new:" + type(e).__name__)
            note("%.6f %s" % (start, " ".join(res)))
            time.sleep(0.05)
        note("end")
        os._exit(0)
    os._exit(0)
os.wait()
deadline = time.time() + 10
while "tun:" not in (open(log).read() if os.path.exists(log) else "") and time.time() < deadline:
    time.sleep(0.02)
`, port, log), []string{root}, npPolicy)
	returned := float64(time.Now().UnixNano()) / 1e9
	lxRequireOK(t, out, err)
	// A later call, while the process left by the first is still trying.
	later, err := lxRun(t, lxPy(t, npTunnel+`
s, st = tunnel()
print("later_tunnel=" + st.replace(" ", "_"))
time.sleep(1)
print("later_get=" + get(s).replace(" ", "_"))
`, port), []string{root}, npPolicy)
	lxRequireOK(t, later, err)
	assert.Equal(t, "HTTP/1.1_200_OK", lxResults(later.Stdout)["later_get"])
	// The process ends itself within 4 s; one killed with its call (by a
	// root host's PID namespace, or the call's cgroup) writes no more.
	var logged string
	for last, quiet := "", time.Now(); time.Since(quiet) < time.Second; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(log)
		if logged = string(b); strings.HasSuffix(logged, "end\n") {
			break
		}
		if logged != last {
			last, quiet = logged, time.Now()
		}
	}
	lines := strings.Split(logged, "\n")
	t.Logf("returned at %.6f; the process left %d lines, from:\n%s", returned, len(lines), strings.Join(lines[:min(len(lines), 12)], "\n"))
	require.Contains(t, logged, "tunnel HTTP/1.1 200 Connection established")
	assert.Contains(t, logged, "tun:HTTP/1.1 200 OK", "the tunnel worked during the call")
	after := 0
	for _, line := range lines {
		stamp, rest, ok := strings.Cut(line, " ")
		at, err := strconv.ParseFloat(stamp, 64)
		if !ok || err != nil || at <= returned {
			continue
		}
		after++
		assert.NotContains(t, rest, " 200 ", "the proxy served past its call: %s", line)
	}
	t.Logf("%d attempts after the call returned", after)
}
