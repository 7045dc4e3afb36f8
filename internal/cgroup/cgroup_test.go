//go:build linux

package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
