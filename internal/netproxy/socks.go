package netproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
)

// SOCKS5 (RFC 1928) with username/password authentication (RFC 1929).
const (
	socksVersion   = 5
	socksAuthUser  = 2
	socksNoMethod  = 0xff
	socksConnect   = 1
	socksIPv4      = 1
	socksDomain    = 3
	socksIPv6      = 4
	repSucceeded   = 0
	repFailure     = 1
	repNotAllowed  = 2
	repUnreachable = 4
	repRefused     = 5
	repNoCommand   = 7
	repNoAddrType  = 8
	authVersion    = 1
	authSucceeded  = 0
	authFailed     = 1
)

func (p *Proxy) serveSOCKS(c net.Conn, br *bufio.Reader, limited *io.LimitedReader) {
	methods, err := readSOCKSGreeting(br)
	if err != nil {
		return
	}
	if !methods[socksAuthUser] {
		c.Write([]byte{socksVersion, socksNoMethod})
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksAuthUser}); err != nil {
		return
	}
	user, password, err := readSOCKSAuth(br)
	if err != nil {
		return
	}
	if !p.authorized(user, password) {
		c.Write([]byte{authVersion, authFailed})
		return
	}
	if _, err := c.Write([]byte{authVersion, authSucceeded}); err != nil {
		return
	}
	host, port, rep, err := readSOCKSRequest(br)
	if err != nil {
		if rep != repSucceeded {
			socksReply(c, rep)
		}
		return
	}
	dest, err := p.connect(host, port)
	if err != nil {
		var r *refusal
		var op *net.OpError
		switch {
		case errors.As(err, &r):
			socksReply(c, repNotAllowed)
		case errors.As(err, &op) && op.Timeout():
			socksReply(c, repUnreachable)
		case errors.As(err, &op):
			socksReply(c, repRefused)
		default:
			socksReply(c, repFailure)
		}
		return
	}
	if err := socksReply(c, repSucceeded); err != nil {
		dest.Close()
		return
	}
	limited.N = 1 << 62
	pending, _ := br.Peek(br.Buffered())
	p.relay(c, dest, pending)
}

// readSOCKSGreeting reads the client's version and methods.
func readSOCKSGreeting(r io.Reader) (methods [256]bool, err error) {
	var head [2]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return methods, err
	}
	if head[0] != socksVersion {
		return methods, fmt.Errorf("SOCKS version %d", head[0])
	}
	list := make([]byte, head[1])
	if _, err := io.ReadFull(r, list); err != nil {
		return methods, err
	}
	for _, m := range list {
		methods[m] = true
	}
	return methods, nil
}

// readSOCKSAuth reads an RFC 1929 username and password.
func readSOCKSAuth(r io.Reader) (user, password string, err error) {
	var v [1]byte
	if _, err := io.ReadFull(r, v[:]); err != nil {
		return "", "", err
	}
	if v[0] != authVersion {
		return "", "", fmt.Errorf("SOCKS authentication version %d", v[0])
	}
	if user, err = readSOCKSString(r); err != nil {
		return "", "", err
	}
	password, err = readSOCKSString(r)
	return user, password, err
}

func readSOCKSString(r io.Reader) (string, error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", err
	}
	b := make([]byte, n[0])
	_, err := io.ReadFull(r, b)
	return string(b), err
}

// readSOCKSRequest reads a CONNECT request. An IP address type gives the
// address as host, which no pattern matches. rep is the reply to send when
// err is a request the proxy does not serve (zero when the client just
// failed to send one).
func readSOCKSRequest(r io.Reader) (host string, port uint16, rep byte, err error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return "", 0, repSucceeded, err
	}
	if head[0] != socksVersion {
		return "", 0, repFailure, fmt.Errorf("SOCKS version %d", head[0])
	}
	switch head[3] {
	case socksIPv4, socksIPv6:
		b := make([]byte, 4)
		if head[3] == socksIPv6 {
			b = make([]byte, 16)
		}
		if _, err := io.ReadFull(r, b); err != nil {
			return "", 0, repSucceeded, err
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.String()
	case socksDomain:
		if host, err = readSOCKSString(r); err != nil {
			return "", 0, repSucceeded, err
		}
		if host == "" {
			// A malformed request, as an HTTP one without a host: no
			// destination to list in Denied.
			return "", 0, repFailure, errors.New("SOCKS domain name of length 0")
		}
	default:
		return "", 0, repNoAddrType, fmt.Errorf("SOCKS address type %d", head[3])
	}
	var p [2]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return "", 0, repSucceeded, err
	}
	if head[1] != socksConnect {
		return "", 0, repNoCommand, fmt.Errorf("SOCKS command %d: only CONNECT is served", head[1])
	}
	return host, binary.BigEndian.Uint16(p[:]), repSucceeded, nil
}

// socksReply answers a request; the bound address is not reported.
func socksReply(c net.Conn, rep byte) error {
	_, err := c.Write([]byte{socksVersion, rep, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}
