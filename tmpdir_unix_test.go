//go:build unix

package sandboxexec

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sweep takes only what a dead host left: an old, unlocked directory of
// this user's with the prefix; not one a live call holds, not a young one
// (its host may not have locked it yet), not another name, and not a
// symlink's target.
func TestSweepStaleTMPDIRs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	sweepOnce.Do(func() {}) // this test sweeps, not a call's goroutine
	old := time.Now().Add(-2 * staleAfter)
	mkdir := func(name string, aged bool) string {
		dir := filepath.Join(tmp, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "b", "f"), []byte("x"), 0o644))
		if aged {
			require.NoError(t, os.Chtimes(dir, old, old))
		}
		return dir
	}
	stale := mkdir(tmpDirPrefix+"stale", true)
	// The command took its own permissions away; a host that is not root
	// gives them back before it removes the tree.
	require.NoError(t, os.Chmod(filepath.Join(stale, "a", "b"), 0))
	require.NoError(t, os.Chmod(filepath.Join(stale, "a"), 0))
	require.NoError(t, os.Chtimes(stale, old, old))
	young := mkdir(tmpDirPrefix+"young", false)
	other := mkdir("other", true)
	target := mkdir("target", true)
	link := filepath.Join(tmp, tmpDirPrefix+"link")
	require.NoError(t, os.Symlink(target, link))

	_, held, err := privateTMPDIR([]string{"TMPDIR=/nonexistent"}, []string{t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, tmp, filepath.Dir(held))
	require.NoError(t, os.Chtimes(held, old, old))

	sweepStaleTMPDIRs(tmp)
	assert.NoDirExists(t, stale)
	assert.DirExists(t, held, "a live call's TMPDIR is locked")
	assert.DirExists(t, young)
	assert.DirExists(t, other)
	assert.FileExists(t, filepath.Join(target, "a", "b", "f"))
	_, err = os.Lstat(link)
	assert.NoError(t, err, "the symlink stays")

	removeTMPDIR(held)
	assert.NoDirExists(t, held)
	_, locked := tmpDirLocks.Load(held)
	assert.False(t, locked, "the lock was let go")
}
