//go:build linux && cgo

package sandboxexec

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npRequireNetns skips (or, on CI, fails) a test that needs the call's
// network namespace.
func npRequireNetns(t *testing.T) {
	t.Helper()
	lxRequireFeature(t, requireSandbox(t).NetworkNamespace, "network namespaces")
}

// npServers are host-side HTTP and TLS servers on 127.0.0.1 that answer
// "hello from PATH".
func npServers(t *testing.T) (plain, secure *httptest.Server) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s", r.URL.Path) })
	plain, secure = httptest.NewServer(h), httptest.NewTLSServer(h)
	t.Cleanup(plain.Close)
	t.Cleanup(secure.Close)
	return plain, secure
}

// npLocalhost is u with its host named localhost.
func npLocalhost(u string) string {
	p, _ := url.Parse(u)
	p.Host = "localhost:" + p.Port()
	return p.String()
}

var npPolicy = SandboxPolicy{AllowedDomains: []string{"localhost"}}

// Through the proxy, curl, Python and a Go program reach an allowed name,
// over plain HTTP (an absolute-URI request) and TLS (CONNECT); the same
// servers by IP address are refused and listed in DeniedHosts.
func TestNetworkProxyClients(t *testing.T) {
	npRequireNetns(t)
	plain, secure := npServers(t)
	root := lxRealDir(t)
	httpURL, tlsURL := npLocalhost(plain.URL)+"/p", npLocalhost(secure.URL)+"/t"

	t.Run("curl", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed")
		}
		out, err := lxRun(t, []string{"curl", "-sS", "-k", httpURL, tlsURL}, []string{root}, npPolicy)
		lxRequireOK(t, out, err)
		assert.Equal(t, "hello from /phello from /t", out.Stdout)
		assert.Nil(t, out.DeniedHosts)
	})
	t.Run("python", func(t *testing.T) {
		out, err := lxRun(t, lxPy(t, `
import ssl, urllib.request
ctx = ssl._create_unverified_context()
for u in sys.argv[1:]:
    print(urllib.request.urlopen(u, context=ctx, timeout=10).read().decode())
`, httpURL, tlsURL), []string{root}, npPolicy)
		lxRequireOK(t, out, err)
		assert.Equal(t, "hello from /p\nhello from /t\n", out.Stdout)
	})
	t.Run("go", func(t *testing.T) {
		exe, err := os.Executable()
		require.NoError(t, err)
		out, err := lxRun(t, []string{exe, "-test.run=^TestNetworkProxyGoClient$", "-test.v"}, []string{root}, npPolicy,
			WithEnv(append(os.Environ(), npGoClientEnv+"="+httpURL+" "+tlsURL)))
		lxRequireOK(t, out, err)
		assert.Contains(t, out.Stdout, "hello from /p")
		assert.Contains(t, out.Stdout, "hello from /t")
	})
	t.Run("by address", func(t *testing.T) {
		out, err := lxRun(t, lxPy(t, `
import ssl, urllib.request, urllib.error
for u in sys.argv[1:]:
    try:
        urllib.request.urlopen(u, context=ssl._create_unverified_context(), timeout=10)
        print("reached", u)
    except (urllib.error.URLError, OSError) as e:
        print("refused", e)
sys.exit(1)
`, plain.URL, secure.URL), []string{root}, npPolicy)
		lxRequireDenied(t, out, err)
		assert.NotContains(t, out.Stdout, "reached")
		assert.Equal(t, []string{strings.TrimPrefix(plain.URL, "http://"), strings.TrimPrefix(secure.URL, "https://")}, out.DeniedHosts)
	})
}

const npGoClientEnv = "SANDBOXEXEC_TEST_GO_CLIENT"

// TestNetworkProxyGoClient is the Go program of TestNetworkProxyClients,
// run inside the sandbox. Go's ProxyFromEnvironment never proxies
// localhost, so the proxy is taken from the variables the call set.
func TestNetworkProxyGoClient(t *testing.T) {
	urls := os.Getenv(npGoClientEnv)
	if urls == "" {
		t.Skip("run by TestNetworkProxyClients")
	}
	proxy, err := url.Parse(os.Getenv("HTTPS_PROXY"))
	require.NoError(t, err)
	tr := &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	for _, u := range strings.Fields(urls) {
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(u)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		fmt.Println(string(b))
	}
}

