//go:build darwin

package sandboxexec

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real-Seatbelt twin of the Linux proxy tests: with AllowedDomains
// {"localhost"}, curl reaches host-side HTTP and TLS servers on 127.0.0.1
// through the call's proxy by that name; by address it is refused and the
// destinations are listed in DeniedHosts; a connection that ignores the
// proxy variables is stopped by the profile.
func TestSeatbeltAllowedDomains(t *testing.T) {
	requireSeatbelt(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s", r.URL.Path) })
	plain, secure := httptest.NewServer(h), httptest.NewTLSServer(h)
	t.Cleanup(plain.Close)
	t.Cleanup(secure.Close)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	policy := SandboxPolicy{AllowedDomains: []string{"localhost"}}
	byName := func(u string) string {
		p, err := url.Parse(u)
		require.NoError(t, err)
		p.Host = "localhost:" + p.Port()
		return p.String()
	}

	t.Run("through the proxy", func(t *testing.T) {
		out, err := seatbeltRun(t, root, policy, `curl -sS -f -k --max-time 10 "$1" "$2"`,
			byName(plain.URL)+"/p", byName(secure.URL)+"/t")
		require.NoError(t, err, "stderr: %s", out.Stderr)
		assert.Equal(t, "hello from /phello from /t", out.Stdout)
		assert.Nil(t, out.DeniedHosts)
	})
	t.Run("by address", func(t *testing.T) {
		out, err := seatbeltRun(t, root, policy,
			`for u in "$@"; do curl -sS -f -k --max-time 10 "$u" && echo "reached $u"; done; exit 1`,
			plain.URL+"/p", secure.URL+"/t")
		var denied *SandboxDeniedError
		assert.True(t, errors.As(err, &denied), "want a SandboxDeniedError, got %v (stderr %q)", err, out.Stderr)
		assert.NotContains(t, out.Stdout, "reached")
		assert.Equal(t, []string{strings.TrimPrefix(plain.URL, "http://"), strings.TrimPrefix(secure.URL, "https://")}, out.DeniedHosts)
	})
	t.Run("direct", func(t *testing.T) {
		port, accepted := seatbeltListen(t)
		params := ExecParams{Command: []string{"/bin/bash", "-c",
			`curl -sS --noproxy '*' --max-time 5 "http://127.0.0.1:$1/" && echo reached; ` + seatbeltConnectScript, "bash", port}}
		out, _ := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, []string{root}, policy)
		assert.NotEqual(t, 0, out.ExitCode, "stdout %q", out.Stdout)
		assert.NotContains(t, out.Stdout, "reached")
		assert.NotContains(t, out.Stdout, "connected")
		assert.Nil(t, out.DeniedHosts, "the proxy never saw it")
		select {
		case <-accepted:
			t.Fatal("the listener accepted a connection from the sandbox")
		case <-time.After(200 * time.Millisecond):
		}
	})
}
