//go:build linux && !cgo

package sandboxexec

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Linux build without cgo cannot apply the sandbox, and says so: the
// platform's sandbox is still SandboxLinuxSeccomp, and a call under it fails
// closed rather than running the command unconfined.
func TestLinuxWithoutCgoFailsClosed(t *testing.T) {
	require.Equal(t, SandboxLinuxSeccomp, PlatformSandbox())
	s := ProbeSandbox()
	assert.Equal(t, SandboxLinuxSeccomp, s.Sandbox)
	assert.False(t, s.Available)
	assert.Contains(t, s.Detail, "cgo")

	marker := filepath.Join(t.TempDir(), "ran")
	_, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"touch", marker}},
		PlatformSandbox(), []string{t.TempDir()}, SandboxPolicy{})
	require.ErrorIs(t, err, ErrSandboxUnavailable)
	assert.Contains(t, err.Error(), "cgo")
	assert.NoFileExists(t, marker, "nothing ran")
}
