package sandboxexec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const wantSeatbeltProxy = `
; AllowedDomains: outbound connections to the call's proxy only.
(allow network-outbound
  (remote ip (string-append "localhost:" (param "PROXY_PORT"))))
(allow mach-lookup
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.trustd")
  (global-name "com.apple.trustd.agent"))
`

// CreateSeatbeltCommand has no proxy to point the profile at.
func TestCreateSeatbeltCommandAllowedDomains(t *testing.T) {
	argv, err := CreateSeatbeltCommand([]string{"curl", "https://example.com"}, nil,
		SandboxPolicy{AllowedDomains: []string{"example.com"}})
	assert.ErrorContains(t, err, "ProcessExecToolCall")
	assert.Nil(t, argv)
	// NetworkAccess with AllowedDomains is the policy's own error.
	_, err = CreateSeatbeltCommand([]string{"true"}, nil,
		SandboxPolicy{NetworkAccess: true, AllowedDomains: []string{"example.com"}})
	assert.ErrorContains(t, err, "exclude each other")
}

// With a proxy port, the profile lets the command connect to that port on
// the loopback interface and nowhere else; the port is a parameter.
func TestSeatbeltProxyProfile(t *testing.T) {
	root := realDir(t, "root")
	policy := SandboxPolicy{AllowedDomains: []string{"example.com", "*.golang.org"}}
	params, err := seatbeltPrefix([]string{root}, policy, 43127)
	require.NoError(t, err)
	argv := append(seatbeltArgv(params, policy), "--", "curl", "https://example.com")
	assert.Equal(t, []string{
		"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy + wantSeatbeltRoots(1) + wantSeatbeltProxy,
		"-DWRITABLE_ROOT_0=" + root,
		"-DPROXY_PORT=43127",
		"--", "curl", "https://example.com",
	}, argv)
	forms := checkSeatbeltArgv(t, argv)
	var network []sexp
	for _, f := range forms {
		if !f.isCall("allow") {
			continue
		}
		for _, op := range f.list[1:] {
			if strings.HasPrefix(op.atom, "network") || op.atom == "system-socket" {
				network = append(network, f)
			}
		}
	}
	require.Len(t, network, 1, "one network rule")
	assert.Equal(t, `(allow network-outbound (remote ip (string-append "localhost:" (param "PROXY_PORT"))))`, network[0].String())
	assert.NotContains(t, argv[2], "DNSConfiguration", "the proxy resolves names, not the command")
	assert.NotContains(t, argv[2], "(allow network-bind")

	// The text does not depend on the port; the filesystem rules still
	// come last.
	params.readOnlyDirs = []string{root + "/.git"}
	other := seatbeltPolicy(seatbeltParams{roots: params.roots, proxyPort: 1, readOnlyDirs: params.readOnlyDirs}, policy)
	assert.Equal(t, seatbeltPolicy(params, policy), other)
	assert.True(t, strings.HasSuffix(other, wantSeatbeltProxy+wantSeatbeltReadOnly(1, 0)))
}

// The runner's port must match the policy, and the proxy's variables go
// into the command's environment over what it had.
func TestSeatbeltRunnerProxy(t *testing.T) {
	policy := SandboxPolicy{AllowedDomains: []string{"example.com"}}
	for _, port := range []int{0, -1, 65536} {
		_, err := newSeatbeltRunner(nil, policy, port)
		assert.ErrorContains(t, err, "proxy port", "port %d", port)
	}
	_, err := newSeatbeltRunner(nil, SandboxPolicy{}, 8080)
	assert.ErrorContains(t, err, "proxy port")

	r, err := newSeatbeltRunner(nil, policy, 8080)
	require.NoError(t, err)
	r.proxyEnv = []string{"HTTPS_PROXY=http://sbx:tok@127.0.0.1:8080", "NO_PROXY", "no_proxy"}
	env := []string{"HTTPS_PROXY=http://elsewhere", "NO_PROXY=*", "PATH=/bin", "no_proxy=example.com", "No_Proxy=*",
		"FTP_PROXY=http://user:pass@elsewhere", "ELECTRON_GET_USE_PROXY=true"}
	got, tmp, err := r.request(&spawnRequest{path: "/usr/bin/curl", argv: []string{"curl"}, env: env})
	require.NoError(t, err)
	assert.Empty(t, tmp)
	assert.Equal(t, []string{"PATH=/bin", "ELECTRON_GET_USE_PROXY=true", "SANDBOXEXEC_SANDBOX=seatbelt",
		"SANDBOXEXEC_NETWORK_DISABLED=1", "HTTPS_PROXY=http://sbx:tok@127.0.0.1:8080"}, got.env)
	assert.Equal(t, []string{"HTTPS_PROXY=http://elsewhere", "NO_PROXY=*", "PATH=/bin", "no_proxy=example.com", "No_Proxy=*",
		"FTP_PROXY=http://user:pass@elsewhere", "ELECTRON_GET_USE_PROXY=true"}, env,
		"the caller's environment is left as it was")
	assert.Contains(t, got.argv, "-DPROXY_PORT=8080")
	assert.Contains(t, got.argv[2], wantSeatbeltProxy)
	checkSeatbeltArgv(t, got.argv)
}
