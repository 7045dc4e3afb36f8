//go:build linux && cgo

package sandboxexec

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// cgTamper is a command that may write the cgroup file system: in its
// host's directory (below $1, the host's own cgroup) it sets pids.max to $2
// in every call group (its own, the pool's, the standbys'), freezes all but
// its own where groups can be frozen (v2), and last, where $3 is given,
// sets the host directory's pids.max to it (no fork after that).
const cgTamper = `
own=$(grep -o '/sandboxexec/[^/]*/[0-9]*' /proc/self/cgroup | head -n 1)
host=$1${own%/*}
for g in "$host"/*/; do
	g=${g%/}
	echo "$2" >"$g/pids.max" || exit 1
	[ "${g##*/}" = "${own##*/}" ] || [ ! -e "$g/cgroup.freeze" ] || echo 1 >"$g/cgroup.freeze" || exit 1
done
[ -z "$3" ] || echo "$3" >"$host/pids.max"
`

// cgRemoveHost moves the command out of its call group (into the directory
// all hosts share, below $1, the host's own cgroup), and removes its group,
// the pool's and the host's directory.
const cgRemoveHost = `
own=$(grep -o '/sandboxexec/[^/]*/[0-9]*' /proc/self/cgroup | head -n 1)
host=$1${own%/*}
echo 0 >"$1/sandboxexec/cgroup.procs" || exit 1
for g in "$host"/*/; do rmdir "$g" || exit 1; done
rmdir "$host" && echo removed
`

// cgLimit prints the pids.max of the command's own call group, below the
// pids hierarchy mounted at $1.
const cgLimit = `p=$(grep -o '/sandboxexec/[^/]*/[0-9]*' /proc/self/cgroup | head -n 1); cat "$1$p/pids.max"`

