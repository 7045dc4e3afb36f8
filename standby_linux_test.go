//go:build linux && cgo

package sandboxexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
)

// sbDropAll discards every standby kept, once those in the making are
// made: for tests that compare processes, cgroups, descriptors or
// goroutines with a baseline.
func sbDropAll(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		standbys.mu.Lock()
		making := len(standbys.making)
		standbys.dropUnused(0)
		clear(standbys.seen)
		standbys.mu.Unlock()
		if making == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sbOff has the calls of the test spawn without standbys, as one-off calls
// do: for tests that count what each call makes.
func sbOff(t *testing.T) {
	t.Helper()
	standbys.mu.Lock()
	was := standbys.offUntil
	standbys.offUntil = time.Now().Add(time.Hour)
	standbys.mu.Unlock()
	sbDropAll(t)
	t.Cleanup(func() {
		standbys.mu.Lock()
		standbys.offUntil = was
		standbys.mu.Unlock()
	})
}

// sbRequire skips where calls take no standby: a host without
// CAP_SYS_ADMIN, or without the pids cgroup.
func sbRequire(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	if !linuxspawn.StandbySupported || !hasSysAdmin() || cgroups() == nil {
		lxRequireFeature(t, false, "standbys (CAP_SYS_ADMIN and the pids cgroup)")
	}
	sbDropAll(t)
}

// sbRun runs script with args sandboxed once a standby for it may be ready
// (the one the last call started), and says whether the call used one.
func sbRun(t *testing.T, roots []string, policy SandboxPolicy, script string, args ...string) (out ExecToolCallOutput, used bool) {
	t.Helper()
	sbSettle(t)
	old := standbyUsedHook
	standbyUsedHook = func(u bool) { used = u }
	defer func() { standbyUsedHook = old }()
	out, err := lxRun(t, lxSh(script, args...), roots, policy)
	require.NoError(t, err)
	return out, used
}

// sbReady runs two calls of the zero policy with root, so that a standby
// is made for the next, and returns the pids of the standbys ready.
func sbReady(t *testing.T, root string) (pids []int) {
	t.Helper()
	sbRun(t, []string{root}, SandboxPolicy{}, "true")
	sbRun(t, []string{root}, SandboxPolicy{}, "true")
	sbSettle(t)
	standbys.mu.Lock()
	defer standbys.mu.Unlock()
	for _, s := range standbys.ready {
		pids = append(pids, s.sb.Pid())
	}
	return pids
}

// sbSettle waits for the standbys in the making.
func sbSettle(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		standbys.mu.Lock()
		n := len(standbys.making)
		standbys.mu.Unlock()
		if n == 0 {
			return
		}
	}
	t.Fatal("a standby still in the making after 5 s")
}

// sbConfinement prints what a command can and cannot do, the same in
// every call of the same policy.
const sbConfinement = `
echo "pid=$$ tmp=$(ls -A "$TMPDIR" | wc -l)"
touch "$TMPDIR/x" && echo tmpdir-writable
echo hi > "$ROOT/f" && echo root-writable
echo hi > /var/tmp/sandboxexec-standby-test 2>/dev/null || echo outside-denied
chmod 0644 /etc/hostname 2>&1 | grep -q -i 'read-only' && echo metadata-read-only
ls -A "$ROOT/.git" >/dev/null 2>&1 && { touch "$ROOT/.git/hook" 2>/dev/null || echo git-read-only; }
ipcs -q 2>/dev/null | grep -c '^0x' ; ulimit -c; ulimit -u
while IFS= read -r l; do case "$l" in Cap*|NoNewPrivs*|Seccomp:*|SigBlk*|SigIgn*) echo "$l";; esac; done </proc/self/status
grep -c sandboxexec /proc/self/cgroup
cd .. 2>/dev/null; pwd
`

