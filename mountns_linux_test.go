//go:build linux && cgo

package sandboxexec

// The mount namespaces kept for later calls (mountns_linux.go): joined
// while they hold what a call would make, dropped when they may not.

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

func mnsRequireKept(t *testing.T) {
	t.Helper()
	fsRequireMounts(t)
	if !hostHasSysAdmin() {
		t.Skip("namespaces are kept only where the host makes them itself (CAP_SYS_ADMIN)")
	}
}

// mnsRun runs script sandboxed and returns its output, and how many
// namespaces were made for it (a namespace's number in /proc/self/ns is
// no sign: the number of one dropped is given to the next).
func mnsRun(t *testing.T, roots []string, policy SandboxPolicy, script string, args ...string) (out string, made int) {
	t.Helper()
	mountNamespaces.mu.Lock()
	before := mountNamespaces.made
	mountNamespaces.mu.Unlock()
	o, err := lxRun(t, lxSh(script, args...), roots, policy)
	lxDeniedOrNil(t, o, err)
	mountNamespaces.mu.Lock()
	defer mountNamespaces.mu.Unlock()
	return o.Stdout, mountNamespaces.made - before
}

func TestMountNamespaceKept(t *testing.T) {
	sbOff(t) // a standby holds the namespace it joined
	mnsRequireKept(t)
	root, secret := lxRealDir(t), lxRealDir(t)
	mnsRun(t, []string{root}, SandboxPolicy{}, "true")
	_, made := mnsRun(t, []string{root}, SandboxPolicy{}, "true")
	assert.Zero(t, made, "a second call with the same mounts joins the first's namespace")
	out, _ := mnsRun(t, []string{root}, SandboxPolicy{}, `readlink /proc/self/ns/mnt`)
	host, err := os.Readlink("/proc/self/ns/mnt")
	require.NoError(t, err)
	assert.NotEqual(t, host+"\n", out)
	_, made = mnsRun(t, []string{root}, SandboxPolicy{DenyRead: []string{secret}}, "true")
	assert.Equal(t, 1, made, "other mounts, another namespace")
}

// A namespace with pinned directories is kept as any other: a later call
// joins it, and finds the directories pinned there too.
func TestMountNamespaceKeptPinned(t *testing.T) {
	sbOff(t) // a standby holds the namespace it joined
	mnsRequireKept(t)
	root := lxRealDir(t)
	secret := filepath.Join(root, "config", "prod.env")
	require.NoError(t, os.Mkdir(filepath.Dir(secret), 0o755))
	require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
	policy := SandboxPolicy{DenyRead: []string{secret}}
	mnsRun(t, []string{root}, policy, "true")
	out, made := mnsRun(t, []string{root}, policy, `cd "$1" && mv config cfg2 2>&1; cat cfg2/prod.env config/prod.env 2>&1; true`, root)
	assert.Zero(t, made, "a second call with the same mounts joins the first's namespace")
	assert.Contains(t, out, "busy")
	assert.NotContains(t, out, "SECRET")
	assert.FileExists(t, secret)
}

// A mount the host makes after a namespace was kept is in the next call's:
// the change of the host's mount table drops the kept one.
func TestMountNamespaceHostMountSeen(t *testing.T) {
	sbOff(t) // a standby holds the namespace it joined
	mnsRequireKept(t)
	root := lxRealDir(t)
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	mnsRun(t, []string{root}, SandboxPolicy{}, "true")
	require.NoError(t, unix.Mount("sandboxexec-test", sub, "tmpfs", 0, "size=64k"))
	t.Cleanup(func() { unix.Unmount(sub, unix.MNT_DETACH) })
	require.NoError(t, os.WriteFile(filepath.Join(sub, "marker"), []byte("mounted\n"), 0o644))
	out, made := mnsRun(t, []string{root}, SandboxPolicy{}, `cat "$1/marker" && echo new > "$1/new"`, sub)
	assert.Equal(t, "mounted\n", out)
	assert.Equal(t, 1, made)
	got, err := os.ReadFile(filepath.Join(sub, "new"))
	require.NoError(t, err, "the command wrote into the host's new mount")
	assert.Equal(t, "new\n", string(got))
}

// A call that comes while the goroutine that watches the host's mounts has
// seen a change, but not yet dropped the namespaces, sees the change too.
func TestMountNamespaceHostMountSeenWhileWatched(t *testing.T) {
	sbOff(t)
	mnsRequireKept(t)
	root := lxRealDir(t)
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	mnsRun(t, []string{root}, SandboxPolicy{}, "true")
	saw, resume := make(chan struct{}), make(chan struct{})
	hook := func() {
		mountWatchSawHook.Store(nil)
		close(saw)
		<-resume
	}
	mountWatchSawHook.Store(&hook)
	t.Cleanup(func() { mountWatchSawHook.Store(nil) })
	require.NoError(t, unix.Mount("sandboxexec-test", sub, "tmpfs", 0, "size=64k"))
	t.Cleanup(func() { unix.Unmount(sub, unix.MNT_DETACH) })
	require.NoError(t, os.WriteFile(filepath.Join(sub, "marker"), []byte("mounted\n"), 0o644))
	select {
	case <-saw:
	case <-time.After(5 * time.Second):
		t.Fatal("the watching goroutine did not see the mount")
	}
	out, made := mnsRun(t, []string{root}, SandboxPolicy{}, `cat "$1/marker"`, sub)
	close(resume)
	assert.Equal(t, "mounted\n", out)
	assert.Equal(t, 1, made)
}

