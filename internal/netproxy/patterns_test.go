package netproxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatcher(t *testing.T) {
	m, err := NewMatcher([]string{"example.com", "*.example.org", "Bücher.example", "*.XN--FSQ.test.", "a_b.example"})
	require.NoError(t, err)
	for _, tc := range []struct {
		host           string
		allowed, exact bool
	}{
		{"example.com", true, true},
		{"EXAMPLE.com.", true, true},
		{"www.example.com", false, false},
		{"evilexample.com", false, false},
		{"example.com.evil", false, false},
		{"example.org", false, false},
		{"a.example.org", true, false},
		{"a.b.example.org", true, false},
		{"A.B.EXAMPLE.ORG.", true, false},
		{"evilexample.org", false, false},
		{"xn--bcher-kva.example", true, true},
		{"bücher.example", true, true},
		{"BÜCHER.example", true, true},
		{"www.例.test", true, false},
		{"例.test", false, false},
		{"a_b.example", true, true},
	} {
		t.Run(tc.host, func(t *testing.T) {
			host, err := NormalizeHost(tc.host)
			require.NoError(t, err)
			allowed, exact := m.Match(host)
			assert.Equal(t, tc.allowed, allowed, "allowed")
			assert.Equal(t, tc.exact, exact, "exact")
		})
	}
}

func TestMatcherRefuses(t *testing.T) {
	for _, bad := range []string{
		"", ".", "*", "*.", "**.example.com", "a.*.example.com", "*example.com", "example.*",
		"127.0.0.1", "::1", "[::1]", "10.1", "0x7f.1", "192.168.0.300",
		"example.com:443", "https://example.com", "example.com/x", "user@example.com",
		"exa mple.com", "a..b", "-", "example.com..", string(make([]byte, 300)),
	} {
		_, err := NewMatcher([]string{bad})
		assert.Error(t, err, "%q", bad)
		if err != nil {
			assert.Contains(t, err.Error(), "pattern", "%q", bad)
		}
	}
}

func FuzzNewMatcher(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "Bücher.example", "127.0.0.1", "a:1", "*"} {
		f.Add(s, "www.example.com")
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		m, err := NewMatcher([]string{pattern})
		if err != nil {
			return
		}
		h, err := NormalizeHost(host)
		if err != nil {
			return
		}
		allowed, exact := m.Match(h)
		if exact && !allowed {
			t.Fatalf("exact without allowed: %q %q", pattern, host)
		}
		// Normalizing is idempotent, so a normalized name matches as itself.
		h2, err := NormalizeHost(h)
		if err != nil || h2 != h {
			t.Fatalf("NormalizeHost(%q) = %q, then %q, %v", host, h, h2, err)
		}
	})
}
