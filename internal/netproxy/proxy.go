package netproxy

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds on what a client can make the proxy hold. A request head of
// HeadLimit bytes and MaxHeadLines lines holds under 64 KiB once parsed
// (52 KiB at most measured, for 127 header lines of 250 bytes; 32 KiB of
// one-byte header lines held 487 KiB before the line bound). With them,
// the host memory the proxy uses stays under MaxConns × (64 KiB + 2 × the
// copy buffer, 32 KiB), 32 MiB, plus the refusals listed (MaxDenied
// entries of at most about 260 bytes, with their index: under 1 MiB),
// whatever the command does. That is the heap: a tunnel also holds its
// sockets' kernel buffers and, while Go splices it, a pipe per direction
// (six descriptors a tunnel at most).
const (
	// MaxDenied is how many distinct refused destinations Denied lists; a
	// refusal past it is refused all the same, but not listed.
	MaxDenied = 1000
	// MaxConns is the number of client connections served at once; a
	// connection past it is closed as soon as it is accepted.
	MaxConns = 256
	// HeadLimit bounds an HTTP request head (its line and headers) and a
	// SOCKS5 handshake.
	HeadLimit = 32 << 10
	// MaxHeadLines bounds the lines of an HTTP request head (its request
	// line and header lines, the empty line that ends it not counted):
	// the parser makes each line a map entry and strings, so HeadLimit
	// bytes of tiny lines would hold far more than HeadLimit. Real
	// clients send 5 to 30.
	MaxHeadLines = 128
	// HeadTimeout is how long a client has to finish its request head or
	// SOCKS5 handshake.
	HeadTimeout = 30 * time.Second
	// DialTimeout bounds the connection to a destination.
	DialTimeout = 30 * time.Second
)

// User is the user name of the credential the proxy requires.
const User = "sbx"

// Proxy is the proxy of one call. Its methods may be called from any
// goroutine; Close ends everything it started.
type Proxy struct {
	matcher *Matcher
	token   string

	// Resolve looks up a name's addresses; tests replace it before Serve.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// dialAddr connects to an address that Resolve gave and the policy
	// allows; tests replace it to see which addresses are dialled.
	dialAddr func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// hostAddrs lists the host's own addresses, those of its interfaces;
	// tests replace it.
	hostAddrs func() ([]netip.Addr, error)

	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	denied    []string
	seen      map[string]bool
}

// New makes the proxy for patterns (see NewMatcher), with a new random
// credential.
func New(patterns []string) (*Proxy, error) {
	m, err := NewMatcher(patterns)
	if err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("the proxy's credential: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Proxy{
		matcher: m,
		token:   hex.EncodeToString(b[:]),
		Resolve: resolve,
		dialAddr: func(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr.String())
		},
		hostAddrs: interfaceAddrs,
		ctx:       ctx,
		cancel:    cancel,
		slots:     make(chan struct{}, MaxConns),
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
		seen:      map[string]bool{},
	}, nil
}

// resolve looks a name up in the hosts file, then in DNS rooted (host +
// "."), so that the host's resolv.conf search list never makes an allowed
// name another one, which no pattern allows (nx.allowed.test.corp.internal
// for a nonexistent nx.allowed.test; under ndots:5 the search list comes
// first). The hosts file is read apart because neither resolver finds a
// rooted name there: Go's keys a name without a dot ("localhost")
// unrooted, glibc's compares the name as it is.
func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if addrs, err := hostsFile.LookupNetIP(ctx, "ip", host); err == nil && len(addrs) > 0 {
		return addrs, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host+".")
}

// hostsFile is Go's resolver without DNS: it finds a name (as it is, the
// search list not applied) in the hosts file, and nowhere else.
var hostsFile = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("the hosts file only")
}}

