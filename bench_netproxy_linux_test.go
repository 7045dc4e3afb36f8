//go:build linux && cgo

package sandboxexec

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The spawn with AllowedDomains (a network namespace and the call's proxy)
// beside the zero policy; go run ./internal/benchtable measures the two
// alternately in one run.
func BenchmarkSpawnAllowedDomains(b *testing.B) {
	benchSandbox(b)
	root := b.TempDir()
	for _, tc := range []struct {
		name   string
		policy SandboxPolicy
	}{
		{"zero", SandboxPolicy{}},
		{"AllowedDomains", SandboxPolicy{AllowedDomains: []string{"example.com"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"/bin/true"}},
					SandboxLinuxSeccomp, []string{root}, tc.policy)
				if err != nil || out.ExitCode != 0 {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}

const benchDownloadBytes = 256 << 20

// benchDownloadServer serves benchDownloadBytes on 127.0.0.1.
func benchDownloadServer(b *testing.B) *httptest.Server {
	chunk := make([]byte, 1<<20)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(benchDownloadBytes))
		for i := 0; i < benchDownloadBytes/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	b.Cleanup(s.Close)
	return s
}

// benchDownloadCommand fetches u to /dev/null: curl where installed, else
// Python.
func benchDownloadCommand(u string) []string {
	if _, err := exec.LookPath("curl"); err == nil {
		return []string{"curl", "-sSf", "-o", "/dev/null", u}
	}
	return []string{"python3", "-c", "import sys, urllib.request\nr = urllib.request.urlopen(sys.argv[1])\nwhile r.read(1 << 20): pass", u}
}

// 256 MiB over loopback from inside the sandbox: through the call's proxy
// (AllowedDomains) beside straight to the server (NetworkAccess).
func BenchmarkDownloadProxy(b *testing.B) {
	benchSandbox(b)
	s := benchDownloadServer(b)
	port := s.URL[strings.LastIndexByte(s.URL, ':')+1:]
	root := b.TempDir()
	for _, tc := range []struct {
		name   string
		url    string
		policy SandboxPolicy
	}{
		{"NetworkAccess", s.URL + "/", SandboxPolicy{NetworkAccess: true}},
		{"AllowedDomains", "http://localhost:" + port + "/", SandboxPolicy{AllowedDomains: []string{"localhost"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(benchDownloadBytes)
			for i := 0; i < b.N; i++ {
				out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: benchDownloadCommand(tc.url)},
					SandboxLinuxSeccomp, []string{root}, tc.policy, WithEnv([]string{"PATH=/usr/bin:/bin"}))
				if err != nil || out.ExitCode != 0 {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}