// A command started in a standby is confined as one spawned for its call:
// the same output, line for line, but for the TMPDIR's name.
func TestStandbySameConfinement(t *testing.T) {
	sbRequire(t)
	root := lxRealDir(t)
	policy := SandboxPolicy{MaxProcesses: 77}
	script := "ROOT=" + root + "\n" + sbConfinement
	run := func() (string, bool) {
		out, used := sbRun(t, []string{root}, policy, script)
		require.Equal(t, 0, out.ExitCode, out.Stderr)
		return out.Stdout, used
	}
	plain, used := run()
	assert.False(t, used, "the first call of a policy has no standby")
	again, used := run()
	assert.False(t, used, "nor the second, which starts one")
	assert.Equal(t, plain, again)
	viaStandby, used := run()
	assert.True(t, used, "the third call of a policy takes the standby the second started")
	assert.Equal(t, plain, viaStandby)
	for _, want := range []string{"pid=1 tmp=0", "tmpdir-writable", "root-writable", "outside-denied",
		"metadata-read-only", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2", "SigBlk:\t0000000000000000"} {
		assert.Contains(t, viaStandby, want)
	}

	// And again, with .git under the root (a read-only bind, another
	// namespace: the standby made without it is not used).
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	withGit, used := run()
	assert.False(t, used, "a standby made before .git existed")
	assert.Contains(t, withGit, "git-read-only")
	withGit2, used := run()
	assert.True(t, used)
	assert.Equal(t, withGit, withGit2)
}

// A standby is used only while what it was made with holds.
func TestStandbyDiscardedOnChange(t *testing.T) {
	sbRequire(t)
	root := lxRealDir(t)
	run := func(script string) (ExecToolCallOutput, bool) {
		return sbRun(t, []string{root}, SandboxPolicy{}, script)
	}
	run("true")
	run("true")

	t.Run("a file planted in its TMPDIR", func(t *testing.T) {
		sbSettle(t)
		standbys.mu.Lock()
		var tmp string
		for _, s := range standbys.ready {
			tmp = s.tmp.Path()
		}
		standbys.mu.Unlock()
		require.NotEmpty(t, tmp)
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "planted"), nil, 0o644))
		out, used := run(`ls -A "$TMPDIR"`)
		assert.False(t, used)
		assert.Empty(t, out.Stdout, "the call's TMPDIR is empty")
	})

	t.Run("the root replaced", func(t *testing.T) {
		run("true")
		sbSettle(t) // the standby is made before the change
		require.NoError(t, os.Rename(root, root+".old"))
		require.NoError(t, os.Mkdir(root, 0o755))
		out, used := run(`echo new > ` + root + `/f && echo wrote`)
		assert.False(t, used)
		assert.Equal(t, "wrote\n", out.Stdout)
		b, err := os.ReadFile(filepath.Join(root, "f"))
		require.NoError(t, err)
		assert.Equal(t, "new\n", string(b))
		assert.NoFileExists(t, filepath.Join(root+".old", "f"))
	})

	t.Run("a host mount", func(t *testing.T) {
		fsRequireMounts(t)
		run("true")
		sbSettle(t)
		mnt := filepath.Join(lxRealDir(t), "mnt")
		require.NoError(t, os.Mkdir(mnt, 0o755))
		require.NoError(t, unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"))
		defer unix.Unmount(mnt, unix.MNT_DETACH)
		require.NoError(t, os.WriteFile(filepath.Join(mnt, "seen"), nil, 0o644))
		out, used := run(`ls ` + mnt)
		assert.False(t, used)
		assert.Equal(t, "seen\n", out.Stdout)
	})

	t.Run("another policy", func(t *testing.T) {
		run("true")
		sbSettle(t)
		out, err := lxRun(t, lxSh("true"), []string{root}, SandboxPolicy{MaxProcesses: 5})
		lxRequireOK(t, out, err)
		_, used := sbRun(t, []string{root}, SandboxPolicy{MaxProcesses: 6}, "true")
		assert.False(t, used, "a standby of another policy")
	})
}

// A command that dates its TMPDIR back leaves no later call those times,
// whether the call takes a standby (whose TMPDIR was touched when the
// standby took it) or spawns.
func TestStandbyTMPDIRTimesNotHandedOn(t *testing.T) {
	sbRequire(t)
	root := lxRealDir(t)
	usedOne := false
	for i := 0; i < 6; i++ {
		out, used := sbRun(t, []string{root}, SandboxPolicy{}, `stat -c '%X %Y' "$TMPDIR" && touch -d @946684800 "$TMPDIR"`)
		require.Equal(t, 0, out.ExitCode, out.Stderr)
		usedOne = usedOne || used
		for _, f := range strings.Fields(out.Stdout) {
			secs, err := strconv.ParseInt(f, 10, 64)
			require.NoError(t, err, out.Stdout)
			assert.WithinDuration(t, time.Now(), time.Unix(secs, 0), time.Minute, "call %d (standby: %v)", i, used)
		}
	}
	assert.True(t, usedOne, "no call took a standby")
}

