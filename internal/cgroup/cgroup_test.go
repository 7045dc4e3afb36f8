//go:build linux

package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func openOrSkip(t *testing.T) *Manager {
	t.Helper()
	m, err := Open()
	if err != nil {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" && os.Geteuid() == 0 {
			t.Fatalf("no usable pids cgroup as root: %v", err)
		}
		t.Skipf("no usable pids cgroup: %v", err)
	}
	return m
}

func TestGroupLimitsAndKills(t *testing.T) {
	m := openOrSkip(t)
	g, err := m.New(8)
	require.NoError(t, err)
	defer g.Remove()

	max, err := os.ReadFile(filepath.Join(g.dir, "pids.max"))
	require.NoError(t, err)
	require.Equal(t, "8", strings.TrimSpace(string(max)))

	// A process joins by writing its own pid, as the spawn routine's "0" does.
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.NoError(t, os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0))
	require.False(t, g.Empty())

	g.Kill()
	err = cmd.Wait()
	require.Error(t, err, "the sleep was killed")
	require.True(t, g.Empty())

	g.Remove()
	_, err = os.Stat(g.dir)
	require.True(t, os.IsNotExist(err), "the group's directory is gone")
}

// KillEach shows every process that lived in the group before it is
// killed, those forked while the kill runs too: the call reaps them by the
// pidfds it opens then, on a host that adopts orphans.
func TestKillEachSeesForksDuringTheKill(t *testing.T) {
	m := openOrSkip(t)
	g, err := m.New(512)
	require.NoError(t, err)
	defer g.Remove()
	forked := filepath.Join(t.TempDir(), "forked")
	// It forks once it is in the group.
	cmd := exec.Command("sh", "-c", `read go; while :; do sleep 60 & echo $! >>"$1"; done 2>/dev/null`, "sh", forked)
	start, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.NoError(t, os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0))
	start.Write([]byte("\n"))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(forked); len(strings.Fields(string(b))) >= 5 {
			break // forking
		}
	}

	seen := map[int]bool{}
	listings := 0
	g.KillEach(func(pids []int) {
		listings++
		for _, pid := range pids {
			seen[pid] = true
		}
		time.Sleep(5 * time.Millisecond) // as a caller's work on them: forks go on
	})
	cmd.Wait()
	assert.Empty(t, g.Pids(), "a process outlived KillEach")
	b, err := os.ReadFile(forked)
	require.NoError(t, err)
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		assert.True(t, seen[pid], "process %d was killed unseen", pid)
	}
	t.Logf("%d processes forked, %d listings", len(strings.Fields(string(b))), listings)
}

func TestForkLimitHolds(t *testing.T) {
	m := openOrSkip(t)
	g, err := m.New(4)
	require.NoError(t, err)
	defer g.Remove()
	// The shell joins the group, then tries to start 10 sleeps; the pids
	// limit refuses the ones past 4 tasks.
	script := `echo $$ > ` + filepath.Join(g.dir, "cgroup.procs") + `
ok=0; for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.2 2>/dev/null & [ $? -eq 0 ] && ok=$((ok+1)); done
cat ` + filepath.Join(g.dir, "pids.current") + `; kill $(jobs -p) 2>/dev/null; wait`
	out, _ := exec.Command("bash", "-c", script).CombinedOutput()
	require.Contains(t, string(out), "fork", "forks past the limit fail: %s", out)
}

func TestReleaseReusesEmptyGroups(t *testing.T) {
	m := openOrSkip(t)
	g, err := m.New(8)
	require.NoError(t, err)
	dir := g.dir
	g.Release()
	_, err = os.Stat(dir)
	require.NoError(t, err, "an empty released group is kept")

	again, err := m.New(16)
	require.NoError(t, err)
	require.Equal(t, dir, again.dir, "New reuses the kept group")
	max, err := os.ReadFile(filepath.Join(dir, "pids.max"))
	require.NoError(t, err)
	require.Equal(t, "16", strings.TrimSpace(string(max)), "with the new call's limit")

	// A group with a process in it is not kept: it is killed and removed.
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0))
	go cmd.Wait() // reap, so that the group can empty
	again.Release()
	_, err = os.Stat(dir)
	require.True(t, os.IsNotExist(err), "a released group with a process left is removed")

	// The pool is bounded.
	var groups []*Group
	for i := 0; i < PoolSize+3; i++ {
		g, err := m.New(4)
		require.NoError(t, err)
		groups = append(groups, g)
	}
	for _, g := range groups {
		g.Release()
	}
	kept := 0
	for _, g := range groups {
		if _, err := os.Stat(g.dir); err == nil {
			kept++
		}
	}
	require.Equal(t, PoolSize, kept)
	for _, g := range groups {
		g.Remove()
	}
	m.idle = nil
}

