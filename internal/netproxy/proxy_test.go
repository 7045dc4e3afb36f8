package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// start serves a proxy for patterns on 127.0.0.1, with names resolved by
// hosts (every name not in it fails to resolve).
func start(t *testing.T, patterns []string, hosts map[string]string) (*Proxy, string) {
	t.Helper()
	p, err := New(patterns)
	require.NoError(t, err)
	p.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		if a, ok := hosts[host]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go p.Serve(l)
	t.Cleanup(func() { p.Close() })
	return p, l.Addr().String()
}

func server(t *testing.T, tlsToo bool) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Host != "" && !strings.HasPrefix(r.Host, "allowed.test:") && !strings.HasPrefix(r.Host, "127.0.0.1:") {
			fmt.Fprintf(w, "Host %s ", r.Host)
		}
		fmt.Fprintf(w, "%s %s %s auth=%q", r.Method, r.URL.Path, body, r.Header.Get("Proxy-Authorization"))
	})
	s := httptest.NewUnstartedServer(h)
	if tlsToo {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// client is an HTTP client that uses the proxy the way the command's
// variables tell it to.
func client(t *testing.T, p *Proxy, addr string) *http.Client {
	env := p.Env(addr)
	proxy, err := url.Parse(strings.TrimPrefix(env[0], "HTTP_PROXY="))
	require.NoError(t, err)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
}

func port(s *httptest.Server) string { return s.URL[strings.LastIndexByte(s.URL, ':')+1:] }

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestProxyHTTPAndConnect(t *testing.T) {
	plain, secure := server(t, false), server(t, true)
	p, addr := start(t, []string{"allowed.test", "*.wild.test"}, map[string]string{
		"allowed.test": "127.0.0.1", "a.wild.test": "127.0.0.1", "meta.wild.test": "169.254.169.254",
	})
	c := client(t, p, addr)

	status, body := get(t, c, "http://allowed.test:"+port(plain)+"/p")
	assert.Equal(t, 200, status)
	assert.Equal(t, `GET /p  auth=""`, body, "the credential is not passed on")
	resp, err := c.Post("http://allowed.test:"+port(plain)+"/post", "text/plain", strings.NewReader("a body"))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, `POST /post a body auth=""`, string(b))
	status, body = get(t, c, "https://allowed.test:"+port(secure)+"/t")
	assert.Equal(t, 200, status)
	assert.Equal(t, `GET /t  auth=""`, body)

	// A wildcard never leads to an internal address, loopback included.
	status, body = get(t, c, "http://a.wild.test:"+port(plain)+"/")
	assert.Equal(t, 403, status)
	assert.Contains(t, body, "internal address")
	status, body = get(t, c, "http://meta.wild.test/latest/meta-data/")
	assert.Equal(t, 403, status)
	assert.Contains(t, body, "169.254.169.254")
	_, err = c.Get("https://a.wild.test:" + port(secure) + "/")
	assert.Error(t, err, "CONNECT refused")

	status, body = get(t, c, "http://127.0.0.1:"+port(plain)+"/")
	assert.Equal(t, 403, status)
	assert.Equal(t, 1, strings.Count(body, "\n"), "one line: %q", body)
	status, _ = get(t, c, "http://other.test/")
	assert.Equal(t, 403, status)
	status, _ = get(t, c, "http://other.test/again")
	assert.Equal(t, 403, status)

	assert.Equal(t, []string{
		"a.wild.test:" + port(plain), "meta.wild.test:80", "a.wild.test:" + port(secure),
		"127.0.0.1:" + port(plain), "other.test:80",
	}, p.Denied())
}

func TestProxyNeedsTheCredential(t *testing.T) {
	plain := server(t, false)
	_, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	for _, auth := range []string{"", "Basic " + base64.StdEncoding.EncodeToString([]byte("sbx:wrong")), "Bearer x"} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		fmt.Fprintf(c, "GET http://allowed.test:%s/ HTTP/1.1\r\nHost: allowed.test\r\n", port(plain))
		if auth != "" {
			fmt.Fprintf(c, "Proxy-Authorization: %s\r\n", auth)
		}
		io.WriteString(c, "\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		assert.Equal(t, 407, resp.StatusCode, "%q", auth)
		c.Close()
	}
}