// Nothing but the proxy is reachable: a direct TCP connection (to the host's
// server, or anything), UDP, raw sockets, and the proxy without its
// credential all fail.
func TestNetworkProxyNothingElse(t *testing.T) {
	npRequireNetns(t)
	plain, _ := npServers(t)
	port := plain.URL[strings.LastIndexByte(plain.URL, ':')+1:]
	// An abstract UNIX socket of the host's, which names no file: it is
	// its network namespace's, and the command's has none.
	abstract, err := net.Listen("unix", "@sandboxexec-test-host-"+port)
	require.NoError(t, err)
	defer abstract.Close()
	res, out := lxPyRun(t, []string{lxRealDir(t)}, npPolicy, `
port = int(sys.argv[1])
def tcp(host, p):
    s = socket.create_connection((host, p), timeout=3)
    s.close()
attempt("direct_host", lambda: tcp("127.0.0.1", port))
attempt("direct_out", lambda: tcp("192.0.2.1", 80))
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("192.0.2.1", 53))
attempt("udp_out", udp)
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
def abstract():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.connect(b"\0sandboxexec-test-host-" + sys.argv[1].encode())
attempt("host_abstract", abstract)
def no_credential():
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(b"GET http://localhost:%d/x HTTP/1.1\r\nHost: localhost:%d\r\n\r\n" % (port, port))
    status = s.recv(100).split(b"\r\n")[0]
    if b" 407 " not in status:
        raise OSError(0, "answered " + status.decode())
attempt("no_credential", no_credential)
`, port)
	assert.Equal(t, "ECONNREFUSED", res["direct_host"], "%s", out.Stdout)
	assert.Equal(t, "ENETUNREACH", res["direct_out"])
	assert.Equal(t, "ENETUNREACH", res["udp_out"])
	assert.Equal(t, "EPERM", res["raw"])
	assert.Equal(t, "EPERM", res["unix"])
	assert.Equal(t, "EPERM", res["netlink"])
	// Not found: one found is refused otherwise (EPERM, Landlock's scope,
	// where the zero policy runs in the host's namespace).
	assert.Equal(t, "ECONNREFUSED", res["host_abstract"])
	assert.Equal(t, "OK", res["no_credential"], "refused with 407")
}

// SOCKS5 (socks5h: names resolved by the proxy): an allowed name works, an
// IP address or a name the policy does not list is refused with reply 2.
func TestNetworkProxySOCKS5(t *testing.T) {
	npRequireNetns(t)
	plain, _ := npServers(t)
	port := plain.URL[strings.LastIndexByte(plain.URL, ':')+1:]
	res, out := lxPyRun(t, []string{lxRealDir(t)}, npPolicy, `
import os, struct, urllib.parse
port = int(sys.argv[1])
u = urllib.parse.urlparse(os.environ["ALL_PROXY"])
def socks(atyp, addr):
    s = socket.create_connection((u.hostname, u.port), timeout=5)
    s.sendall(b"\x05\x01\x02")
    if s.recv(2) != b"\x05\x02":
        raise OSError(0, "no username/password method")
    user, pw = u.username.encode(), urllib.parse.unquote(u.password).encode()
    s.sendall(b"\x01" + bytes([len(user)]) + user + bytes([len(pw)]) + pw)
    if s.recv(2) != b"\x01\x00":
        raise OSError(0, "auth refused")
    s.sendall(b"\x05\x01\x00" + atyp + addr + struct.pack(">H", port))
    reply = s.recv(10)
    if reply[1] != 0:
        raise OSError(0, "reply %d" % reply[1])
    s.sendall(b"GET /s HTTP/1.0\r\nHost: localhost\r\n\r\n")
    if b"hello from /s" not in s.recv(4096):
        raise OSError(0, "no answer")
attempt("allowed", lambda: socks(b"\x03", bytes([9]) + b"localhost"))
attempt("ip", lambda: socks(b"\x01", socket.inet_aton("127.0.0.1")))
attempt("other", lambda: socks(b"\x03", bytes([11]) + b"example.com"))
`, port)
	assert.Equal(t, "OK", res["allowed"], "%s", out.Stdout)
	assert.Contains(t, out.Stdout, "ip=0 reply 2")
	assert.Contains(t, out.Stdout, "other=0 reply 2")
	assert.Contains(t, out.DeniedHosts, "127.0.0.1:"+port)
	assert.Contains(t, out.DeniedHosts, "example.com:"+port)
}

