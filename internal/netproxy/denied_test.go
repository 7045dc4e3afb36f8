package netproxy

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 100,000 distinct refusals list MaxDenied of them, the first ones, and
// the heap keeps well under a megabyte of them; every one is still refused.
func TestProxyDeniedCapped(t *testing.T) {
	p, err := New([]string{"allowed.test"})
	require.NoError(t, err)
	defer p.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const workers, each = 8, 100_000 / 8
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := p.connect(fmt.Sprintf("host-%d-%d.refused.test", w, i), 443)
				var r *refusal
				if !assert.ErrorAs(t, err, &r) {
					return
				}
			}
		}()
	}
	wg.Wait()
	runtime.GC()
	runtime.ReadMemStats(&after)
	denied := p.Denied()
	assert.Len(t, denied, MaxDenied)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	assert.Less(t, grown, int64(1<<20), "heap grew by %d bytes", grown)

	// Past the cap a new destination is refused, and not listed.
	_, err = p.connect("late.refused.test", 80)
	var r *refusal
	assert.ErrorAs(t, err, &r)
	assert.NotContains(t, p.Denied(), "late.refused.test:80")
	assert.Len(t, p.Denied(), MaxDenied)
}

// A destination is listed once under its normalized name: case, a
// trailing dot and an IP address's spelling do not make another entry, a
// name too long for DNS is cut, and what does not print (an escape
// sequence, a line break, a bidi override) is U+FFFD.
func TestProxyDeniedNormalized(t *testing.T) {
	p, err := New([]string{"allowed.test"})
	require.NoError(t, err)
	defer p.Close()
	long := strings.Repeat("a", 40_000)
	for _, host := range []string{
		"EXAMPLE.com", "example.com.", "Example.COM.", "example.com",
		"127.0.0.1", "::1", "[0:0::1]", "0:0:0:0:0:0:0:1",
		"Bad_Name..", "bad_name.", long, long + "b",
		"bad\xffname.", "evil\x1b[31m.test", "a\nfake: line\r", "evil\u202emoc.test", "z\x00",
		// An IPv6 address's zone holds any bytes a SOCKS5 name gives.
		"fe80::1%\x1b[2J\nsandboxrun: fake", "[fe80::2%" + long + "]",
	} {
		_, err := p.connect(host, 80)
		var r *refusal
		require.ErrorAs(t, err, &r, "%q", host)
	}
	assert.Equal(t, []string{
		"example.com:80", "127.0.0.1:80", "[::1]:80", "bad_name.:80", "bad_name:80",
		strings.Repeat("a", maxNameLen) + "…:80", "bad\uFFFDname:80",
		"evil\uFFFD[31m.test:80", "[a\uFFFDfake: line\uFFFD]:80", "evil\uFFFDmoc.test:80", "z\uFFFD:80",
		"[fe80::1%\uFFFD[2J\uFFFDsandboxrun: fake]:80", "[fe80::2%" + strings.Repeat("a", maxNameLen-len("fe80::2%")) + "…]:80",
	}, p.Denied())
}