func TestNewReplacesAKeptGroupRemovedBehindItsBack(t *testing.T) {
	m := openOrSkip(t)
	g, err := m.New(8)
	require.NoError(t, err)
	g.Release()
	g.Remove() // as a cleaner outside this process might
	again, err := m.New(8)
	require.NoError(t, err)
	defer again.Remove()
	require.NotEqual(t, g.dir, again.dir)
	_, err = os.Stat(again.dir)
	require.NoError(t, err)
}

func TestReleaseEmptyKeepsWithoutReading(t *testing.T) {
	m := openOrSkip(t)
	g, err := m.New(8)
	require.NoError(t, err)
	g.ReleaseEmpty()
	again, err := m.New(8)
	require.NoError(t, err)
	require.Equal(t, g.dir, again.dir)
	again.Remove()
	m.idle = nil
}

// A host's directory is swept only once its lock is free: a live host may
// run in another PID namespace, where its pid means nothing here (this
// directory's pid exists in no namespace at all), and its calls must go on.
// Once the lock is free, the group's processes are killed and all removed.
func TestSweepOnlyUnlockedHosts(t *testing.T) {
	m := openOrSkip(t)
	other := filepath.Join(filepath.Dir(m.dir), "999999999-1")
	require.NoError(t, mkdirCgroup(other, m.v2))
	group := filepath.Join(other, "1")
	require.NoError(t, mkdirCgroup(group, false))
	t.Cleanup(func() {
		groupAt(nil, group, m.v2).Remove()
		os.Remove(other)
	})
	lock, err := os.Open(other)
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB))

	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.NoError(t, os.WriteFile(filepath.Join(group, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0))
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	openOrSkip(t) // sweeps
	_, err = os.Stat(group)
	require.NoError(t, err, "a locked host's group stays")
	select {
	case <-exited:
		t.Fatal("the sweep killed a live host's process")
	default:
	}

	lock.Close() // the host is gone
	openOrSkip(t)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the sweep left a dead host's process running")
	}
	_, err = os.Stat(other)
	require.True(t, os.IsNotExist(err), "the dead host's directory is gone: %v", err)
}

// Hosts that start together sweep while others make their directories; each
// must still end up with one of its own.
func TestOpenConcurrently(t *testing.T) {
	openOrSkip(t)
	for round := 0; round < 10; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, err := Open()
				if err != nil {
					errs <- err
					return
				}
				m.close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

// A host whose directory is removed behind its back makes itself another.
func TestNewAfterHostDirectoryRemoved(t *testing.T) {
	m := openOrSkip(t)
	t.Cleanup(m.close)
	old := m.dir
	require.NoError(t, os.Remove(old))
	g, err := m.New(4)
	require.NoError(t, err)
	defer g.Remove()
	require.NotEqual(t, old, m.dir)
	require.Equal(t, m.dir, filepath.Dir(g.dir))
	max, err := os.ReadFile(filepath.Join(g.dir, "pids.max"))
	require.NoError(t, err)
	require.Equal(t, "4", strings.TrimSpace(string(max)))
}

// A kept group keeps its cgroup.procs open for the next call, and gives it
// up once that is no longer the group's file.
func TestKeptGroupKeepsProcsOpen(t *testing.T) {
	m := openOrSkip(t)
	defer func() { m.idle = nil }()
	g, err := m.New(8)
	require.NoError(t, err)
	fd := g.ProcsFD()
	g.ReleaseEmpty()
	again, err := m.New(8)
	require.NoError(t, err)
	require.Equal(t, g.dir, again.dir)
	require.Equal(t, fd, again.ProcsFD(), "the same descriptor")

	// A process joins through it, as the spawn routine's child does.
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	_, err = unix.Write(again.ProcsFD(), []byte(strconv.Itoa(cmd.Process.Pid)))
	require.NoError(t, err)
	require.Equal(t, []int{cmd.Process.Pid}, again.Pids())
	stdin.Close()
	require.NoError(t, cmd.Wait())
	again.Release()

	// Removed behind its back and made again under the same name: a new
	// descriptor of the new group's file.
	kept := m.idle[len(m.idle)-1]
	require.Equal(t, g.dir, kept.dir)
	require.NoError(t, os.Remove(kept.dir))
	require.NoError(t, os.Mkdir(kept.dir, 0o755))
	third, err := m.New(8)
	require.NoError(t, err)
	defer third.Remove()
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(third.ProcsFD(), &st))
	var named unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(third.dir, "cgroup.procs"), &named))
	require.Equal(t, named.Ino, st.Ino, "the descriptor is the current file's")
	limit, err := os.ReadFile(filepath.Join(third.dir, "pids.max"))
	require.NoError(t, err)
	require.Equal(t, "8", strings.TrimSpace(string(limit)), "and the group has its limit")
}

