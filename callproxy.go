package sandboxexec

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/agentbox/sandboxexec/internal/netproxy"
)

// callProxy is the in-process proxy of one call whose policy has
// AllowedDomains: the runner makes it before the command starts, serves
// the listener the command reaches, asks it what it refused once the
// command has ended, and closes it.
type callProxy interface {
	Serve(l net.Listener)
	Env(addr string) []string
	Denied() []string
	Close() error
}

// startCallProxy makes the proxy of one call.
func startCallProxy(policy SandboxPolicy) (callProxy, error) {
	p, err := netproxy.New(policy.AllowedDomains)
	if err != nil {
		return nil, fmt.Errorf("sandboxexec: policy: AllowedDomains: %w", err)
	}
	return p, nil
}

// proxyVariables are the variables that point a command at a proxy, or
// around it (NO_PROXY): the host's are never handed on under AllowedDomains.
var proxyVariables = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
	"http_proxy", "https_proxy", "all_proxy", "no_proxy"}

// isProxyVariable says whether name is one of proxyVariables in any letter
// case, or any other SCHEME_proxy: Python's urllib reads a name in any
// case (No_Proxy=* sent a command's requests around the proxy, where they
// reached nothing; found in review), and for any scheme (ftp_proxy), curl
// reads WS_PROXY and WSS_PROXY, npm and pip their own (npm_config_proxy,
// PIP_PROXY); a host's may carry its own proxy's password, which the
// command could send to an allowed domain (found in review: FTP_PROXY and
// WSS_PROXY were handed on).
func isProxyVariable(name string) bool {
	const suffix = "_proxy"
	return slices.ContainsFunc(proxyVariables, func(v string) bool { return strings.EqualFold(v, name) }) ||
		len(name) > len(suffix) && strings.EqualFold(name[len(name)-len(suffix):], suffix)
}

// proxyEnv sets the variables that point the command at the proxy, and
// removes those that would route around it.
func proxyEnv(env []string, p callProxy, addr string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if name, _ := envName(kv); !isProxyVariable(name) {
			out = append(out, kv)
		}
	}
	return append(out, p.Env(addr)...)
}
