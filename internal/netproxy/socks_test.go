package netproxy

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// socks runs a SOCKS5 CONNECT through the proxy at addr and returns the
// reply code, and the connection when it succeeded.
func socks(t *testing.T, addr, user, password string, atyp byte, dest []byte, port uint16) (byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	c.Write([]byte{5, 1, socksAuthUser})
	reply := make([]byte, 2)
	_, err = io.ReadFull(c, reply)
	require.NoError(t, err)
	require.Equal(t, []byte{5, socksAuthUser}, reply)
	c.Write(append(append(append([]byte{1, byte(len(user))}, user...), byte(len(password))), password...))
	_, err = io.ReadFull(c, reply)
	require.NoError(t, err)
	if reply[1] != 0 {
		c.Close()
		return 0xff, nil
	}
	req := append([]byte{5, 1, 0, atyp}, dest...)
	req = binary.BigEndian.AppendUint16(req, port)
	c.Write(req)
	rep := make([]byte, 10)
	_, err = io.ReadFull(c, rep)
	require.NoError(t, err)
	if rep[1] != 0 {
		c.Close()
		return rep[1], nil
	}
	return 0, c
}

func domain(name string) []byte { return append([]byte{byte(len(name))}, name...) }

func TestSOCKS5(t *testing.T) {
	plain := server(t, false)
	var port16 uint16
	for _, c := range port(plain) {
		port16 = port16*10 + uint16(c-'0')
	}
	p, addr := start(t, []string{"allowed.test", "*.wild.test"}, map[string]string{
		"allowed.test": "127.0.0.1", "a.wild.test": "127.0.0.1",
	})

	rep, c := socks(t, addr, User, p.token, socksDomain, domain("allowed.test"), port16)
	require.Equal(t, byte(0), rep)
	io.WriteString(c, "GET /s HTTP/1.0\r\nHost: allowed.test\r\n\r\n")
	b, _ := io.ReadAll(c)
	c.Close()
	assert.Contains(t, string(b), "GET /s")

	rep, _ = socks(t, addr, User, "wrong", socksDomain, domain("allowed.test"), port16)
	assert.Equal(t, byte(0xff), rep, "authentication refused")
	rep, _ = socks(t, addr, User, p.token, socksIPv4, []byte{127, 0, 0, 1}, port16)
	assert.Equal(t, byte(repNotAllowed), rep)
	rep, _ = socks(t, addr, User, p.token, socksIPv6, net.IPv6loopback, port16)
	assert.Equal(t, byte(repNotAllowed), rep)
	rep, _ = socks(t, addr, User, p.token, socksDomain, domain("other.test"), port16)
	assert.Equal(t, byte(repNotAllowed), rep)
	rep, _ = socks(t, addr, User, p.token, socksDomain, domain("a.wild.test"), port16)
	assert.Equal(t, byte(repNotAllowed), rep, "a wildcard never leads to loopback")
	rep, _ = socks(t, addr, User, p.token, 9, domain("allowed.test"), port16)
	assert.Equal(t, byte(repNoAddrType), rep)
	rep, _ = socks(t, addr, User, p.token, socksDomain, domain(""), port16)
	assert.Equal(t, byte(repFailure), rep, "an empty name is a malformed request, not a destination")

	p16 := port(plain)
	assert.Equal(t, []string{"127.0.0.1:" + p16, "[::1]:" + p16, "other.test:" + p16, "a.wild.test:" + p16}, p.Denied())

	// Without username/password among its methods, a client is refused.
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	nc.Write([]byte{5, 1, 0})
	reply := make([]byte, 2)
	_, err = io.ReadFull(nc, reply)
	require.NoError(t, err)
	assert.Equal(t, []byte{5, socksNoMethod}, reply)
}

func TestReadSOCKSRequest(t *testing.T) {
	host, port, _, err := readSOCKSRequest(bytes.NewReader([]byte{5, 1, 0, 3, 4, 'a', '.', 'b', 'c', 0, 80}))
	require.NoError(t, err)
	assert.Equal(t, "a.bc", host)
	assert.Equal(t, uint16(80), port)
	_, _, rep, err := readSOCKSRequest(bytes.NewReader([]byte{5, 2, 0, 1, 1, 2, 3, 4, 0, 80}))
	assert.Error(t, err)
	assert.Equal(t, byte(repNoCommand), rep, "BIND is not served")
	_, _, rep, err = readSOCKSRequest(bytes.NewReader([]byte{5, 1, 0, 3, 0, 0, 80}))
	assert.Error(t, err)
	assert.Equal(t, byte(repFailure), rep, "an empty name is no destination")
	_, _, rep, err = readSOCKSRequest(strings.NewReader("\x05\x01\x00\x03\x09short"))
	assert.Error(t, err)
	assert.Equal(t, byte(0), rep, "a truncated request gets no reply")
}