// The variables the command gets: every proxy variable, with a credential,
// and nothing that routes around the proxy, in any letter case (Python's
// urllib reads No_Proxy; found in review: it sent requests around the
// proxy, where they reached nothing).
func TestNetworkProxyEnvironment(t *testing.T) {
	npRequireNetns(t)
	out, err := lxRun(t, []string{"env"}, []string{lxRealDir(t)}, npPolicy,
		WithEnv([]string{"NO_PROXY=*", "no_proxy=*", "HTTP_PROXY=http://elsewhere:1", "PATH=/usr/bin:/bin",
			"No_Proxy=*", "Https_Proxy=http://user:pass@elsewhere:2", "FTP_PROXY=http://user:pass@elsewhere:3",
			"WSS_PROXY=http://user:pass@elsewhere:4", "npm_config_https_proxy=http://user:pass@elsewhere:5",
			"NODE_USE_ENV_PROXY=1"}))
	lxRequireOK(t, out, err)
	assert.NotRegexp(t, "(?mi)^no_proxy=", out.Stdout)
	assert.NotContains(t, out.Stdout, "user:pass", "the host's proxies, of any scheme or tool, with their password")
	assert.Contains(t, out.Stdout, "NODE_USE_ENV_PROXY=1\n", "a flag that names no proxy stays")
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		assert.Regexp(t, "(?m)^"+name+"=[a-z0-9]+://sbx:[^@]+@127\\.0\\.0\\.1:3128$", out.Stdout)
	}
	assert.NotContains(t, out.Stdout, "NO_PROXY")
	assert.NotContains(t, out.Stdout, "no_proxy")
	assert.NotContains(t, out.Stdout, "elsewhere")
	assert.Contains(t, out.Stdout, "socks5h://")
}

// The proxy is gone with the call: goroutines and descriptors of every
// kind come back to their baseline after 100 calls. The baseline is taken
// once the namespaces made ahead (netnsSpareCount, each with its listener)
// are ready: they live as long as the process, and each call that takes
// one is followed by a new one. Standbys (each with a namespace and a
// listener too) and kept TMPDIRs (each with its rulesets) are dropped
// before each look.
func TestNetworkProxyNoLeaks(t *testing.T) {
	npRequireNetns(t)
	plain, _ := npServers(t)
	root := lxRealDir(t)
	// A finished exchange, a tunnel left open and a connection that never
	// sends its request.
	script := lxPy(t, `
import base64, os, urllib.parse, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=10).read()
held = socket.create_connection(("127.0.0.1", 3128))
tunnel = socket.create_connection(("127.0.0.1", 3128))
p = urllib.parse.urlparse(os.environ["HTTPS_PROXY"])
cred = base64.b64encode(("%s:%s" % (p.username, p.password)).encode())
tunnel.sendall(b"CONNECT localhost:%d HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n" % (urllib.parse.urlparse(sys.argv[1]).port, cred))
if b" 200 " not in tunnel.recv(100):
    sys.exit("no tunnel")
`, npLocalhost(plain.URL)+"/x")
	// Three calls: the third takes a standby.
	for i := 0; i < 3; i++ {
		out, err := lxRun(t, script, []string{root}, npPolicy)
		lxRequireOK(t, out, err)
		sbSettle(t)
	}
	waitNetnsSpare()
	mnsDropKept(t) // kept mount namespaces are not the proxy's
	tmpDropKept()  // nor are kept TMPDIRs and their rulesets
	npDropSplicePipes()
	goroutines, fds := runtime.NumGoroutine(), npOpenFds(t)
	for i := 0; i < 100; i++ {
		out, err := lxRun(t, script, []string{root}, npPolicy)
		lxRequireOK(t, out, err)
	}
	waitNetnsSpare()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && (runtime.NumGoroutine() > goroutines || npFdsGrown(fds, npOpenFds(t)) != nil) {
		time.Sleep(20 * time.Millisecond)
		mnsDropKept(t)
		tmpDropKept()
		npDropSplicePipes()
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines")
	assert.Empty(t, npFdsGrown(fds, npOpenFds(t)), "descriptors by kind, before %v", fds)
}

// npDropSplicePipes closes the pipes the net package keeps for splicing
// between connections (the proxy's relay): they sit in a sync.Pool, and are
// closed by a finalizer once two collections have emptied it.
func npDropSplicePipes() {
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond) // the finalizers' goroutine
}

// npOpenFds counts this process's descriptors by kind: "socket", "pipe",
// "net" (a namespace), "anon_inode:[eventpoll]", ... for the kernel's
// objects, and by path for files.
func npOpenFds(t *testing.T) map[string]int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, e := range entries {
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the directory's own descriptor, closed since
		}
		if kind, num, ok := strings.Cut(l, ":["); ok && strings.Trim(num, "0123456789]") == "" {
			l = kind // socket:[1234]: the object's kind, not which one
		}
		kinds[l]++
	}
	return kinds
}

// npFdsGrown lists the kinds of descriptor of which after has more than
// before, with both counts; nil when none.
func npFdsGrown(before, after map[string]int) []string {
	var grown []string
	for kind, n := range after {
		if n > before[kind] {
			grown = append(grown, fmt.Sprintf("%s: %d -> %d", kind, before[kind], n))
		}
	}
	slices.Sort(grown)
	return grown
}