// Env returns the variables that point a command at the proxy listening on
// addr ("127.0.0.1:PORT"), each carrying the credential.
func (p *Proxy) Env(addr string) []string {
	http := "http://" + User + ":" + p.token + "@" + addr
	socks := "socks5h://" + User + ":" + p.token + "@" + addr
	return []string{
		"HTTP_PROXY=" + http, "HTTPS_PROXY=" + http, "ALL_PROXY=" + socks,
		"http_proxy=" + http, "https_proxy=" + http, "all_proxy=" + socks,
	}
}

// Denied returns the "host:port" destinations refused so far, once each
// (names normalized: case and a trailing dot do not count), in order of
// first attempt, at most MaxDenied of them; nil when none was.
func (p *Proxy) Denied() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.denied) == 0 {
		return nil
	}
	return append([]string(nil), p.denied...)
}

// Serve accepts connections on l until l fails or the proxy is closed;
// Close closes l.
func (p *Proxy) Serve(l net.Listener) {
	if !p.track(l, nil) {
		l.Close()
		return
	}
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || p.ctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // out of descriptors, say
			continue
		}
		select {
		case p.slots <- struct{}{}:
		default:
			c.Close() // past MaxConns
			continue
		}
		if !p.track(nil, c) {
			c.Close()
			<-p.slots
			return
		}
		go func() {
			defer p.wg.Done()
			defer func() { <-p.slots }()
			defer p.untrack(c)
			p.serveConn(c)
		}()
	}
}

// Close stops the proxy: its listeners and every connection, client or
// destination, are closed, and it returns once all its goroutines have
// ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	return nil
}

// track registers a listener or a connection for Close, and a goroutine
// for its wait (for a listener, or a client connection); false once closed.
func (p *Proxy) track(l net.Listener, c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if l != nil {
		p.listeners[l] = struct{}{}
	}
	if c != nil {
		p.conns[c] = struct{}{}
	}
	p.wg.Add(1)
	return true
}

// hold registers a destination connection for Close; false once closed.
func (p *Proxy) hold(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) serveConn(c net.Conn) {
	c.SetDeadline(time.Now().Add(HeadTimeout))
	limited := &io.LimitedReader{R: c, N: HeadLimit}
	lines := &lineCounter{r: limited}
	br := bufio.NewReaderSize(lines, 4096)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		p.serveSOCKS(c, br, limited)
	} else {
		p.serveHTTP(c, br, limited, lines)
	}
}

// errHeadLines is what a lineCounter returns past MaxHeadLines.
var errHeadLines = errors.New("more request head lines than the proxy reads")

// lineCounter passes a client's stream on, and fails once an HTTP request
// head has had more than MaxHeadLines lines. It counts only until the
// head's end, its first empty line ("\n" or "\r\n" at a line start):
// what follows (a body, a tunnel's first bytes, read with the head) is
// passed on as it is and never counted. A stream whose first byte is the
// SOCKS5 version is binary, and is passed on as it is.
type lineCounter struct {
	r       io.Reader
	started bool // a first byte was seen
	done    bool // the head has ended, or the stream is SOCKS5
	lines   int  // lines ended so far
	line    int  // bytes of the current line, up to 2
	cr      bool // the current line so far is "\r"
	over    bool // past MaxHeadLines
}

func (l *lineCounter) Read(b []byte) (int, error) {
	if l.over {
		return 0, errHeadLines
	}
	n, err := l.r.Read(b)
	if l.done || n == 0 {
		return n, err
	}
	if !l.started {
		l.started = true
		if b[0] == socksVersion {
			l.done = true
			return n, err
		}
	}
	for i, c := range b[:n] {
		switch {
		case c == '\n' && (l.line == 0 || l.line == 1 && l.cr):
			l.done = true // the empty line that ends the head
			return n, err
		case c == '\n':
			l.lines++
			l.line, l.cr = 0, false
			if l.lines > MaxHeadLines {
				// The bytes before this line's end go on, so that the
				// parser stops at this error, not at a line cut short.
				l.over = true
				return i, errHeadLines
			}
		case l.line == 0:
			l.line, l.cr = 1, c == '\r'
		default:
			l.line, l.cr = 2, false
		}
	}
	return n, err
}

