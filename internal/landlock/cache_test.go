//go:build linux

package landlock

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// isRuleset says whether fd is open and is a Landlock ruleset.
func isRuleset(fd int) bool {
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return err == nil && target == "anon_inode:[landlock-ruleset]"
}

func requireABI(t *testing.T) int {
	t.Helper()
	abi, err := ABI()
	if err != nil || abi < 3 {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("Landlock ABI 3 is required: abi %d, %v", abi, err)
		}
		t.Skipf("no Landlock ABI 3 here: abi %d, %v", abi, err)
	}
	return abi
}

func TestCacheSharesAndRevalidates(t *testing.T) {
	abi := requireABI(t)
	c := NewCache(2)
	a, b := t.TempDir(), t.TempDir()
	rulesA := Rules{WritableRoots: []string{a}}

	fd1, done1, err := c.Get(abi, rulesA)
	require.NoError(t, err)
	fd2, done2, err := c.Get(abi, rulesA)
	require.NoError(t, err)
	require.Equal(t, fd1, fd2, "the same rules share a ruleset")
	done1()
	done1() // a second call is harmless
	done2()
	require.True(t, isRuleset(fd1), "the cache keeps it")

	fdB, doneB, err := c.Get(abi, Rules{WritableRoots: []string{b}})
	require.NoError(t, err)
	require.NotEqual(t, fd1, fdB)
	fdNet, doneNet, err := c.Get(abi, Rules{WritableRoots: []string{a}, DenyNetwork: true})
	require.NoError(t, err)
	require.NotEqual(t, fd1, fdNet, "another policy for the same root")
	require.False(t, isRuleset(fd1), "the least recently used ruleset was evicted and closed")
	require.True(t, isRuleset(fdB), "a ruleset in use stays open")
	doneB()
	doneNet()

	// A root replaced by another directory gets a new ruleset; the old
	// one is closed once its last user is done.
	fdOld, doneOld, err := c.Get(abi, Rules{WritableRoots: []string{b}})
	require.NoError(t, err)
	require.NoError(t, os.Remove(b))
	require.NoError(t, os.Mkdir(b, 0o755))
	fdNew, doneNew, err := c.Get(abi, Rules{WritableRoots: []string{b}})
	require.NoError(t, err)
	require.NotEqual(t, fdOld, fdNew)
	require.True(t, isRuleset(fdOld), "still held by its user")
	doneOld()
	require.False(t, isRuleset(fdOld), "closed after its last user")
	doneNew()

	// A root that is gone is an error, not a stale ruleset.
	require.NoError(t, os.Remove(b))
	_, _, err = c.Get(abi, Rules{WritableRoots: []string{b}})
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(filepath.Join(a))
	require.NoError(t, err)
}

func TestCacheNothingHandled(t *testing.T) {
	c := NewCache(1)
	fd, done, err := c.Get(0, Rules{WritableRoots: []string{t.TempDir()}})
	require.NoError(t, err)
	require.Equal(t, -1, fd)
	done()
}

// Close lets go of every ruleset: one in use stays open until its user is
// done; the cache builds anew after.
func TestCacheClose(t *testing.T) {
	abi := requireABI(t)
	c := NewCache(2)
	rules := Rules{WritableRoots: []string{t.TempDir()}}
	idle, doneIdle, err := c.Get(abi, Rules{WritableRoots: []string{t.TempDir()}})
	require.NoError(t, err)
	doneIdle()
	used, doneUsed, err := c.Get(abi, rules)
	require.NoError(t, err)

	c.Close()
	require.False(t, isRuleset(idle), "closed with the cache")
	require.True(t, isRuleset(used), "still held by its user")
	doneUsed()
	require.False(t, isRuleset(used), "closed after its user")

	fd, done, err := c.Get(abi, rules)
	require.NoError(t, err)
	require.True(t, isRuleset(fd))
	done()
	c.Close()
	require.False(t, isRuleset(fd))
}

