// Package netproxy is the per-call proxy behind SandboxPolicy.AllowedDomains:
// an HTTP/1.1 forward proxy (absolute-URI requests and CONNECT) and a SOCKS5
// server on one listener, which lets a command reach the hosts its patterns
// name and nothing else.
package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// hostNames maps a name the way DNS lookups do (UTS #46: case, width,
// Unicode to punycode) without refusing "_", which real host names carry.
var hostNames = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.StrictDomainName(false))

// Matcher decides which host names a call may reach.
type Matcher struct {
	exact     map[string]bool
	wildcards map[string]bool // "*.example.com" is stored as "example.com"
}

// NewMatcher parses patterns: "example.com" matches that name only,
// "*.example.com" its subdomains at any depth. An empty pattern, an IP
// literal, a port, a scheme, a path, or a "*" anywhere else is an error
// naming the pattern.
func NewMatcher(patterns []string) (*Matcher, error) {
	m := &Matcher{exact: map[string]bool{}, wildcards: map[string]bool{}}
	for _, p := range patterns {
		name, wildcard := p, false
		if rest, ok := strings.CutPrefix(p, "*."); ok {
			name, wildcard = rest, true
		}
		host, err := NormalizeHost(name)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
		if wildcard {
			m.wildcards[host] = true
		} else {
			m.exact[host] = true
		}
	}
	return m, nil
}

// Match reports whether host (normalized by NormalizeHost) is allowed, and
// whether an exact pattern allowed it rather than a wildcard.
func (m *Matcher) Match(host string) (allowed, exact bool) {
	if m.exact[host] {
		return true, true
	}
	for i := 0; i < len(host); i++ {
		if host[i] == '.' && m.wildcards[host[i+1:]] {
			return true, false
		}
	}
	return false, false
}

var errIPLiteral = errors.New("an IP address is not a host name")

// NormalizeHost returns the name a pattern or a request names, in the form
// patterns are matched in: ASCII (punycode), lower case, without a trailing
// dot. It refuses what is not a plain DNS name: IP literals (including the
// numeric forms that resolvers read as IPv4), ports, schemes, paths,
// wildcards, empty labels.
func NormalizeHost(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty name")
	}
	if !utf8.ValidString(s) {
		return "", errors.New("not UTF-8")
	}
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return "", errIPLiteral
	}
	if i := strings.IndexAny(s, ":/?#@*[] \t\r\n\\"); i >= 0 {
		return "", fmt.Errorf("%q is not allowed in a host name (no scheme, port or path; the one wildcard is a pattern's leading \"*.\")", s[i])
	}
	name := strings.TrimSuffix(s, ".")
	ascii, err := hostNames.ToASCII(name)
	if err != nil {
		return "", fmt.Errorf("not a valid host name: %v", err)
	}
	ascii = strings.ToLower(ascii)
	if len(ascii) == 0 || len(ascii) > 253 {
		return "", errors.New("a host name is 1 to 253 characters")
	}
	labels := strings.Split(ascii, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", fmt.Errorf("label %q: a label is 1 to 63 characters", l)
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("label %q: %q is not allowed in a host name", l, c)
			}
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		// "10.1" or "0x7f.1" are addresses to inet_aton, not names.
		return "", errIPLiteral
	}
	return ascii, nil
}
