package netproxy

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
)

// rootedChildEnv marks the test binary re-run in its own mount and
// network namespaces; its value is the resolv.conf ndots to use.
const rootedChildEnv = "SANDBOXEXEC_NETPROXY_ROOTED_CHILD"

// The proxy looks names up rooted: the host's resolv.conf search list
// never turns an allowed name into another one (with *.allowed.test
// allowed and nx.allowed.test nonexistent, nx.allowed.test.corp.internal
// was resolved and dialled), whether the name is tried as it is first
// (ndots:1) or the search list is (ndots:5, as in Kubernetes). localhost
// still resolves from /etc/hosts, though neither Go's resolver nor
// glibc's finds "localhost." there. In namespaces of the test's own: a DNS
// server on 127.0.0.1:53, a resolv.conf bound over /etc/resolv.conf; the
// DNS lookups by Go's resolver, and by glibc's where cgo is built in.
func TestProxyResolvesRooted(t *testing.T) {
	if ndots := os.Getenv(rootedChildEnv); ndots != "" {
		resolveRootedChild(t, ndots)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, for unshare -mn")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare (util-linux)")
	}
	if out, err := exec.Command(unshare, "-mn", "true").CombinedOutput(); err != nil {
		t.Skipf("unshare -mn: %v: %s", err, out)
	}
	for _, tc := range []struct{ ndots, resolver string }{{"1", "go"}, {"5", "go"}, {"5", "cgo"}} {
		t.Run("ndots"+tc.ndots+"/"+tc.resolver, func(t *testing.T) {
			cmd := exec.Command(unshare, "-mn", os.Args[0], "-test.run=^TestProxyResolvesRooted$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), rootedChildEnv+"="+tc.ndots, "GODEBUG=netdns="+tc.resolver)
			out, err := cmd.CombinedOutput()
			t.Logf("child:\n%s", out)
			require.NoError(t, err)
			assert.Contains(t, string(out), "--- PASS: TestProxyResolvesRooted")
		})
	}
}

func resolveRootedChild(t *testing.T, ndots string) {
	// lo up, for the DNS server.
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	require.NoError(t, err)
	require.NoError(t, unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr))
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	require.NoError(t, unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr))

	conf := filepath.Join(t.TempDir(), "resolv.conf")
	require.NoError(t, os.WriteFile(conf,
		[]byte("nameserver 127.0.0.1\nsearch corp.internal\noptions ndots:"+ndots+" timeout:1 attempts:1\n"), 0o644))
	require.NoError(t, unix.Mount(conf, "/etc/resolv.conf", "", unix.MS_BIND, ""))

	pc, err := net.ListenPacket("udp", "127.0.0.1:53")
	require.NoError(t, err)
	defer pc.Close()
	var mu sync.Mutex
	var asked []string
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var msg dnsmessage.Parser
			h, err := msg.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := msg.Question()
			if err != nil {
				continue
			}
			mu.Lock()
			asked = append(asked, q.Name.String()+" "+q.Type.String())
			mu.Unlock()
			resp := dnsmessage.Message{
				Header: dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true,
					RecursionDesired: h.RecursionDesired, RecursionAvailable: true},
				Questions: []dnsmessage.Question{q},
			}
			switch {
			case !strings.EqualFold(q.Name.String(), "nx.allowed.test.corp.internal."):
				resp.RCode = dnsmessage.RCodeNameError
			case q.Type == dnsmessage.TypeA:
				resp.Answers = []dnsmessage.Resource{{
					Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60},
					Body:   &dnsmessage.AResource{A: [4]byte{203, 0, 113, 7}},
				}}
			}
			if out, err := resp.Pack(); err == nil {
				pc.WriteTo(out, from)
			}
		}
	}()

	p, err := New([]string{"*.allowed.test", "localhost"})
	require.NoError(t, err)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	addrs, err := p.Resolve(ctx, "nx.allowed.test")
	assert.Error(t, err, "resolved to %v", addrs)
	mu.Lock()
	t.Logf("asked: %q", asked)
	assert.NotEmpty(t, asked, "the DNS server was asked")
	for _, q := range asked {
		name, _, _ := strings.Cut(q, " ")
		assert.True(t, strings.EqualFold(name, "nx.allowed.test."), "asked for %s", q)
	}
	asked = nil
	mu.Unlock()

	addrs, err = p.Resolve(ctx, "localhost")
	require.NoError(t, err)
	require.NotEmpty(t, addrs)
	for _, a := range addrs {
		assert.True(t, a.IsLoopback(), "localhost is %v", addrs)
	}
	mu.Lock()
	assert.Empty(t, asked, "localhost comes from /etc/hosts")
	mu.Unlock()
}