// authorized reports whether user and password are the call's credential.
func (p *Proxy) authorized(user, password string) bool {
	return subtle.ConstantTimeCompare([]byte(user), []byte(User)) == 1 &&
		subtle.ConstantTimeCompare([]byte(password), []byte(p.token)) == 1
}

// refusal is a destination the policy does not allow; its Error is the
// one-line reason the client is given.
type refusal struct {
	dest   string
	reason string
}

func (r *refusal) Error() string { return "sandboxexec proxy: " + r.dest + ": " + r.reason }

// connect checks host:port against the policy, resolves the name and dials
// an address that the policy allows, which is the one checked (no second
// lookup between check and dial). A *refusal is recorded in Denied.
func (p *Proxy) connect(host string, port uint16) (net.Conn, error) {
	dest := net.JoinHostPort(host, strconv.Itoa(int(port)))
	conn, err := p.dial(host, port, dest)
	var r *refusal
	if errors.As(err, &r) {
		p.mu.Lock()
		if len(p.denied) < MaxDenied {
			key := deniedName(host, port)
			if !p.seen[key] {
				p.seen[key] = true
				p.denied = append(p.denied, key)
			}
		}
		p.mu.Unlock()
	}
	return conn, err
}

// deniedName is how a refused destination is listed: a name as patterns
// are matched (EXAMPLE.com and example.com. are example.com), an IP
// address in its canonical form, anything else lower case, without a
// trailing dot, valid UTF-8, cut to the length of a DNS name, and with
// U+FFFD for what does not print (controls, bidi overrides), so that an
// entry stays small and one line whatever a request head or a SOCKS5
// name (any 255 bytes) carries: a host prints DeniedHosts, or asks its
// user about them.
func deniedName(host string, port uint16) string {
	name, err := NormalizeHost(host)
	if err != nil {
		if a, perr := netip.ParseAddr(strings.Trim(host, "[]")); perr == nil {
			// An IPv6 zone (fe80::1%eth0) is whatever bytes the request
			// gave: it is mapped and cut as a name is.
			name = a.String()
		} else {
			name = strings.ToLower(strings.TrimSuffix(host, "."))
		}
		name = strings.Map(printable, strings.ToValidUTF8(name, "\uFFFD"))
		if len(name) > maxNameLen {
			cut := maxNameLen
			for cut > 0 && !utf8.RuneStart(name[cut]) {
				cut--
			}
			name = name[:cut] + "…"
		}
	}
	return net.JoinHostPort(name, strconv.Itoa(int(port)))
}

// printable maps a rune that does not print to U+FFFD.
func printable(r rune) rune {
	if !unicode.IsPrint(r) {
		return '\uFFFD'
	}
	return r
}

// maxNameLen is the longest DNS name.
const maxNameLen = 253

