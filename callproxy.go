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
// case: Python's urllib reads a name in any case (No_Proxy=* sent a
// command's requests around the proxy, where they reached nothing; found
// in review), and a host's Https_Proxy may carry its own proxy's password.
func isProxyVariable(name string) bool {
	return slices.ContainsFunc(proxyVariables, func(v string) bool { return strings.EqualFold(v, name) })
}

// isHostProxy says whether the environment entry kv ("NAME=value") is a
// proxy of the host's to remove: one of proxyVariables, or any other
// SCHEME_proxy (any case) whose value names a proxy (a URL, or host:port).
// Python's urllib reads every SCHEME_proxy, curl WS_PROXY and WSS_PROXY,
// npm and pip their own (npm_config_https_proxy, PIP_PROXY), and a
// host's may carry its own proxy's password, which the command could send
// to an allowed domain (found in review: FTP_PROXY and WSS_PROXY were
// handed on). A flag (NODE_USE_ENV_PROXY=1), which names none, stays.
func isHostProxy(kv string) bool {
	const suffix = "_proxy"
	name, _ := envName(kv)
	if isProxyVariable(name) {
		return true
	}
	value := kv[min(len(name)+1, len(kv)):]
	return len(name) > len(suffix) && strings.EqualFold(name[len(name)-len(suffix):], suffix) &&
		strings.ContainsAny(value, ":@/")
}

// proxyEnv sets the variables that point the command at the proxy, and
// removes those that would route around it.
func proxyEnv(env []string, p callProxy, addr string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !isHostProxy(kv) {
			out = append(out, kv)
		}
	}
	return append(out, p.Env(addr)...)
}
