package netproxy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInternal(t *testing.T) {
	for addr, want := range map[string]bool{
		// IPv4 ranges, at their edges.
		"10.0.0.0": true, "10.255.255.255": true, "9.255.255.255": false, "11.0.0.0": false,
		"172.16.0.0": true, "172.31.255.255": true, "172.15.255.255": false, "172.32.0.0": false,
		"192.168.0.0": true, "192.168.255.255": true, "192.167.255.255": false, "192.169.0.0": false,
		"127.0.0.1": true, "127.255.255.255": true, "128.0.0.0": false,
		"169.254.169.254": true, "169.254.0.0": true, "169.253.255.255": false, "169.255.0.0": false,
		"0.0.0.0": true, "0.1.2.3": true,
		"100.64.0.0": true, "100.127.255.255": true, "100.63.255.255": false, "100.128.0.0": false,
		"224.0.0.1": true, "8.8.8.8": false, "203.0.113.5": false,
		"192.0.0.0": true, "192.0.0.2": true, "192.0.0.255": true, "191.255.255.255": false, "192.0.1.0": false,
		"198.18.0.0": true, "198.19.255.255": true, "198.17.255.255": false, "198.20.0.0": false,
		"240.0.0.0": true, "255.255.255.255": true, "239.255.255.255": true, "223.255.255.255": false,
		// IPv6 ranges.
		"::": true, "::1": true,
		"fc00::": true, "fdff:ffff::1": true, "fbff::1": false, "fe00::1": false,
		"fe80::1": true, "febf::1": true, "fec0::1": true, "feff::1": true, "ff00::": true, "fe7f::1": false,
		"ff02::1": true, "64:ff9b:1::1": true,
		"2001:4860:4860::8888": false, "2606:4700::1111": false,
		// IPv6 forms that carry an IPv4 address.
		"::ffff:127.0.0.1": true, "::ffff:169.254.169.254": true, "::ffff:10.1.2.3": true, "::ffff:8.8.8.8": false,
		"::ffff:0:127.0.0.1": true, "::ffff:0:8.8.8.8": false,
		"::127.0.0.1": true, "::10.0.0.1": true, "::192.168.1.1": true, "::8.8.8.8": false,
		"64:ff9b::127.0.0.1": true, "64:ff9b::a9fe:a9fe": true, "64:ff9b::100.64.0.1": true, "64:ff9b::8.8.8.8": false,
		"2002:7f00:1::": true, "2002:a9fe:a9fe::1": true, "2002:c0a8:101::": true, "2002:0808:0808::1": false,
		"::ffff:198.18.0.1": true, "64:ff9b::240.0.0.1": true, "2002:c000:0002::": true,
	} {
		assert.Equal(t, want, Internal(netip.MustParseAddr(addr)), addr)
	}
}

// ssrfProxy is a proxy whose names resolve by hosts, in the order given,
// and whose dials are recorded: an address in public is dialled at the
// loopback server instead (it stands for a host on the Internet), any
// other fails.
func ssrfProxy(t *testing.T, patterns []string, hosts map[string][]string, public map[string]bool, serverPort string) (*Proxy, string, func() []string) {
	t.Helper()
	p, addr := start(t, patterns, nil)
	p.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		var addrs []netip.Addr
		for _, a := range hosts[host] {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
		if addrs == nil {
			return nil, fmt.Errorf("no such host %s", host)
		}
		return addrs, nil
	}
	var mu sync.Mutex
	var dialled []string
	p.dialAddr = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, a.Addr().String())
		mu.Unlock()
		if public[a.Addr().String()] {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", "127.0.0.1:"+serverPort)
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("%s unreachable", a)}
	}
	return p, addr, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), dialled...)
	}
}

