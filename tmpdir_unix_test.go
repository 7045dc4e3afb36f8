//go:build unix

package sandboxexec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
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
	stale := mkdir(tmpDirPrefix+"12345", true)
	// The command took its own permissions away; a host that is not root
	// gives them back before it removes the tree.
	require.NoError(t, os.Chmod(filepath.Join(stale, "a", "b"), 0))
	require.NoError(t, os.Chmod(filepath.Join(stale, "a"), 0))
	require.NoError(t, os.Chtimes(stale, old, old))
	young := mkdir(tmpDirPrefix+"23456", false)
	lookalike := mkdir(tmpDirPrefix+"mine", true) // a user's own
	other := mkdir("other", true)
	target := mkdir("target", true)
	link := filepath.Join(tmp, tmpDirPrefix+"34567")
	require.NoError(t, os.Symlink(target, link))

	_, held, err := privateTMPDIR([]string{"TMPDIR=/nonexistent"}, []string{t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, tmp, filepath.Dir(held))
	require.NoError(t, os.Chtimes(held, old, old))

	sweepStaleTMPDIRs(tmp)
	assert.NoDirExists(t, stale)
	assert.DirExists(t, held, "a live call's TMPDIR is locked")
	assert.DirExists(t, young)
	assert.DirExists(t, lookalike)
	assert.DirExists(t, other)
	assert.FileExists(t, filepath.Join(target, "a", "b", "f"))
	_, err = os.Lstat(link)
	assert.NoError(t, err, "the symlink stays")

	removeTMPDIR(held)
	assert.NoDirExists(t, held)
	_, locked := tmpDirLocks.Load(held)
	assert.False(t, locked, "the lock was let go")
}

// removeTree takes what a command can leave: a tree deeper than a path can
// name (PATH_MAX is 4096 here), directories without permissions, a FIFO,
// and a symlink, whose target stays. (Made by path at the top: not every
// unix has Mkfifoat and Symlinkat.)
func TestRemoveTree(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.Mkdir(tree, 0o755))
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("kept"), 0o644))

	require.NoError(t, unix.Mkfifo(filepath.Join(tree, "fifo"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(tree, "link")))
	fd, err := unix.Open(tree, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	name := strings.Repeat("d", 50)
	for i := range 200 { // 200 levels of 51 bytes: 10200 bytes of path
		require.NoError(t, unix.Mkdirat(fd, name, 0o755))
		require.NoError(t, unix.Mkdirat(fd, "side", 0o755))
		f, err := unix.Openat(fd, "file", unix.O_CREAT|unix.O_WRONLY, 0o644)
		require.NoError(t, err)
		unix.Close(f)
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		if i%40 == 39 { // no way in for a host that is not root
			require.NoError(t, unix.Fchmodat(fd, name, 0, 0))
		}
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)

	require.NoError(t, removeTree(tree))
	assert.NoDirExists(t, tree)
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "kept", string(data))
}

// waitTMPDIRCleanups returns once no clean-up afterCall began is running.
func waitTMPDIRCleanups() {
	tmpCleanups.Lock()
	for tmpCleanups.n > 0 {
		tmpCleanups.none.Wait()
	}
	tmpCleanups.Unlock()
}