// A namespace made while the host changes its mounts serves the call that
// made it, and is not kept: the next call makes one with the new mount.
func TestMountNamespaceHostMountWhileMade(t *testing.T) {
	sbOff(t) // a standby holds the namespace it joined
	mnsRequireKept(t)
	root := lxRealDir(t)
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	mountNamespaceMadeHook = func() {
		mountNamespaceMadeHook = nil
		require.NoError(t, unix.Mount("sandboxexec-test", sub, "tmpfs", 0, "size=64k"))
		require.NoError(t, os.WriteFile(filepath.Join(sub, "marker"), []byte("mounted\n"), 0o644))
	}
	t.Cleanup(func() {
		mountNamespaceMadeHook = nil
		unix.Unmount(sub, unix.MNT_DETACH)
	})
	_, made := mnsRun(t, []string{root}, SandboxPolicy{}, "true")
	require.Equal(t, 1, made)
	out, made := mnsRun(t, []string{root}, SandboxPolicy{}, `cat "$1/marker"`, sub)
	assert.Equal(t, "mounted\n", out, "the namespace made before the mount was not kept")
	assert.Equal(t, 1, made)
}

// A denied file the host unlinks and links again (the same file, a new
// directory entry) takes its cover away in a kept namespace: the next call
// gets a namespace whose cover is on the new entry.
func TestMountNamespaceTargetRelinked(t *testing.T) {
	sbOff(t) // a standby holds the namespace it joined
	mnsRequireKept(t)
	root, dir := lxRealDir(t), lxRealDir(t)
	secret, other := filepath.Join(dir, "token"), filepath.Join(dir, "other")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
	policy := SandboxPolicy{DenyRead: []string{secret}}
	out, _ := mnsRun(t, []string{root}, policy, `cat "$1"`, secret)
	assert.Empty(t, out)
	require.NoError(t, os.Link(secret, other))
	require.NoError(t, os.Remove(secret))
	require.NoError(t, os.Link(other, secret))
	require.NoError(t, os.Remove(other))
	out, made := mnsRun(t, []string{root}, policy, `cat "$1"`, secret)
	assert.Empty(t, out, "the relinked file is covered")
	assert.Equal(t, 1, made)
}

// Kept namespaces go once unused for a while (c.idle), descriptors and
// the goroutine that watches them included.
func TestMountNamespaceIdleDropped(t *testing.T) {
	sbOff(t) // a standby holds the namespace it joined
	mnsRequireKept(t)
	c := mountNamespaces
	c.mu.Lock()
	old := c.idle
	c.idle = 100 * time.Millisecond
	c.mu.Unlock()
	t.Cleanup(func() {
		c.mu.Lock()
		c.idle = old
		c.mu.Unlock()
	})
	mnsRun(t, []string{lxRealDir(t)}, SandboxPolicy{}, "true")
	kept := func() (n int, fds int) {
		mountNamespaces.mu.Lock()
		n = len(mountNamespaces.entries)
		mountNamespaces.mu.Unlock()
		return n, mnsOpen(t)
	}
	n, fds := kept()
	require.Positive(t, n)
	require.Positive(t, fds)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if n, fds = kept(); n == 0 && fds == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Zero(t, n, "namespaces kept")
	assert.Zero(t, fds, "namespace descriptors open")
	mountNamespaces.mu.Lock()
	assert.False(t, mountNamespaces.watching)
	mountNamespaces.mu.Unlock()
}

// mnsDropKept drops every kept namespace no call holds, and waits until
// their descriptors are closed and the goroutine that watches them is gone:
// for tests that compare descriptors and goroutines with a baseline.
func mnsDropKept(t *testing.T) {
	t.Helper()
	sbDropAll(t) // each holds its namespace
	c := mountNamespaces
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		c.dropUnused(0)
		n, watching := len(c.entries), c.watching
		c.mu.Unlock()
		if n == 0 && !watching && mnsOpen(t) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mnsOpen counts this process's descriptors of mount namespaces.
func mnsOpen(t *testing.T) (n int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "mnt:") {
			n++
		}
	}
	return n
}

const closedStdinEnv = "SANDBOXEXEC_TEST_CLOSED_STDIN"

// A host that closed its stdin may get descriptor 0 for the mount table the
// kept namespaces watch: that is kept like any other, not taken for "not
// opened yet" and opened again, which leaked a descriptor and left unseen a
// change between the two opens (found in review).
func TestMountNamespaceMountsOnDescriptor0(t *testing.T) {
	if os.Getenv(closedStdinEnv) == "" {
		lxRerunUnder(t, closedStdinEnv, "env")
		return
	}
	require.NoError(t, unix.Close(0))
	c := &mountNamespaceCache{}
	c.mu.Lock()
	defer c.mu.Unlock()
	require.True(t, c.openMounts())
	require.Equal(t, 0, c.mounts, "the lowest descriptor free")
	require.True(t, c.openMounts())
	assert.Equal(t, 0, c.mounts, "opened once")
	unix.Close(c.mounts)
}
