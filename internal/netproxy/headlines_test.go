package netproxy

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headHold is what the proxy's documentation says a request head of
// HeadLimit bytes and MaxHeadLines lines holds once parsed, at most:
// 64 KiB (52 KiB measured, for 127 header lines of 250 bytes).
const headHold = 64 << 10

// tinyLines is a request head of size bytes of the shortest header
// lines, never finished.
func tinyLines(size int) string {
	var b strings.Builder
	b.WriteString("GET http://allowed.test/ HTTP/1.1\r\n")
	for i := 0; b.Len() < size-16; i++ {
		fmt.Fprintf(&b, "%d:\r\n", i)
	}
	return b.String()
}

// longLines is a request head of about size bytes in its request line
// and lines header lines, never finished.
func longLines(size, lines int) string {
	var b strings.Builder
	b.WriteString("GET http://allowed.test/ HTTP/1.1\r\n")
	n := (size - 64) / lines
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "X%d: %s\r\n", i, strings.Repeat("a", n-12))
	}
	return b.String()
}

// MaxConns clients each send a head of HeadLimit bytes and never finish
// it: whatever its lines, the heap grows by less than MaxConns × headHold.
// Before MaxHeadLines, tiny lines ("0:\r\n1:\r\n...", about 6,500 of
// them) made 487 KiB a connection, 122 MiB in all.
func TestProxyHostileHeadLines(t *testing.T) {
	for _, tc := range []struct{ name, head string }{
		{"tiny lines", tinyLines(HeadLimit)},
		{"long lines", longLines(HeadLimit, MaxHeadLines-1)},
		{"one line", "GET http://allowed.test/ HTTP/1.1\r\nX: " + strings.Repeat("a", HeadLimit-64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, HeadLimit, len(tc.head), 1024, "a head of HeadLimit bytes")
			p, addr := start(t, []string{"allowed.test"}, nil)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var conns []net.Conn
			var writers sync.WaitGroup
			for i := 0; i < MaxConns; i++ {
				c, err := net.Dial("tcp", addr)
				require.NoError(t, err)
				conns = append(conns, c)
				writers.Add(1)
				go func() {
					defer writers.Done()
					io.WriteString(c, tc.head) // the proxy may answer 431 and close first
				}()
			}
			time.Sleep(time.Second) // the proxy reads what it reads
			runtime.GC()
			runtime.ReadMemStats(&after)
			grown := int64(after.HeapInuse) - int64(before.HeapInuse)
			t.Logf("%d-byte head on %d connections: heap grew by %d KiB, %d bytes a connection",
				len(tc.head), MaxConns, grown>>10, grown/MaxConns)
			assert.Less(t, grown, int64(MaxConns*headHold), "heap grew by %d bytes", grown)
			p.Close()
			for _, c := range conns {
				c.Close()
			}
			writers.Wait()
		})
	}
}

// headWith is a proxy request head for u with the credential and extra
// header lines more, unfinished.
func headWith(p *Proxy, method, u string, extra int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n", method, u,
		base64.StdEncoding.EncodeToString([]byte("sbx:"+p.token)))
	for i := 0; i < extra; i++ {
		fmt.Fprintf(&b, "X-%d: %d\r\n", i, i)
	}
	return b.String()
}

// A head of MaxHeadLines lines is served; one more line gets 431, with a
// one-line reason, and the proxy stops reading it there.
func TestProxyHeadLinesLimit(t *testing.T) {
	plain := server(t, false)
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	u := "http://allowed.test:" + port(plain) + "/l"
	for _, tc := range []struct {
		lines, status int
		ending        string
	}{
		{MaxHeadLines, 200, "\r\n"},
		{MaxHeadLines, 200, "\n"},
		{MaxHeadLines + 1, 431, "\r\n"},
		{10 * MaxHeadLines, 431, "\r\n"},
	} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		head := headWith(p, "GET", u, tc.lines-2)
		if tc.ending == "\n" {
			head = strings.ReplaceAll(head, "\r\n", "\n")
		}
		require.Equal(t, tc.lines, strings.Count(head, "\n"))
		io.WriteString(c, head+tc.ending)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "%d lines", tc.lines)
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		assert.Equal(t, tc.status, resp.StatusCode, "%d lines: %s", tc.lines, body)
		if tc.status == 431 {
			assert.Equal(t, 1, strings.Count(string(body), "\n"), "one line: %q", body)
			assert.Contains(t, string(body), strconv.Itoa(MaxHeadLines)+" lines")
		} else {
			assert.Equal(t, `GET /l  auth=""`, string(body))
		}
	}
}