// A standby's process is gone once the standby is dropped, and none is
// left of what it held.
func TestStandbyDropped(t *testing.T) {
	sbRequire(t)
	pids := sbReady(t, lxRealDir(t))
	require.Len(t, pids, 1)
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pids[0]))
	require.NoError(t, err)
	assert.Equal(t, "sandboxexec-sb\n", string(comm))
	sbDropAll(t)
	assert.ErrorIs(t, unix.Kill(pids[0], 0), unix.ESRCH, "the standby's process is reaped")
}

// A standby killed from outside is not used, and the call runs.
func TestStandbyKilled(t *testing.T) {
	sbRequire(t)
	root := lxRealDir(t)
	for _, pid := range sbReady(t, root) {
		require.NoError(t, unix.Kill(pid, unix.SIGKILL))
	}
	time.Sleep(20 * time.Millisecond)
	out, used := sbRun(t, []string{root}, SandboxPolicy{}, "echo ran")
	assert.False(t, used)
	assert.Equal(t, "ran\n", out.Stdout)
	_, used = sbRun(t, []string{root}, SandboxPolicy{}, "echo ran")
	assert.True(t, used, "standbys go on after one was killed")
}

// A command a standby started that the call then cannot follow (no
// descriptor left for its kill's eventfd) is ended, and the call fails: it
// is not run a second time by a spawn. Found in review: the call closed
// the command's pidfd a second time (another goroutine's descriptor, by
// then), killed and waited for a pid it had reaped, and spawned the
// command again.
func TestStandbyUnfollowedCommandNotRunAgain(t *testing.T) {
	sbRequire(t)
	root := lxRealDir(t)
	sbReady(t, root)
	failed := 0
	eventfdHook = func() error {
		if failed == 0 {
			failed++
			return unix.EMFILE
		}
		return nil
	}
	defer func() { eventfdHook = nil }()
	var used bool
	standbyUsedHook = func(u bool) { used = u }
	defer func() { standbyUsedHook = nil }()
	marker := filepath.Join(root, "runs")
	out, err := lxRun(t, lxSh(`echo run >> "$1"`, marker), []string{root}, SandboxPolicy{})
	assert.True(t, used, "the standby ran the command")
	require.ErrorIs(t, err, unix.EMFILE, "%q", out.Stdout)
	time.Sleep(50 * time.Millisecond) // a second run would have written by now
	runs, _ := os.ReadFile(marker)
	assert.LessOrEqual(t, strings.Count(string(runs), "run"), 1, "the command ran again")

	eventfdHook = nil
	out, err = lxRun(t, lxSh(`echo ok`), []string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, "ok\n", out.Stdout)
}

// Two policies whose lists would run into each other (a name holding the
// byte that once came between lists) are two keys: without Landlock,
// which checks the roots of a standby apart, the second took the first's
// standby and wrote to its root (found in review).
func TestStandbyKeyListsApart(t *testing.T) {
	sbRequire(t)
	old := forcedLandlockABI // not lxSetABI, which stops the standbys
	forcedLandlockABI = 0
	t.Cleanup(func() { forcedLandlockABI = old })
	base := lxRealDir(t)
	a, a11, b := filepath.Join(base, "a"), filepath.Join(base, "a\x01\x01"), filepath.Join(base, "b")
	for _, d := range []string{a, a11, b} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	first := SandboxPolicy{BestEffort: true, DenyRead: []string{b + "\x01\x01"}}
	sbRun(t, []string{a}, first, "true")
	sbRun(t, []string{a}, first, "true")
	sbSettle(t)
	var used bool
	standbyUsedHook = func(u bool) { used = u }
	defer func() { standbyUsedHook = nil }()
	out, err := lxRun(t, lxSh(`echo x > "$1/f"; echo y > "$2/f"`, a, b), []string{a11, b}, SandboxPolicy{BestEffort: true})
	lxDeniedOrNil(t, out, err)
	assert.False(t, used, "another policy's standby")
	assert.NoFileExists(t, filepath.Join(a, "f"), "written outside the call's roots")
	assert.FileExists(t, filepath.Join(b, "f"), "not written in the call's root: %s", out.Stderr)
}

