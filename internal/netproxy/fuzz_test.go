package netproxy

import (
	"bufio"
	"bytes"
	"testing"
	"unicode"
)

func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{
		"GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
		"GET http://[::1]/ HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		req, err := readRequest(bufio.NewReader(bytes.NewReader(head)))
		if err != nil {
			return
		}
		if req.host == "" {
			t.Fatalf("a request without a host: %q", head)
		}
		checkDeniedName(t, req.host, req.port)
		hopByHop(req.Header)
	})
}

func FuzzSOCKS(f *testing.F) {
	f.Add([]byte{5, 1, 2}, []byte{1, 3, 's', 'b', 'x', 1, 't'}, []byte{5, 1, 0, 3, 1, 'a', 0, 80})
	f.Add([]byte{5, 0}, []byte{1, 0, 0}, []byte{5, 1, 0, 1, 1, 2, 3, 4, 0, 80})
	f.Add([]byte{4}, []byte{}, []byte{5, 1, 0, 4})
	f.Add([]byte{5, 1, 2}, []byte{1, 0, 0}, []byte{5, 1, 0, 3, 6, 'a', 0x1b, '\n', 0xe2, 0x80, 0xae, 0, 80})
	f.Fuzz(func(t *testing.T, greeting, auth, request []byte) {
		readSOCKSGreeting(bytes.NewReader(greeting))
		readSOCKSAuth(bytes.NewReader(auth))
		host, port, rep, err := readSOCKSRequest(bytes.NewReader(request))
		if err == nil && (rep != 0 || len(host) > 255) {
			t.Fatalf("request %v: host %q rep %d", request, host, rep)
		}
		if err == nil {
			checkDeniedName(t, host, port)
		}
	})
}

// checkDeniedName fails unless the entry a refusal of host:port lists is
// one printable line of bounded length, whatever bytes host holds.
func checkDeniedName(t *testing.T, host string, port uint16) {
	name := deniedName(host, port)
	if len(name) > maxNameLen+len("[…]:65535") {
		t.Fatalf("deniedName(%q) is %d bytes", host, len(name))
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			t.Fatalf("deniedName(%q) = %q holds %U", host, name, r)
		}
	}
}