// What follows a head and comes with it, in the same write, is not head:
// a body or a tunnel's first bytes full of newlines are passed on whole.
func TestProxyHeadLinesNotPastTheHead(t *testing.T) {
	plain := server(t, false)
	p, addr := start(t, []string{"allowed.test"}, map[string]string{"allowed.test": "127.0.0.1"})
	// More than the proxy reads with the head: the rest comes in later reads.
	payload := strings.Repeat("x\n", 8<<10) + strings.Repeat("\n", 4*MaxHeadLines) + "end"

	t.Run("forward", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		head := headWith(p, "POST", "http://allowed.test:"+port(plain)+"/b", MaxHeadLines-3)
		io.WriteString(c, head+"Content-Length: "+strconv.Itoa(len(payload))+"\r\n\r\n"+payload)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, 200, resp.StatusCode, "%s", body)
		assert.Equal(t, `POST /b `+payload+` auth=""`, string(body))
	})

	t.Run("connect", func(t *testing.T) {
		var got []byte
		dport, done := relayDest(t, func(c *net.TCPConn) {
			got = make([]byte, len(payload))
			if _, err := io.ReadFull(c, got); err == nil {
				io.WriteString(c, "all read")
			}
		})
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		head := headWith(p, "CONNECT", "allowed.test:"+dport, MaxHeadLines-2)
		io.WriteString(c, head+"\r\n"+payload)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
		reply, _ := io.ReadAll(br)
		<-done
		assert.Equal(t, "all read", string(reply))
		assert.Equal(t, payload, string(got))
	})
}

// SOCKS5 is binary: 0x0a bytes in its handshake, and in the tunnel's
// first bytes sent with the request, are not lines.
func TestProxyHeadLinesNotSOCKS(t *testing.T) {
	payload := strings.Repeat("x\n", 4*MaxHeadLines)
	var got []byte
	dport, done := relayDest(t, func(c *net.TCPConn) {
		got = make([]byte, len(payload))
		if _, err := io.ReadFull(c, got); err == nil {
			io.WriteString(c, "all read")
		}
	})
	n, err := strconv.ParseUint(dport, 10, 16)
	require.NoError(t, err)
	// A 10-byte name: its length is 0x0a too.
	p, addr := start(t, []string{"ab.allowed"}, map[string]string{"ab.allowed": "127.0.0.1"})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))

	methods := []byte{socksAuthUser}
	for len(methods) < 255 {
		methods = append(methods, '\n', socksAuthUser) // 127 "lines"
	}
	c.Write(append([]byte{socksVersion, byte(len(methods))}, methods...))
	reply := make([]byte, 2)
	_, err = io.ReadFull(c, reply)
	require.NoError(t, err)
	require.Equal(t, []byte{socksVersion, socksAuthUser}, reply)
	c.Write(append(append([]byte{authVersion, 3}, User...), append([]byte{byte(len(p.token))}, p.token...)...))
	_, err = io.ReadFull(c, reply)
	require.NoError(t, err)
	require.Equal(t, []byte{authVersion, authSucceeded}, reply)
	req := append([]byte{socksVersion, socksConnect, 0, socksDomain}, domain("ab.allowed")...)
	req = binary.BigEndian.AppendUint16(req, uint16(n))
	c.Write(append(req, payload...))
	rep := make([]byte, 10)
	_, err = io.ReadFull(c, rep)
	require.NoError(t, err)
	require.Equal(t, byte(repSucceeded), rep[1])
	back, _ := io.ReadAll(c)
	<-done
	assert.Equal(t, "all read", string(back))
	assert.Equal(t, payload, string(got))
}
