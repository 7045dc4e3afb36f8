//go:build linux && cgo

package sandboxexec

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each spare goes to one call, as new as one it would open itself, and
// none is left once they are dropped.
func TestSparesTakenOnce(t *testing.T) {
	sbOff(t) // no standby in the making fills them meanwhile
	dropSpares()
	fillSpares()
	fillSpares() // full: opens nothing more
	assert.Len(t, spares.pipes, 2*spareSets)
	assert.Len(t, spares.null, spareSets)
	assert.Len(t, spares.killed, spareSets)

	r1, w1, err := capturePipe()
	require.NoError(t, err)
	r2, w2, err := capturePipe()
	require.NoError(t, err)
	assert.NotEqual(t, r1.Fd(), r2.Fd())
	_, ok := takeSpare(&spares.pipes)
	assert.False(t, ok, "both pipes taken")
	_, err = w1.Write([]byte("x"))
	require.NoError(t, err)
	w1.Close()
	buf := make([]byte, 2)
	n, err := r1.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "x", string(buf[:n]), "a spare pipe carries what its writer writes")
	for _, f := range []*os.File{r1, r2, w2} {
		f.Close()
	}

	null, err := openNull(true)
	require.NoError(t, err)
	n, err = null.Read(buf)
	assert.Zero(t, n)
	assert.Error(t, err, "the null device reads nothing")
	null.Close()
	killed, err := newEventfd()
	require.NoError(t, err)
	killed.Close()

	fillSpares()
	kept := []*os.File{spares.pipes[0][0], spares.pipes[0][1], spares.null[0], spares.killed[0]}
	dropSpares()
	for _, f := range kept {
		assert.Equal(t, ^uintptr(0), f.Fd(), "%s: dropped, a spare is closed", f.Name())
	}
	_, ok = takeSpare(&spares.null)
	assert.False(t, ok)

	fillSpares()
	standbys.mu.Lock()
	standbys.dropUnused(0)
	standbys.mu.Unlock()
	assert.Empty(t, spares.pipes, "dropped with the last standby")
	assert.Empty(t, spares.null)
	assert.Empty(t, spares.killed)
}
