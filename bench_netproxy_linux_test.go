//go:build linux && cgo

package sandboxexec

import (
	"context"
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
