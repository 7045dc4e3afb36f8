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
