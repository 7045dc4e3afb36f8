package netproxy

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// serveHTTP serves one request: CONNECT opens a tunnel, an absolute-URI
// request is forwarded with "Connection: close", so that the client's
// connection ends with the response.
func (p *Proxy) serveHTTP(c net.Conn, br *bufio.Reader, limited *io.LimitedReader, lines *lineCounter) {
	req, err := readRequest(br)
	if err != nil {
		if limited.N == 0 {
			answer(c, http.StatusRequestHeaderFieldsTooLarge, "the request head is larger than the proxy reads")
		} else if lines.over {
			answer(c, http.StatusRequestHeaderFieldsTooLarge,
				fmt.Sprintf("the request head has more than %d lines, more than the proxy reads", MaxHeadLines))
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			answer(c, http.StatusBadRequest, err.Error())
		}
		return
	}
	limited.N = 1 << 62 // the head is read; a body may follow
	if !p.authorizedRequest(req) {
		io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\n"+
			"Proxy-Authenticate: Basic realm=\"sandboxexec\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	dest, err := p.connect(req.host, req.port)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			answer(c, http.StatusForbidden, r.Error())
		} else {
			answer(c, http.StatusBadGateway, "sandboxexec proxy: "+err.Error())
		}
		return
	}
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			dest.Close()
			return
		}
		pending, _ := br.Peek(br.Buffered())
		p.relay(c, dest, pending)
		return
	}
	if !p.hold(dest) {
		dest.Close()
		return
	}
	defer p.untrack(dest)
	c.SetDeadline(time.Time{})
	for _, h := range hopByHop(req.Header) {
		req.Header.Del(h)
	}
	req.Close = true
	if _, ok := req.Header["User-Agent"]; !ok {
		// Request.Write gives a request without one Go's; an empty one
		// is written as none, as the client sent it.
		req.Header["User-Agent"] = []string{""}
	}
	// The name checked, as it was checked (not another behind the same
	// address, nor the raw spelling of the URL), with the port only when
	// the request named one.
	req.Host = req.checkedHost()
	body := &clientBody{ReadCloser: req.Body}
	if req.Body != http.NoBody { // a wrapped NoBody would be sent chunked
		req.Body = body
	}
	var w io.Writer = dest
	if req.ProtoMajor == 1 && req.ProtoMinor == 0 {
		// The version is the client's to say: a destination answers an
		// HTTP/1.1 request chunked, which an HTTP/1.0 client (curl -0)
		// cannot read. Request.Write writes 1.1 whatever the request says.
		w = &http10Writer{w: dest}
	}
	wrote := make(chan struct{})
	go func() {
		// The response may come before the whole body is sent.
		defer close(wrote)
		if err := req.Write(w); err != nil && body.err != nil {
			// The client left mid-body: the destination would wait for
			// the rest, and hold this connection, until the call ends.
			dest.Close()
		}
	}()
	io.Copy(c, dest)
	c.Close()
	dest.Close()
	<-wrote
}

// http10Writer is w, with the request line that Request.Write writes first
// (method, URI, "HTTP/1.1", neither of the first two holding a space or a
// line end) made to end in HTTP/1.0.
type http10Writer struct {
	w    io.Writer
	line []byte // the request line so far, until it is written
	done bool
}

func (h *http10Writer) Write(p []byte) (int, error) {
	if h.done {
		return h.w.Write(p)
	}
	end := bytes.IndexByte(p, '\n')
	if end < 0 {
		h.line = append(h.line, p...)
		return len(p), nil
	}
	h.line = append(h.line, p[:end+1]...)
	h.done = true
	line, ok := bytes.CutSuffix(h.line, []byte(" HTTP/1.1\r\n"))
	if !ok {
		return 0, fmt.Errorf("netproxy: unexpected request line %q", h.line)
	}
	if _, err := h.w.Write(append(line, " HTTP/1.0\r\n"...)); err != nil {
		return 0, err
	}
	if _, err := h.w.Write(p[end+1:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// clientBody is a forwarded request's body; err is a failure to read it
// from the client (not its end), which leaves the request unfinished.
type clientBody struct {
	io.ReadCloser
	err error
}

func (b *clientBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// request is a parsed proxy request with the destination it names.
type request struct {
	*http.Request
	host string
	port uint16
	// portNamed is whether the request named its port.
	portNamed bool
}

// checkedHost is the Host header a forwarded request carries: the name
// the policy checked (NormalizeHost: punycode, lower case, no trailing
// dot), with ":port" only when the request named a port.
func (r *request) checkedHost() string {
	name, err := NormalizeHost(r.host)
	if err != nil {
		name = r.host // not reached: the policy refuses what NormalizeHost does
	}
	if r.portNamed {
		return net.JoinHostPort(name, strconv.Itoa(int(r.port)))
	}
	return name
}

// readRequest reads a request head and the destination it names: an
// authority ("host:port") for CONNECT, an absolute http:// URI otherwise.
func readRequest(br *bufio.Reader) (*request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	r := &request{Request: req}
	var hostport string
	defaultPort := ""
	switch {
	case req.Method == http.MethodConnect:
		hostport = req.RequestURI
	case req.URL.IsAbs() && req.URL.Scheme == "http":
		hostport, defaultPort = req.URL.Host, "80"
	case req.URL.IsAbs():
		return nil, fmt.Errorf("scheme %q: the proxy forwards http:// requests; use CONNECT for anything else", req.URL.Scheme)
	default:
		return nil, errors.New("a proxy request names its destination: an absolute http:// URI or CONNECT host:port")
	}
	host, port, err := net.SplitHostPort(hostport)
	r.portNamed = err == nil
	if err != nil {
		if defaultPort == "" {
			return nil, fmt.Errorf("CONNECT %q: want host:port", hostport)
		}
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), defaultPort
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || host == "" {
		return nil, fmt.Errorf("destination %q: want host:port", hostport)
	}
	r.host, r.port = host, uint16(n)
	return r, nil
}

// authorizedRequest reports whether the request carries the credential as
// Basic authentication; the scheme's name is case-insensitive (RFC 9110,
// 11.1), so "basic" and "BASIC" are Basic too.
func (p *Proxy) authorizedRequest(req *request) bool {
	scheme, auth, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Proxy-Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(auth))
	if err != nil {
		return false
	}
	user, password, _ := strings.Cut(string(raw), ":")
	return p.authorized(user, password)
}

// hopByHop lists the headers that concern the connection to the proxy, not
// the destination (RFC 9110, 7.6.1).
func hopByHop(h http.Header) []string {
	names := []string{"Proxy-Authorization", "Proxy-Connection", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"}
	for _, v := range h.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				names = append(names, f)
			}
		}
	}
	return names
}

// answer writes a response whose body is one line, and closes.
func answer(c net.Conn, status int, line string) {
	line = strings.ReplaceAll(line, "\n", " ") + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(line), line)
}
