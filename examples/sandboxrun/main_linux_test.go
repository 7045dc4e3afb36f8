//go:build linux && cgo

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentbox/sandboxexec"
	"github.com/stretchr/testify/assert"
)

// -allow-domain for real: the allowed name is reached through the proxy,
// the same server by address is refused and named on stderr.
func TestRunAllowDomainProxy(t *testing.T) {
	if s := sandboxexec.ProbeSandbox(); !s.Available || !s.NetworkNamespace {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("the sandbox with a network namespace is required: %s", s.Detail)
		}
		t.Skipf("no network namespace here: %s", s.Detail)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	script := `
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
urllib.request.urlopen(sys.argv[2], timeout=10)
`
	r := runCLI(t, "", "-sandbox", "linux", "-w", t.TempDir(), "-allow-domain", "localhost", "--",
		py, "-c", script, "http://localhost:"+port+"/", srv.URL+"/")
	assert.NotEqual(t, 0, r.code)
	assert.Equal(t, "hello\n", r.stdout)
	assert.Contains(t, r.stderr, "sandboxrun: proxy refused 127.0.0.1:"+port+"\n")
}