// What a command that may write the cgroup file system (FullDiskWriteAccess
// here, or any under SandboxNone) changes in this host's call groups and
// directories does not reach a later call: not a removed process limit (a
// fork bomb would run free), a frozen group (the call would hang until its
// timeout), a directory above that allows no fork, nor a removed host
// directory (found in review: every later call failed).
func TestCgroupChangesDoNotReachLaterCalls(t *testing.T) {
	sbRequire(t)
	mnt, linePrefix := relPidsMount(t)
	own := filepath.Dir(relCgroupParent(t, mnt, linePrefix))
	root := lxRealDir(t)
	confined := func(t *testing.T, wantStandby bool) {
		t.Helper()
		timeout := uint64(5000)
		for i := 0; i < 12; i++ {
			sbSettle(t)
			used := false
			standbyUsedHook = func(u bool) { used = u }
			out, err := lxRunParams(t, ExecParams{Command: lxSh(cgLimit, mnt), TimeoutMs: &timeout}, []string{root}, SandboxPolicy{})
			standbyUsedHook = nil
			lxRequireOK(t, out, err)
			require.Equal(t, strconv.Itoa(DefaultMaxProcesses), strings.TrimSpace(out.Stdout), "call %d's pids.max", i)
			if i == 0 && wantStandby {
				require.True(t, used, "the first call after took the standby made before")
			}
		}
	}

	t.Run("pool and host directory", func(t *testing.T) {
		sbOff(t)
		for i := 0; i < 4; i++ { // groups in the pool
			out, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
			lxRequireOK(t, out, err)
		}
		out, err := lxRun(t, lxSh(cgTamper, own, "max", "1"), []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
		lxRequireOK(t, out, err)
		confined(t, false)
	})
	t.Run("directory all hosts share", func(t *testing.T) {
		sbOff(t)
		// Other hosts' calls (test binaries of other packages) run below
		// it too: a limit none of them reaches.
		shared := filepath.Join(own, "sandboxexec", "pids.max")
		t.Cleanup(func() { os.WriteFile(shared, []byte("max"), 0) })
		out, err := lxRun(t, lxSh(`echo 100000 >"$1"`, shared), []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
		lxRequireOK(t, out, err)
		confined(t, false)
		limit, err := os.ReadFile(shared)
		require.NoError(t, err)
		require.Equal(t, "max", strings.TrimSpace(string(limit)))
	})
	t.Run("host directory removed", func(t *testing.T) {
		sbOff(t)
		out, err := lxRun(t, lxSh(cgRemoveHost, own), []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
		lxRequireOK(t, out, err)
		require.Equal(t, "removed\n", out.Stdout)
		confined(t, false)
	})
	t.Run("SandboxNone", func(t *testing.T) {
		sbOff(t)
		for i := 0; i < 2; i++ { // groups in the pool
			out, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
			lxRequireOK(t, out, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
		defer cancel()
		// In no group of its own: this host's groups.
		out, err := ProcessExecToolCall(ctx, ExecParams{Command: lxSh(`for g in "$1"/sandboxexec/$2-*/*/; do echo max >"$g/pids.max" || exit 1; done`,
			own, strconv.Itoa(os.Getpid()))}, SandboxNone, nil, SandboxPolicy{})
		lxRequireOK(t, out, err)
		confined(t, false)
	})
	t.Run("a standby's group", func(t *testing.T) {
		sbReady(t, root)
		out, err := lxRun(t, lxSh(cgTamper, own, "max"), []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
		lxRequireOK(t, out, err)
		confined(t, true)
	})
}

// An exposed call whose command a process outside the call traces returns
// before its group is released (a goroutine waits for the reap): the
// exposure counts when the call returns. Found in review: until the tracer
// let go, later calls took the groups the command had changed.
func TestCgroupChangesOfATracedCommand(t *testing.T) {
	sbRequire(t)
	sbOff(t)
	s := requireSandbox(t)
	if !s.PIDNamespace || !pidfdUsable() {
		t.Skip("needs a PID namespace and pidfds")
	}
	mnt, linePrefix := relPidsMount(t)
	own := filepath.Dir(relCgroupParent(t, mnt, linePrefix))
	root := lxRealDir(t)
	python := lxPython(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ { // groups in the pool: calls at once
		wg.Add(1)
		go func() {
			defer wg.Done()
			lxRun(t, []string{"sleep", "0.3"}, []string{root}, SandboxPolicy{})
		}()
	}
	wg.Wait()
	marker := "traced-cgroup-" + strconv.Itoa(os.Getpid())
	done := make(chan error, 1)
	go func() {
		timeout := uint64(10_000)
		_, err := lxRunParams(t, ExecParams{Command: []string{"sh", "-c",
			cgTamper + `while [ ! -e "$4/attached" ]; do :; done; exit 0`, "sh", own, "max", "", root, marker},
			TimeoutMs: &timeout}, []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
		done <- err
	}()
	lxAttachTracer(t, python, marker, root, 0)
	err := <-done
	t.Logf("exposed call: %v", err)
	attached, _ := os.ReadFile(filepath.Join(root, "attached"))
	if string(attached) != "True" {
		t.Skipf("ptrace refused: %s", attached)
	}
	// The exposed call has returned; a later call of the zero policy.
	out, err := lxRun(t, lxSh(cgLimit, mnt), []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	require.Equal(t, strconv.Itoa(DefaultMaxProcesses), strings.TrimSpace(out.Stdout), "a later call's pids.max")
}

// A command that removes the empty groups it finds while it runs makes the
// calls beside it fail now and then, a standby's making too: that does not
// stop the standbys for the rest of the process (found in review).
func TestCgroupRemovedKeepsStandbys(t *testing.T) {
	sbRequire(t)
	mnt, linePrefix := relPidsMount(t)
	own := filepath.Dir(relCgroupParent(t, mnt, linePrefix))
	root := lxRealDir(t)
	standbys.mu.Lock()
	was := standbys.offUntil
	off := standbys.off()
	standbys.mu.Unlock()
	require.False(t, off)
	done := make(chan struct{})
	go func() {
		defer close(done)
		timeout := uint64(10_000)
		lxRunParams(t, ExecParams{Command: lxSh(`
own=$(grep -o '/sandboxexec/[^/]*/[0-9]*' /proc/self/cgroup | head -n 1)
host=$1${own%/*}
end=$(( $(date +%s) + 3 ))
while [ $(date +%s) -lt $end ]; do
	for g in "$host"/*/; do [ "${g%/}" = "$1$own" ] || rmdir "$g" 2>/dev/null; done
done`, own), TimeoutMs: &timeout}, []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
	}()
	failedCalls := 0
	for i := 0; ; i++ {
		select {
		case <-done:
		default:
			_, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
			if err != nil {
				if failedCalls == 0 {
					t.Logf("first failure: %v", err)
				}
				failedCalls++
			}
			continue
		}
		break
	}
	sbSettle(t)
	standbys.mu.Lock()
	failed := standbys.off()
	standbys.offUntil = was
	standbys.mu.Unlock()
	t.Logf("calls that failed while it ran: %d", failedCalls)
	out, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	require.False(t, failed, "standbys stopped")
}