// A root is checked at every Get; a device's file only once its last check
// is deviceRecheck old (a stale device rule can only deny).
func TestCacheChecksDevicesLessOften(t *testing.T) {
	dir := t.TempDir()
	root, dev := filepath.Join(dir, "root"), filepath.Join(dir, "dev")
	require.NoError(t, os.Mkdir(root, 0o755))
	require.NoError(t, os.WriteFile(dev, nil, 0o644))
	id := func(path string, device bool) fileID {
		var st unix.Stat_t
		require.NoError(t, unix.Stat(path, &st))
		return fileID{path: path, device: device, dev: uint64(st.Dev), ino: st.Ino}
	}
	start := time.Now()
	e := &cacheEntry{files: []fileID{id(root, false), id(dev, true)}, devices: start}
	require.True(t, e.current(start, nil))

	// Made before the old one goes: another inode.
	require.NoError(t, os.WriteFile(dev+".new", nil, 0o644))
	require.NoError(t, os.Rename(dev+".new", dev))
	require.True(t, e.current(start.Add(deviceRecheck/2), nil), "a device checked less than deviceRecheck ago")
	require.False(t, e.current(start.Add(deviceRecheck), nil), "then checked again")

	e = &cacheEntry{files: []fileID{id(root, false), id(dev, true)}, devices: start}
	require.NoError(t, os.Mkdir(root+".new", 0o755))
	require.NoError(t, os.Rename(root, root+".old"))
	require.NoError(t, os.Rename(root+".new", root))
	require.False(t, e.current(start, nil), "a root, every time")
}

// A root the caller has just looked at is taken as it says (Rules.Seen),
// and only for the paths it knows; the rest are looked at as before.
func TestCacheTakesWhatTheCallerSaw(t *testing.T) {
	abi := requireABI(t)
	c := NewCache(2)
	a, b := t.TempDir(), t.TempDir()
	ids := map[string][2]uint64{}
	for _, p := range []string{a, b} {
		var st unix.Stat_t
		require.NoError(t, unix.Stat(p, &st))
		ids[p] = [2]uint64{uint64(st.Dev), st.Ino}
	}
	seen := func(path string) (dev, ino uint64, ok bool) {
		id, ok := ids[path]
		return id[0], id[1], ok
	}
	rules := Rules{WritableRoots: []string{a, b}, Seen: seen}
	fd1, done1, err := c.Get(abi, rules)
	require.NoError(t, err)
	done1()
	fd2, done2, err := c.Get(abi, rules)
	require.NoError(t, err)
	defer done2() // held, so that no new ruleset takes its number
	require.Equal(t, fd1, fd2, "what the caller saw matches")

	// The caller saw another directory at a: a new ruleset, though a is
	// unchanged on disk.
	ids[a] = [2]uint64{ids[a][0], ids[a][1] + 1}
	fd3, done3, err := c.Get(abi, rules)
	require.NoError(t, err)
	defer done3()
	require.NotEqual(t, fd2, fd3, "what the caller saw is taken over a stat")

	// b replaced, but the caller knows nothing of b: the cache looks.
	delete(ids, b)
	require.NoError(t, os.Remove(b))
	require.NoError(t, os.Mkdir(b, 0o755))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(a, &st))
	ids[a] = [2]uint64{uint64(st.Dev), st.Ino}
	fd4, done4, err := c.Get(abi, rules)
	require.NoError(t, err)
	done4()
	require.NotEqual(t, fd3, fd4, "a path the caller did not see is looked at")
}

// A ruleset is handed to maxUses calls, then retired: a child may add a
// rule to it (its namespace's own pseudo-terminals), which the ruleset
// keeps. The last caller still holds it open until done.
func TestCacheRetiresAfterMaxUses(t *testing.T) {
	abi := requireABI(t)
	c := NewCache(2)
	rules := Rules{WritableRoots: []string{t.TempDir()}}
	first, done, err := c.Get(abi, rules)
	require.NoError(t, err)
	done()
	for i := 1; i < maxUses-1; i++ {
		fd, done, err := c.Get(abi, rules)
		require.NoError(t, err)
		require.Equal(t, first, fd, "use %d", i+1)
		done()
	}
	last, doneLast, err := c.Get(abi, rules)
	require.NoError(t, err)
	require.Equal(t, first, last)
	require.True(t, isRuleset(last), "the last caller's ruleset stays open")
	next, doneNext, err := c.Get(abi, rules)
	require.NoError(t, err)
	defer doneNext()
	require.True(t, isRuleset(next))
	doneLast()
	require.False(t, isRuleset(first), "the retired ruleset is closed once its last caller is done")
}