// The scheme's name is case-insensitive (RFC 9110, 11.1): any spelling of
// Basic with the credential is served; another scheme, or Basic run into
// the credential, is not.
func TestProxyAuthSchemeCase(t *testing.T) {
	plain := server(t, false)
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	cred := base64.StdEncoding.EncodeToString([]byte("sbx:" + p.token))
	for auth, want := range map[string]int{
		"Basic " + cred: 200, "basic " + cred: 200, "BASIC " + cred: 200, "bAsIc  " + cred: 200,
		"Basicx " + cred: 407, "Basic" + cred: 407, "Bearer " + cred: 407,
	} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		fmt.Fprintf(c, "GET http://allowed.test:%s/a HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: %s\r\n\r\n", port(plain), auth)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		assert.Equal(t, want, resp.StatusCode, "%q", auth)
		c.Close()
	}
}

// The destination gets the name the policy allowed in its Host header,
// not another name served from the same address.
func TestProxyHostHeader(t *testing.T) {
	plain := server(t, false)
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET http://allowed.test:%s/h HTTP/1.1\r\nHost: forbidden.test\r\nProxy-Authorization: Basic %s\r\n\r\n",
		port(plain), base64.StdEncoding.EncodeToString([]byte("sbx:"+p.token)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, `GET /h  auth=""`, string(b))
}

// The Host header the destination gets is the name the policy checked,
// normalized as it was checked (width, case, a trailing dot), with the
// port only when the request named one.
func TestProxyHostHeaderNormalized(t *testing.T) {
	hosts := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts <- r.Host
	}))
	t.Cleanup(up.Close)
	p, addr := start(t, []string{"api.allowed.test"}, map[string]string{"api.allowed.test": "127.0.0.1"})
	var dialled []netip.AddrPort
	p.dialAddr = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
		dialled = append(dialled, a) // every port leads to the upstream
		var d net.Dialer
		return d.DialContext(ctx, "tcp", up.Listener.Addr().String())
	}
	auth := base64.StdEncoding.EncodeToString([]byte("sbx:" + p.token))
	for _, tc := range []struct{ url, want string }{
		{"http://%EF%BD%81pi.allowed.test:8080/", "api.allowed.test:8080"}, // fullwidth a
		{"http://%EF%BD%81pi.allowed.test/", "api.allowed.test"},
		{"http://API.Allowed.TEST:8080/", "api.allowed.test:8080"},
		{"http://api.allowed.test.:8080/", "api.allowed.test:8080"},
		{"http://api.allowed.test./", "api.allowed.test"},
		{"http://api.allowed.test:80/", "api.allowed.test:80"},
		{"http://api.allowed.test/", "api.allowed.test"},
	} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: forbidden.test\r\nProxy-Authorization: Basic %s\r\n\r\n", tc.url, auth)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, tc.url)
		resp.Body.Close()
		c.Close()
		require.Equal(t, 200, resp.StatusCode, tc.url)
		assert.Equal(t, tc.want, <-hosts, tc.url)
	}
	assert.Len(t, dialled, 7)
	assert.Nil(t, p.Denied())
}

func TestProxyRefusesNonProxyRequests(t *testing.T) {
	p, addr := start(t, []string{"allowed.test"}, nil)
	auth := "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("sbx:"+p.token)) + "\r\n"
	for _, head := range []string{
		"GET /relative HTTP/1.1\r\nHost: allowed.test\r\n",
		"GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n",
		"CONNECT allowed.test HTTP/1.1\r\nHost: allowed.test\r\n",
		"NONSENSE\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		io.WriteString(c, head+auth+"\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "%q", head)
		assert.Equal(t, 400, resp.StatusCode, "%q", head)
		c.Close()
	}
	assert.Nil(t, p.Denied())
}

