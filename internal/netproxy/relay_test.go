package netproxy

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relayDest is a destination on the loopback that serves one connection
// with serve, and reports when serve returned.
func relayDest(t *testing.T, serve func(c *net.TCPConn)) (port string, done <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		serve(c.(*net.TCPConn))
	}()
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return port, ch
}

// relayTunnel opens a tunnel to allowed.test:port through the proxy, by
// CONNECT or SOCKS5, sending first with the request; it returns the
// client's connection and a reader for what comes back.
func relayTunnel(t *testing.T, p *Proxy, addr, kind, port, first string) (*net.TCPConn, io.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	tc := c.(*net.TCPConn)
	if kind == "socks" {
		n, err := strconv.ParseUint(port, 10, 16)
		require.NoError(t, err)
		tc.Close()
		rep, sc := socks(t, addr, User, p.token, socksDomain, domain("allowed.test"), uint16(n))
		require.Equal(t, byte(0), rep)
		t.Cleanup(func() { sc.Close() })
		sc.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.WriteString(sc, first)
		require.NoError(t, err)
		return sc.(*net.TCPConn), sc
	}
	// The payload follows the head in one write: the proxy passes on what
	// it read past the head.
	fmt.Fprintf(c, "CONNECT allowed.test:%s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n%s",
		port, base64.StdEncoding.EncodeToString([]byte("sbx:"+p.token)), first)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	return tc, br
}

// A client that shuts its write side still gets the destination's reply,
// which the destination sends after reading to the end.
func TestRelayClientHalfClose(t *testing.T) {
	for _, kind := range []string{"connect", "socks"} {
		t.Run(kind, func(t *testing.T) {
			var got []byte
			port, done := relayDest(t, func(c *net.TCPConn) {
				got, _ = io.ReadAll(c)
				fmt.Fprintf(c, "read %d bytes", len(got))
			})
			p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
			c, r := relayTunnel(t, p, addr, kind, port, "first ")
			_, err := io.WriteString(c, "second")
			require.NoError(t, err)
			require.NoError(t, c.CloseWrite())
			reply, err := io.ReadAll(r)
			require.NoError(t, err)
			assert.Equal(t, "read 12 bytes", string(reply))
			<-done
			assert.Equal(t, "first second", string(got))
		})
	}
}

// A destination that shuts its write side still gets what the client
// sends after reading to the end.
func TestRelayDestinationHalfClose(t *testing.T) {
	for _, kind := range []string{"connect", "socks"} {
		t.Run(kind, func(t *testing.T) {
			var got []byte
			port, done := relayDest(t, func(c *net.TCPConn) {
				io.WriteString(c, "hello")
				c.CloseWrite()
				got, _ = io.ReadAll(c)
			})
			p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
			c, r := relayTunnel(t, p, addr, kind, port, "")
			greeting, err := io.ReadAll(r)
			require.NoError(t, err)
			assert.Equal(t, "hello", string(greeting))
			_, err = io.WriteString(c, "after the end")
			require.NoError(t, err)
			require.NoError(t, c.CloseWrite())
			<-done
			assert.Equal(t, "after the end", string(got))
		})
	}
}

// A client that leaves in the middle of a plain request's body leaves a
// request the destination could only wait on: the proxy closes the
// destination's connection, and holds nothing for the client.
func TestProxyClientLeavesMidBody(t *testing.T) {
	got := make(chan string, 1)
	port, done := relayDest(t, func(c *net.TCPConn) {
		b, _ := io.ReadAll(c) // the rest of the body, until the proxy closes
		got <- string(b)
	})
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	fmt.Fprintf(c, "POST http://allowed.test:%s/up HTTP/1.1\r\nProxy-Authorization: Basic %s\r\nContent-Length: 100\r\n\r\nshort",
		port, base64.StdEncoding.EncodeToString([]byte("sbx:"+p.token)))
	time.Sleep(100 * time.Millisecond)
	c.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the destination still waits for the body of a client that left")
	}
	assert.Contains(t, <-got, "\r\n\r\nshort")
	assert.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.conns) == 0
	}, 5*time.Second, 10*time.Millisecond, "connections held")
}

// A known limit (docs/network-policy.md): what goes through a tunnel is
// the client's, the Host of a plain HTTP request inside included, so a
// virtual host behind an allowed name's address can be asked for another
// site. Only requests the proxy forwards itself get the checked Host.
func TestProxyTunnelCarriesTheClientsHost(t *testing.T) {
	for _, kind := range []string{"connect", "socks"} {
		hosts := make(chan string, 1)
		port, _ := relayDest(t, func(c *net.TCPConn) {
			req, err := http.ReadRequest(bufio.NewReader(c))
			if err == nil {
				hosts <- req.Host
			}
		})
		p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
		relayTunnel(t, p, addr, kind, port, "GET / HTTP/1.1\r\nHost: forbidden.test\r\n\r\n")
		assert.Equal(t, "forbidden.test", <-hosts, kind)
	}
}