// Calls whose roots change each time make no standby: one is made at a
// policy's second call within standbyIdle.
func TestStandbyNotForOneOffCalls(t *testing.T) {
	sbRequire(t)
	for i := 0; i < 5; i++ {
		sbRun(t, []string{lxRealDir(t)}, SandboxPolicy{}, "true")
	}
	sbSettle(t)
	standbys.mu.Lock()
	n := len(standbys.ready)
	standbys.mu.Unlock()
	assert.Zero(t, n, "standbys made for calls of roots seen once")
}

// Under AllowedDomains a standby waits in a network namespace made for it,
// with the proxy's listener; the call that takes it gets its own proxy
// there: an allowed name is reached, another refused and listed.
func TestStandbyAllowedDomains(t *testing.T) {
	sbRequire(t)
	npRequireNetns(t)
	plain, _ := npServers(t)
	root := lxRealDir(t)
	script := `readlink /proc/self/ns/net
python3 - "$1" "$2" <<'PY'
import sys, urllib.request
for u in sys.argv[1:]:
    try:
        print(urllib.request.urlopen(u, timeout=10).read().decode())
    except Exception as e:
        print("refused", getattr(e, "code", e))
PY`
	host, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	for i, wantUsed := range []bool{false, false, true, true} {
		out, used := sbRun(t, []string{root}, npPolicy, script, npLocalhost(plain.URL)+"/a", plain.URL+"/b")
		require.Equal(t, 0, out.ExitCode, "call %d: %s", i, out.Stderr)
		assert.Equal(t, wantUsed, used, "call %d", i)
		ns, rest, _ := strings.Cut(out.Stdout, "\n")
		assert.NotEqual(t, host, ns, "call %d", i)
		assert.Equal(t, "hello from /a\nrefused 403\n", rest, "call %d", i)
		assert.Equal(t, []string{strings.TrimPrefix(plain.URL, "http://")}, out.DeniedHosts, "call %d", i)
	}
}

// A call that comes while the standby for it is in the making waits for it,
// within standbyWait; past that, it spawns, and the standby is kept for the
// next call.
func TestStandbyInTheMaking(t *testing.T) {
	sbRequire(t)
	root := lxRealDir(t)
	oldWait := standbyWait
	defer func() { standbyWait, standbyMakingHook = oldWait, nil }()
	run := func(delay time.Duration) bool {
		standbyMakingHook = func() { time.Sleep(delay) }
		var used bool
		standbyUsedHook = func(u bool) { used = u }
		defer func() { standbyUsedHook = nil }()
		out, err := lxRun(t, lxSh("echo ran"), []string{root}, SandboxPolicy{})
		lxRequireOK(t, out, err)
		assert.Equal(t, "ran\n", out.Stdout)
		return used
	}
	standbyWait = 10 * time.Second
	run(0)
	run(200 * time.Millisecond) // the second call starts one, made slowly
	start := time.Now()
	assert.True(t, run(0), "the standby in the making is waited for")
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)

	standbyWait = time.Millisecond
	sbSettle(t)
	assert.True(t, run(300*time.Millisecond), "takes the one made, and starts one made slowly")
	start = time.Now()
	assert.False(t, run(0), "a standby ready only past standbyWait")
	assert.Less(t, time.Since(start), 250*time.Millisecond)
	sbSettle(t)
	assert.True(t, run(0), "the next call takes it")
}