// A wildcard-matched name that resolves to public and internal addresses
// is served from a public one, or not at all: an internal address, in any
// IPv6 form that carries one, is never dialled. An exact pattern may lead
// to an internal address.
func TestProxyWildcardNeverDialsInternal(t *testing.T) {
	plain := server(t, false)
	p, addr, dialled := ssrfProxy(t, []string{"*.wild.test", "exact.test"}, map[string][]string{
		"first.wild.test":  {"203.0.113.5", "127.0.0.1"},
		"second.wild.test": {"127.0.0.1", "::ffff:169.254.169.254", "203.0.113.5"},
		"down.wild.test":   {"198.51.100.7", "10.0.0.1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "::127.0.0.1"},
		"only.wild.test":   {"169.254.169.254", "::ffff:0:10.0.0.1", "fd00::1", "198.18.0.1", "240.0.0.1", "192.0.0.2"},
		"exact.test":       {"10.0.0.1", "203.0.113.5"},
	}, map[string]bool{"203.0.113.5": true}, port(plain))
	c := client(t, p, addr)

	status, body := get(t, c, "http://first.wild.test:"+port(plain)+"/a")
	assert.Equal(t, 200, status, body)
	status, body = get(t, c, "http://second.wild.test:"+port(plain)+"/b")
	assert.Equal(t, 200, status, body)
	assert.Equal(t, []string{"203.0.113.5", "203.0.113.5"}, dialled())

	// The public address is down: the internal ones are not tried instead.
	status, body = get(t, c, "http://down.wild.test/")
	assert.Equal(t, 502, status, body)
	assert.Equal(t, []string{"203.0.113.5", "203.0.113.5", "198.51.100.7"}, dialled())

	// Nothing but internal addresses: a refusal.
	status, body = get(t, c, "http://only.wild.test/")
	assert.Equal(t, 403, status)
	assert.True(t, strings.Contains(body, "internal address"), body)
	_, err := c.Get("https://only.wild.test/")
	assert.Error(t, err)
	assert.Equal(t, []string{"203.0.113.5", "203.0.113.5", "198.51.100.7"}, dialled())

	// An exact pattern tries its addresses in order, internal ones too.
	status, _ = get(t, c, "http://exact.test:"+port(plain)+"/e")
	assert.Equal(t, 200, status)
	assert.Equal(t, []string{"203.0.113.5", "203.0.113.5", "198.51.100.7", "10.0.0.1", "203.0.113.5"}, dialled())
	require.Equal(t, []string{"only.wild.test:80", "only.wild.test:443"}, p.Denied())
}

// A wildcard never leads to the host's own addresses either: a public one on
// an interface reaches the host's services that listen on every address, as
// loopback does. Nor to an IPv6 form that carries one. An exact pattern may.
func TestProxyWildcardNeverDialsTheHost(t *testing.T) {
	plain := server(t, false)
	p, addr, dialled := ssrfProxy(t, []string{"*.wild.test", "exact.test"}, map[string][]string{
		"self.wild.test":  {"203.0.113.9"},
		"self6.wild.test": {"2001:db8::9"},
		"nat64.wild.test": {"64:ff9b::cb00:7109", "2002:cb00:7109::1"},
		"mixed.wild.test": {"203.0.113.9", "203.0.113.5"},
		"exact.test":      {"203.0.113.9"},
	}, map[string]bool{"203.0.113.5": true, "203.0.113.9": true, "2001:db8::9": true,
		"64:ff9b::cb00:7109": true, "2002:cb00:7109::1": true}, port(plain))
	p.hostAddrs = func() ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("2001:db8::9")}, nil
	}
	c := client(t, p, addr)

	for _, name := range []string{"self.wild.test", "self6.wild.test", "nat64.wild.test"} {
		status, body := get(t, c, "http://"+name+":"+port(plain)+"/s")
		assert.Equal(t, 403, status, "%s: %s", name, body)
		assert.Contains(t, body, "one of this host's", name)
	}
	assert.Empty(t, dialled(), "the host's own addresses are never dialled through a wildcard")

	status, body := get(t, c, "http://mixed.wild.test:"+port(plain)+"/m")
	assert.Equal(t, 200, status, body)
	status, body = get(t, c, "http://exact.test:"+port(plain)+"/e")
	assert.Equal(t, 200, status, body)
	assert.Equal(t, []string{"203.0.113.5", "203.0.113.9"}, dialled())
	p2 := p.Denied()
	assert.Equal(t, []string{"self.wild.test:" + port(plain), "self6.wild.test:" + port(plain), "nat64.wild.test:" + port(plain)}, p2)
}

// The host's addresses are those of its interfaces: loopback among them.
func TestInterfaceAddrs(t *testing.T) {
	own, err := interfaceAddrs()
	require.NoError(t, err)
	assert.Contains(t, own, netip.MustParseAddr("127.0.0.1"))
	assert.True(t, hostAddr(netip.MustParseAddr("::ffff:127.0.0.1"), own))
	assert.False(t, hostAddr(netip.MustParseAddr("203.0.113.250"), own))
}