// Hostile clients: a 1 GiB header is cut off at HeadLimit, 1,000
// connections hold at most MaxConns, requests never finished do not keep
// Close waiting, and the heap stays bounded.
func TestProxyHostileClients(t *testing.T) {
	p, addr := start(t, []string{"allowed.test"}, nil)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	big, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer big.Close()
	io.WriteString(big, "GET http://allowed.test/ HTTP/1.1\r\nX-Big: ")
	chunk := []byte(strings.Repeat("a", 64<<10))
	sent := 0
	for sent < 1<<30 {
		n, err := big.Write(chunk)
		sent += n
		if err != nil {
			break
		}
	}
	assert.Less(t, sent, 64<<20, "the proxy stopped reading the header")

	var conns []net.Conn
	for i := 0; i < 1000; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break // the host's descriptor limit
		}
		io.WriteString(c, "GET http://allowed.test/ HTTP/1.1\r\nHost: a") // never finished
		conns = append(conns, c)
	}
	assert.Greater(t, len(conns), MaxConns)
	time.Sleep(200 * time.Millisecond)
	p.mu.Lock()
	held := len(p.conns)
	p.mu.Unlock()
	assert.LessOrEqual(t, held, MaxConns)

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	assert.Less(t, grown, int64(32<<20), "heap grew by %d bytes", grown)

	start := time.Now()
	require.NoError(t, p.Close())
	assert.Less(t, time.Since(start), 5*time.Second, "Close waits for no client")
	for _, c := range conns {
		c.Close()
	}
}

// Close ends the tunnels, and every goroutine the proxy started.
func TestProxyCloseEndsEverything(t *testing.T) {
	secure := server(t, true)
	before := runtime.NumGoroutine()
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT allowed.test:%s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n",
		port(secure), base64.StdEncoding.EncodeToString([]byte("sbx:"+p.token)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.NoError(t, p.Close())
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the tunnel is closed")
	secure.CloseClientConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)

	// A listener served after Close is closed at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p.Serve(l)
	_, err = l.Accept()
	assert.Error(t, err)
}

// A forwarded request carries the client's headers, and no User-Agent
// when the client sent none (Request.Write would add Go's).
func TestProxyForwardsNoUserAgentOfItsOwn(t *testing.T) {
	agents := make(chan []string, 2)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents <- r.Header.Values("User-Agent")
	}))
	t.Cleanup(up.Close)
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	auth := base64.StdEncoding.EncodeToString([]byte("sbx:" + p.token))
	for _, tc := range []struct {
		header string
		want   []string
	}{{"", nil}, {"User-Agent: curl/8.5.0\r\n", []string{"curl/8.5.0"}}} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		fmt.Fprintf(c, "GET http://allowed.test:%s/ HTTP/1.1\r\n%sProxy-Authorization: Basic %s\r\n\r\n", port(up), tc.header, auth)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		resp.Body.Close()
		c.Close()
		assert.Equal(t, tc.want, <-agents, "%q", tc.header)
	}
}

// An HTTP/1.0 client's request goes on as HTTP/1.0: as HTTP/1.1, a
// destination that streams its answer sent it chunked, which such a client
// (curl -0) cannot read (found in review).
func TestProxyForwardsHTTP10(t *testing.T) {
	protos := make(chan string, 2)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos <- r.Proto
		io.WriteString(w, "part one, ")
		w.(http.Flusher).Flush() // no length: chunked, to a 1.1 request
		io.WriteString(w, "part two")
	}))
	t.Cleanup(up.Close)
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	auth := base64.StdEncoding.EncodeToString([]byte("sbx:" + p.token))
	for _, version := range []string{"HTTP/1.0", "HTTP/1.1"} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		fmt.Fprintf(c, "GET http://allowed.test:%s/x?y=1 %s\r\nProxy-Authorization: Basic %s\r\n\r\n", port(up), version, auth)
		raw, err := io.ReadAll(c)
		c.Close()
		require.NoError(t, err)
		assert.Equal(t, version, <-protos)
		head, body, _ := strings.Cut(string(raw), "\r\n\r\n")
		if version == "HTTP/1.0" {
			assert.NotContains(t, head, "chunked")
			assert.Equal(t, "part one, part two", body)
		} else {
			assert.Contains(t, head, "Transfer-Encoding: chunked")
		}
	}
}