func (p *Proxy) dial(host string, port uint16, dest string) (net.Conn, error) {
	name, err := NormalizeHost(host)
	if errors.Is(err, errIPLiteral) {
		return nil, &refusal{dest, "an IP address is never allowed: ask for a host name"}
	}
	if err != nil {
		return nil, &refusal{dest, err.Error()}
	}
	allowed, exact := p.matcher.Match(name)
	if !allowed {
		return nil, &refusal{dest, "not in the call's AllowedDomains"}
	}
	if port == 0 {
		return nil, &refusal{dest, "port 0"}
	}
	ctx, cancel := context.WithTimeout(p.ctx, DialTimeout)
	defer cancel()
	addrs, err := p.Resolve(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", name, err)
	}
	var own []netip.Addr
	if !exact {
		// The host's own addresses reach its services as loopback does:
		// those that listen on every address (0.0.0.0, [::]), through a
		// public address on an interface (a server's, a VPS's, a global
		// IPv6 address) that no class of Internal names.
		if own, err = p.hostAddrs(); err != nil {
			return nil, fmt.Errorf("listing the host's own addresses: %w", err)
		}
	}
	var internal netip.Addr
	var lastErr error = fmt.Errorf("%s has no address", name)
	tried := 0
	for _, a := range addrs {
		a = a.Unmap()
		if !exact && (Internal(a) || hostAddr(a, own)) {
			internal = a
			continue
		}
		tried++
		c, err := p.dialAddr(ctx, netip.AddrPortFrom(a, port))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	if tried == 0 && internal.IsValid() {
		return nil, &refusal{dest, "resolves to " + internal.String() +
			", an internal address or one of this host's, which only an exact pattern (not a wildcard) allows"}
	}
	return nil, lastErr
}

// Internal reports whether a is an address that a wildcard pattern must not
// lead to: loopback, private, link-local (cloud metadata included),
// unique-local, unspecified, multicast, "this network" (0.0.0.0/8), shared
// (100.64.0.0/10), IETF protocol assignments (192.0.0.0/24: DS-Lite's
// gateway and host among them), benchmarking (198.18.0.0/15, which fake-IP
// resolvers and some private networks use), reserved (240.0.0.0/4, which
// some clouds route as private, and the broadcast address), local-use NAT64
// (64:ff9b:1::/48); and an IPv6 address
// that carries an IPv4 address which is one of these, since a host or its
// gateway may deliver it there: IPv4-mapped (::ffff:a.b.c.d),
// IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64
// (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::).
func Internal(a netip.Addr) bool {
	a = a.Unmap()
	if v4, ok := embeddedIPv4(a); ok && internalAddr(v4) {
		return true
	}
	return internalAddr(a)
}

// interfaceAddrs lists the addresses of the host's interfaces.
func interfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	own := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				own = append(own, ip.Unmap())
			}
		}
	}
	return own, nil
}

// hostAddr reports whether a, or the IPv4 address an IPv6 transition form
// of it carries (see Internal), is one of own, the host's addresses.
func hostAddr(a netip.Addr, own []netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if slices.Contains(own, a) {
		return true
	}
	v4, ok := embeddedIPv4(a)
	return ok && slices.Contains(own, v4)
}

func internalAddr(a netip.Addr) bool {
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() ||
		shared.Contains(a) || thisNetwork.Contains(a) || protocolAssignments.Contains(a) ||
		benchmarking.Contains(a) || reserved.Contains(a) || localNAT64.Contains(a) || siteLocal.Contains(a)
}

// embeddedIPv4 returns the IPv4 address an IPv6 address of a transition
// form carries.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	var v4 [4]byte
	switch {
	case compatible.Contains(a), translated.Contains(a), nat64.Contains(a):
		copy(v4[:], b[12:])
	case sixToFour.Contains(a):
		copy(v4[:], b[2:6])
	default:
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(v4), true
}

var (
	shared      = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	// Not globally reachable (IANA's special-purpose address registry).
	protocolAssignments = netip.MustParsePrefix("192.0.0.0/24")
	benchmarking        = netip.MustParsePrefix("198.18.0.0/15")
	reserved            = netip.MustParsePrefix("240.0.0.0/4")
	localNAT64          = netip.MustParsePrefix("64:ff9b:1::/48")
	// IPv6 site-local addresses are deprecated (RFC 3879), but a network
	// that still configures them routes them inside.
	siteLocal  = netip.MustParsePrefix("fec0::/10")
	compatible = netip.MustParsePrefix("::/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// relay copies both ways between the client and the destination until
// either side is done, then closes both. pending is what the client sent
// past its request head.
func (p *Proxy) relay(client, dest net.Conn, pending []byte) {
	if !p.hold(dest) {
		dest.Close()
		return
	}
	defer p.untrack(dest)
	client.SetDeadline(time.Time{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if len(pending) > 0 {
			if _, err := dest.Write(pending); err != nil {
				return
			}
		}
		io.Copy(dest, client)
		closeWrite(dest)
	}()
	io.Copy(client, dest)
	closeWrite(client)
	<-done
}

// closeWrite passes an end of stream on where the connection can carry
// one, so that a half-closed exchange finishes.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		c.Close()
	}
}