// A command that may write the cgroup file system (a root one with `/` as a
// root or FullDiskWriteAccess) can make cgroups inside its group and move
// into them, where the group's own cgroup.procs no longer lists it: Remove
// (and so the sweep of a dead host) kills what is in them and removes them
// all, rather than give up on the group and leave its processes alive.
func TestRemoveGroupWithChildCgroups(t *testing.T) {
	m := openOrSkip(t)
	g, err := m.New(8)
	require.NoError(t, err)
	inner := filepath.Join(g.dir, "a", "b-c")
	require.NoError(t, os.MkdirAll(inner, 0o755))
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.NoError(t, os.WriteFile(filepath.Join(inner, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0))
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	g.Remove()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("a process in a cgroup inside the group outlived Remove")
	}
	_, err = os.Stat(g.dir)
	require.True(t, os.IsNotExist(err), "the group and the cgroups inside it are gone: %v", err)
}

// Once an exposed group is released, what its command could have written
// is set again: a kept group's limit at New, a group in use at Refresh, the
// host directory's limit; until then nothing is written again.
func TestExposedGroupSettingsSetAgain(t *testing.T) {
	m := openOrSkip(t)
	read := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "pids.max"))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	write := func(dir, v string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "pids.max"), []byte(v), 0))
	}
	kept, err := m.New(8)
	require.NoError(t, err)
	kept.Release()
	inUse, err := m.New(8)
	require.NoError(t, err)
	defer inUse.Remove()
	exposed, err := m.New(8)
	require.NoError(t, err)
	exposed.Expose()

	// Its command changes them all.
	write(kept.dir, "max")
	write(inUse.dir, "max")
	write(m.dir, "1")
	require.NoError(t, inUse.Refresh())
	require.Equal(t, "max", read(inUse.dir), "not written again while the command may run")

	exposed.Release()
	require.NoError(t, inUse.Refresh())
	require.Equal(t, "8", read(inUse.dir), "a group in use, at Refresh")
	require.Equal(t, "max", read(m.dir), "the host's directory")
	g, err := m.New(8)
	require.NoError(t, err)
	defer g.Remove()
	require.Contains(t, []string{kept.dir, exposed.dir}, g.dir, "a kept group")
	require.Equal(t, "8", read(g.dir), "a kept group, at New")
	g2, err := m.New(8)
	require.NoError(t, err)
	defer g2.Remove()
	require.Equal(t, "8", read(g2.dir), "the other kept group, at New")

	// Released unexposed, a group is trusted as it was set.
	write(inUse.dir, "max")
	require.NoError(t, inUse.Refresh())
	require.Equal(t, "max", read(inUse.dir), "no exposed group ended since")

	// With no group kept, a new one is made below a directory set again.
	for _, g := range m.idle {
		g.Remove()
	}
	m.idle = nil
	exposed, err = m.New(8)
	require.NoError(t, err)
	exposed.Expose()
	write(m.dir, "1")
	exposed.Remove()
	g3, err := m.New(8)
	require.NoError(t, err)
	defer g3.Remove()
	require.Equal(t, "max", read(m.dir), "the host's directory, at a New that makes a group")
}

// A command that may write the cgroup file system moved out of its group
// and removed it and this host's directory: later New make another
// directory, also where an earlier exposure had opened the old one's
// files. Found in review: every later New failed.
func TestNewAfterHostDirectoryRemovedByExposedCommand(t *testing.T) {
	for _, opened := range []bool{false, true} {
		m := openOrSkip(t)
		g, err := m.New(8)
		require.NoError(t, err)
		if opened {
			g.Expose()
			g.Remove()
			g, err = m.New(8) // sets the directories again: their files open
			require.NoError(t, err)
		}
		g.Expose()
		require.NoError(t, os.Remove(g.dir))
		require.NoError(t, os.Remove(m.dir))
		g.ReleaseEmpty() // kept, though gone
		for i := 0; i < 3; i++ {
			g, err := m.New(8)
			require.NoError(t, err, "New %d after the exposed call (files opened before: %v)", i, opened)
			g.Remove()
		}
		m.close()
	}
}

