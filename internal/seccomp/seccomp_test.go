//go:build linux && cgo

package seccomp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProgramBuildsAndIsCached(t *testing.T) {
	for _, deny := range []bool{false, true} {
		p1, err := Program(deny)
		require.NoError(t, err)
		require.NotEmpty(t, p1)
		require.Zero(t, len(p1)%8, "a BPF program is whole 8-byte instructions")
		p2, err := Program(deny)
		require.NoError(t, err)
		require.Equal(t, &p1[0], &p2[0], "the program is built once per variant")
		t.Logf("denyNetwork=%v: %d instructions", deny, len(p1)/8)
	}
	open, _ := Program(false)
	closed, _ := Program(true)
	require.Greater(t, len(closed), len(open), "the network rules add instructions")
}

func TestAvailable(t *testing.T) {
	require.NoError(t, Available())
}