// A standby shares the host's memory and descriptor table while it waits:
// no command may reach them through its /proc/PID/mem or fd/, not even
// where there is no Landlock to refuse that (BestEffort on such a kernel,
// found in review: a command read the host's memory and wrote to its
// stdout). Each command waits beside the standby made for the next call.
func TestStandbyNotReachableFromCommands(t *testing.T) {
	sbRequire(t)
	old := forcedLandlockABI
	forcedLandlockABI = 0
	t.Cleanup(func() { forcedLandlockABI = old })
	root := lxRealDir(t)
	script := `for p in /proc/[0-9]*; do
	[ "$(cat $p/comm 2>/dev/null)" = sandboxexec-sb ] || continue
	echo standby
	head -c 1 $p/environ 2>/dev/null | grep -q . && echo memory-read
	readlink $p/fd/0 >/dev/null 2>&1 && echo fd-named
	(: >$p/fd/1) 2>/dev/null && echo fd-opened
done
true # the last refusal's status (2, from a redirection) is not the script's`
	policy := SandboxPolicy{BestEffort: true}
	// A standby of another policy waits while these run.
	other := SandboxPolicy{BestEffort: true, MaxProcesses: 99}
	sbRun(t, []string{root}, other, "true")
	sbRun(t, []string{root}, other, "true")
	var seen bool
	for range 3 {
		out, _ := sbRun(t, []string{root}, policy, script)
		require.Equal(t, 0, out.ExitCode, out.Stderr)
		assert.NotContains(t, out.Stdout, "memory-read")
		assert.NotContains(t, out.Stdout, "fd-named")
		assert.NotContains(t, out.Stdout, "fd-opened")
		seen = seen || strings.Contains(out.Stdout, "standby")
	}
	assert.True(t, seen, "no command saw a standby beside it")
}

// A standby is kept per policy without its AllowedDomains, which the
// call's own proxy carries: one made after calls that allow b.test serves
// a call that allows localhost with that call's list and refusals, and the
// next one, made after it, a b.test call with b.test's.
func TestStandbyAllowedDomainsOfItsCall(t *testing.T) {
	sbRequire(t)
	npRequireNetns(t)
	plain, _ := npServers(t)
	root := lxRealDir(t)
	script := `python3 - "$1" "$2" <<'PY'
import sys, urllib.request
for u in sys.argv[1:]:
    try:
        print(urllib.request.urlopen(u, timeout=10).read().decode())
    except Exception as e:
        print("refused", getattr(e, "code", e))
PY`
	bPolicy := SandboxPolicy{AllowedDomains: []string{"b.test"}}
	local, byIP := npLocalhost(plain.URL)+"/a", plain.URL+"/b"
	sbRun(t, []string{root}, bPolicy, script, local, byIP)
	sbRun(t, []string{root}, bPolicy, script, local, byIP)
	out, used := sbRun(t, []string{root}, npPolicy, script, local, byIP)
	require.True(t, used, "the localhost call took the standby made after b.test's")
	assert.Equal(t, "hello from /a\nrefused 403\n", out.Stdout)
	assert.Equal(t, []string{strings.TrimPrefix(plain.URL, "http://")}, out.DeniedHosts)
	out, used = sbRun(t, []string{root}, bPolicy, script, local, byIP)
	require.True(t, used, "the b.test call took the standby made after localhost's")
	assert.Equal(t, "refused 403\nrefused 403\n", out.Stdout)
	assert.Equal(t, []string{"localhost:" + plain.URL[strings.LastIndexByte(plain.URL, ':')+1:],
		strings.TrimPrefix(plain.URL, "http://")}, out.DeniedHosts)
}

