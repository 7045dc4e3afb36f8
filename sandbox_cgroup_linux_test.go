//go:build linux && cgo

package sandboxexec

import (
	"path/filepath"
	"strconv"
	"strings"
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

// cgLimit prints the pids.max of the command's own call group, below the
// pids hierarchy mounted at $1.
const cgLimit = `p=$(grep -o '/sandboxexec/[^/]*/[0-9]*' /proc/self/cgroup | head -n 1); cat "$1$p/pids.max"`

// What a command that may write the cgroup file system (FullDiskWriteAccess
// here) changes in this host's call groups and directory does not reach a
// later call: not a removed process limit (a fork bomb would run free), a
// frozen group (the call would hang until its timeout), a host directory
// that allows no fork.
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
	t.Run("a standby's group", func(t *testing.T) {
		sbReady(t, root)
		out, err := lxRun(t, lxSh(cgTamper, own, "max"), []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
		lxRequireOK(t, out, err)
		confined(t, true)
	})
}