// A host that cannot make the namespace fails closed; NetworkAccess with
// AllowedDomains is an error; bad patterns are errors that name them.
func TestNetworkProxyPolicyErrors(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	_, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{NetworkAccess: true, AllowedDomains: []string{"example.com"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NetworkAccess")
	for _, bad := range []string{"", "127.0.0.1", "example.com:443", "https://example.com", "example.com/x", "*"} {
		_, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{AllowedDomains: []string{bad}})
		require.Error(t, err, "%q", bad)
		assert.Contains(t, err.Error(), "AllowedDomains")
	}
	sbOff(t) // a standby in the making reads it
	old := forcedMountMode
	forcedMountMode = mountsNone
	t.Cleanup(func() { forcedMountMode = old })
	_, err = lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{AllowedDomains: []string{"example.com"}, BestEffort: true})
	require.ErrorIs(t, err, ErrSandboxUnavailable)
	assert.Contains(t, err.Error(), "network namespace")
}

// Every call has a network namespace of its own, whether made ahead, by a
// standby or by the child: nothing one call leaves there is seen by the
// next (a socket it bound, the TIME_WAIT sockets of its connections), and
// calls in flight together each reach their own proxy.
func TestNetworkProxyNamespacePerCall(t *testing.T) {
	npRequireNetns(t)
	plain, _ := npServers(t)
	root := lxRealDir(t)
	script := lxPy(t, `
import time, urllib.request
# A call's connections through its proxy leave TIME_WAIT sockets in its
# namespace for a minute: none is there in a namespace no call had.
left = [l for l in open("/proc/self/net/tcp").read().splitlines()[1:] if l.split()[3] == "06"]
if left:
    sys.exit("another call's TIME_WAIT sockets: %r" % left)
print(os.readlink("/proc/self/ns/net"))
s = socket.socket()
s.bind(("127.0.0.1", 4000))
s.listen()
print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
if len(sys.argv) > 2:
    time.sleep(0.3) # alive while the others run
`, npLocalhost(plain.URL)+"/n")
	// Namespaces alive at once differ; one freed may give its inode number
	// to a later one, and the bind shows that nothing of it is left.
	for round := 0; round < 4; round++ {
		seen := map[string]bool{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < round; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := lxRun(t, append(slices.Clip(script), "hold"), []string{root}, npPolicy)
				lxRequireOK(t, out, err)
				ns, rest, _ := strings.Cut(out.Stdout, "\n")
				assert.Equal(t, "hello from /n\n", rest)
				mu.Lock()
				assert.False(t, seen[ns], "namespace %s used by two calls at once", ns)
				seen[ns] = true
				mu.Unlock()
			}()
		}
		wg.Wait()
		out, err := lxRun(t, script, []string{root}, npPolicy)
		lxRequireOK(t, out, err)
	}
}

// A hostile command (a header without end, 1,000 connections, request
// lines never finished) cannot keep the call past its timeout. The big
// header goes first, while the proxy has free slots, so that it is the
// head limit that refuses it (431), not the connection limit.
func TestNetworkProxyHostileCommand(t *testing.T) {
	npRequireNetns(t)
	script := lxPy(t, `
import resource, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1100), hard))
big = socket.create_connection(("127.0.0.1", 3128), timeout=10)
big.sendall(b"GET http://localhost/ HTTP/1.1\r\nX-Big: " + b"a" * (48 << 10))
print("answer:", big.recv(100).split(b"\r\n")[0].decode(), flush=True)
sent = 0
try:
    while sent < 1 << 30:
        big.sendall(b"a" * 65536)
        sent += 65536
except OSError as e:
    print("header cut after %d bytes: %d" % (sent, e.errno), flush=True)
conns = []
for i in range(1000):
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
        s.sendall(b"GET http://localhost/ HTTP/1.1\r\nX: ")
    except OSError:
        continue
    conns.append(s)
print("opened", len(conns), flush=True)
time.sleep(60)
`)
	start := time.Now()
	// The timeout leaves a loaded machine time to open the 1,000
	// connections; the command then sleeps until the call ends it.
	out, err := lxRunParams(t, ExecParams{Command: script, TimeoutMs: ptrU64Linux(8000)}, []string{lxRealDir(t)}, npPolicy)
	require.NoError(t, err)
	assert.True(t, out.TimedOut, "%+v", out)
	assert.Less(t, time.Since(start), 15*time.Second)
	assert.Contains(t, out.Stdout, "answer: HTTP/1.1 431 Request Header Fields Too Large\n")
	assert.Regexp(t, `header cut after [0-9]{1,8} bytes`, out.Stdout, "the proxy stopped reading before 100 MB")
	assert.Contains(t, out.Stdout, "opened 1000")
}