// ownCgroupForTest makes a cgroup of the test's own below this process's
// pids cgroup, to stand for "the host's own cgroup": what a test does to
// its sandboxexec directory reaches no other process's calls.
func ownCgroupForTest(t *testing.T) (own string, v2 bool) {
	t.Helper()
	m := openOrSkip(t)
	real := filepath.Dir(filepath.Dir(m.dir))
	m.close()
	own = filepath.Join(real, fmt.Sprintf("test-own-%d-%d", os.Getpid(), time.Now().UnixNano()))
	require.NoError(t, mkdirCgroup(own, m.v2))
	t.Cleanup(func() {
		var rm func(string)
		rm = func(d string) {
			es, _ := os.ReadDir(d)
			for _, e := range es {
				if e.IsDir() {
					rm(filepath.Join(d, e.Name()))
				}
			}
			groupAt(nil, d, m.v2).Remove()
		}
		rm(own)
	})
	return own, m.v2
}

// newManagerForTest opens a manager in own, closed when the test ends.
func newManagerForTest(t *testing.T, own string, v2 bool) *Manager {
	t.Helper()
	m, err := newManager(own, v2)
	require.NoError(t, err)
	t.Cleanup(m.close)
	return m
}

// A command that may write the cgroup file system removes every group,
// this host's directory and then the sandboxexec directory (no other host
// has one there): later New make them again. Found in review: every later
// New failed, for good.
func TestNewAfterSharedDirectoryRemoved(t *testing.T) {
	own, v2 := ownCgroupForTest(t)
	m := newManagerForTest(t, own, v2)
	g, err := m.New(8)
	require.NoError(t, err)
	g.Expose()
	require.NoError(t, os.Remove(g.dir))
	require.NoError(t, os.Remove(m.dir))
	require.NoError(t, os.Remove(filepath.Dir(m.dir)))
	g.ReleaseEmpty()
	for i := 0; i < 3; i++ {
		g, err := m.New(8)
		require.NoError(t, err, "New %d after the sandboxexec directory was removed", i)
		g.Remove()
	}
}

// A command removes this host's directory and makes it again under the
// same name: the host takes another, which it locks. Found in review: it
// went on making groups in the one made again, which another host that
// started swept as a dead host's, killing the calls running in it.
func TestHostDirectoryMadeAgainNotSwept(t *testing.T) {
	own, v2 := ownCgroupForTest(t)
	m := newManagerForTest(t, own, v2)
	g, err := m.New(8)
	require.NoError(t, err)
	g.Expose()
	require.NoError(t, os.Remove(g.dir))
	require.NoError(t, os.Remove(m.dir))
	require.NoError(t, os.Mkdir(m.dir, 0o755)) // same name
	g.ReleaseEmpty()

	call, err := m.New(8) // a later call's group
	require.NoError(t, err)
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.NoError(t, os.WriteFile(filepath.Join(call.dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0))
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	other, err := newManager(own, v2) // another host starts: it sweeps
	require.NoError(t, err)
	defer other.close()
	select {
	case <-exited:
		t.Fatal("another host's sweep killed a later call's command: the host directory made again was not locked")
	case <-time.After(200 * time.Millisecond):
	}
	call.Remove()
}

// Names a command made in this host's directory ahead of New are skipped,
// however many. Found in review: as many New as names made failed.
func TestNewSkipsGroupNamesTaken(t *testing.T) {
	own, v2 := ownCgroupForTest(t)
	m := newManagerForTest(t, own, v2)
	next := m.next.Load()
	for i := next + 1; i <= next+250; i++ {
		require.NoError(t, os.Mkdir(filepath.Join(m.dir, strconv.FormatUint(i, 10)), 0o755))
	}
	failed := 0
	for i := 0; i < 4; i++ {
		g, err := m.New(8)
		if err != nil {
			failed++
			continue
		}
		g.Remove()
	}
	require.Zero(t, failed, "New that failed of 4 after 250 names were made ahead")
}

// A limit a command (or another host's) left on the shared directory
// before this host opened its manager is lifted by the first New.
func TestSharedDirectorySetWhenOpened(t *testing.T) {
	own, v2 := ownCgroupForTest(t)
	shared := filepath.Join(own, "sandboxexec")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "pids.max"), []byte("100000"), 0))
	m, err := newManager(own, v2)
	require.NoError(t, err)
	defer m.close()
	limit, err := os.ReadFile(filepath.Join(shared, "pids.max"))
	require.NoError(t, err)
	require.Equal(t, "max", strings.TrimSpace(string(limit)))
}