// A standby whose TMPDIR another call filled (one whose roots hold the
// host's temporary directory, where the TMPDIR is) is discarded off the
// path of the call that finds it so, as a kept TMPDIR is (found in review:
// the call emptied it first, up to a minute, then removed it, up to
// another, all before its own timeout started: 100,000 files held it
// 1.3 s). The files are planted from here, faster than a command would,
// with the standby kept however long that takes (not dropped as idle).
func TestStandbyFilledTMPDIRDiscardedOffPath(t *testing.T) {
	sbRequire(t)
	t.Cleanup(func() { sbDropAll(t) })
	root := lxRealDir(t)
	sbReady(t, root)
	standbys.mu.Lock()
	if standbys.trim != nil {
		standbys.trim.Stop()
		standbys.trim = nil
	}
	var tmp string
	for _, s := range standbys.ready {
		tmp = s.tmp.Path()
	}
	standbys.mu.Unlock()
	require.NotEmpty(t, tmp)
	dir, err := unix.Open(tmp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	for i := 0; i < 100000 && err == nil; i++ {
		var fd int
		if fd, err = unix.Openat(dir, "f"+strconv.Itoa(i), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644); err == nil {
			unix.Close(fd)
		}
	}
	unix.Close(dir)
	require.NoError(t, err)

	// The call alone is timed: lxRun waits for the clean-ups that follow.
	sbSettle(t)
	standbys.mu.Lock()
	ready := len(standbys.ready)
	standbys.mu.Unlock()
	require.Equal(t, 1, ready, "the standby is still kept")
	used := true
	old := standbyUsedHook
	standbyUsedHook = func(u bool) { used = u }
	defer func() { standbyUsedHook = old }()
	ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
	defer cancel()
	start := time.Now()
	out, err := ProcessExecToolCall(ctx, ExecParams{Command: lxSh(`ls -A "$TMPDIR" | wc -l`)},
		SandboxLinuxSeccomp, []string{root}, SandboxPolicy{})
	took := time.Since(start)
	waitTMPDIRCleanups()
	lxRequireOK(t, out, err)
	assert.False(t, used)
	assert.Equal(t, "0\n", out.Stdout, "the call's TMPDIR is empty")
	assert.Less(t, took, 500*time.Millisecond)
	lxRequireAbsent(t, filepath.Join(tmp, "f0"))
}

// A standby holds the limits it was made with: a host that lowers its own
// hard limit after has the next command run within it, not above it in a
// standby made before (found in review: RLIMIT_FSIZE lowered to 4 MiB, and
// the command had the policy's 8 MiB, or the host's earlier limit without
// MaxFileSize). Run in a test process of its own, whose limits it lowers.
func TestStandbyHostLimitLowered(t *testing.T) {
	const env = "SANDBOXEXEC_TEST_STANDBY_LIMITS"
	if os.Getenv(env) != "1" {
		sbRequire(t)
		lxRerunUnder(t, env, "env")
		return
	}
	sbRequire(t)
	const script = `grep 'Max file size' /proc/self/limits`
	for i, policy := range []SandboxPolicy{{MaxFileSize: 8 << 20}, {}} {
		sbDropAll(t)
		root := lxRealDir(t)
		// Until a call takes a standby: under go test ./..., the cgroup
		// package's tests remove the shared group now and then, which fails
		// a standby's step and switches standbys off in this process.
		sbRun(t, []string{root}, policy, script)
		used := false
		for try := 0; try < 20 && !used; try++ {
			standbys.mu.Lock()
			standbys.offUntil = time.Time{}
			standbys.mu.Unlock()
			_, used = sbRun(t, []string{root}, policy, script)
		}
		require.True(t, used, "no standby made for the policy")
		lowered := uint64(4<<20) >> (2 * i) // only ever lowered: raising needs CAP_SYS_RESOURCE
		require.NoError(t, unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: lowered, Max: lowered}))
		out, _ := sbRun(t, []string{root}, policy, script)
		f := strings.Fields(out.Stdout)
		require.Len(t, f, 6, "%q", out.Stdout)
		want := strconv.FormatUint(lowered, 10)
		assert.Equal(t, []string{want, want}, f[3:5], "MaxFileSize %d: the command's limits after the host lowered its own", policy.MaxFileSize)
	}
}

// A standby that failed stops the standbys for standbyRetry, not for the
// rest of the process: one passing failure made every later call of a
// long-lived host spawn.
func TestStandbysResumeAfterFailure(t *testing.T) {
	sbRequire(t)
	root := lxRealDir(t)
	sbReady(t, root)
	was := standbyRetry
	standbyRetry = 200 * time.Millisecond
	defer func() { standbyRetry = was }()
	standbys.mu.Lock()
	standbys.stop()
	standbys.mu.Unlock()
	_, used := sbRun(t, []string{root}, SandboxPolicy{}, "true")
	assert.False(t, used, "a standby taken while they are stopped")
	time.Sleep(standbyRetry)
	sbRun(t, []string{root}, SandboxPolicy{}, "true")
	_, used = sbRun(t, []string{root}, SandboxPolicy{}, "true")
	assert.True(t, used, "no standby taken once the retry time was over")
}
