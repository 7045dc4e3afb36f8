//go:build linux && cgo

package sandboxexec

// Processes and signals: what a command can do to processes outside the
// call, and that nothing it starts outlives the call.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Without a PID namespace the user's other processes are in reach; a
// command may not set their resource limits: RLIMIT_CPU of a second killed
// the host, or another call's command (found in review). It may read them,
// and set its own.
func TestLinuxPrlimitOfOthers(t *testing.T) {
	requireSandbox(t)
	lxWithoutPIDNamespace(t)
	other := exec.Command("sleep", lxSleepArg(30))
	require.NoError(t, other.Start())
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	before, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", other.Process.Pid))
	require.NoError(t, err)

	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
import resource
pid = int(sys.argv[1])
attempt("set_other", lambda: resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1)))
attempt("set_other_nofile", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (16, 16)))
attempt("read_other", lambda: resource.prlimit(pid, resource.RLIMIT_CPU))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
attempt("set_own", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 64), hard)))
`, strconv.Itoa(other.Process.Pid))
	assert.Equal(t, "EPERM", res["set_other"], out.Stdout)
	assert.Equal(t, "EPERM", res["set_other_nofile"], out.Stdout)
	assert.Equal(t, "OK", res["read_other"], out.Stdout)
	assert.Equal(t, "OK", res["set_own"], out.Stdout)
	after, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", other.Process.Pid))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

func TestLinuxCannotKillOutsideProcess(t *testing.T) {
	s := requireSandbox(t)
	script := `
pid = int(sys.argv[1])
attempt("kill", lambda: os.kill(pid, 9))
attempt("kill0", lambda: os.kill(pid, 0))
`
	t.Run("default", func(t *testing.T) {
		pid, alive := lxStartSleeper(t)
		want := []string{"EPERM", "ESRCH"}
		if s.PIDNamespace {
			want = []string{"ESRCH"} // not even visible
		}
		res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, script, strconv.Itoa(pid))
		assert.Contains(t, want, res["kill"], out.Stdout)
		assert.Contains(t, want, res["kill0"], out.Stdout)

		shOut, err := lxRun(t, []string{"kill", "-9", strconv.Itoa(pid)}, []string{t.TempDir()}, SandboxPolicy{})
		lxDeniedOrNil(t, shOut, err)
		assert.NotEqual(t, 0, shOut.ExitCode)
		assert.Regexp(t, `(?i)no such process|operation not permitted`, shOut.Stderr)
		assert.True(t, alive(), "the sandbox killed a process outside it")
	})
	t.Run("landlock signal scope without PID namespace", func(t *testing.T) {
		if s.LandlockABI < 6 {
			t.Skipf("Landlock ABI %d has no signal scoping", s.LandlockABI)
		}
		lxWithoutPIDNamespace(t)
		pid, alive := lxStartSleeper(t)
		res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, script, strconv.Itoa(pid))
		assert.Equal(t, "EPERM", res["kill"], out.Stdout)
		assert.Equal(t, "EPERM", res["kill0"], out.Stdout)
		assert.True(t, alive(), "the sandbox killed a process outside it")
	})
}

// The parent-death signal that ties the command to the host stays SIGKILL:
// clearing it or swapping in a signal the command could ignore succeeds and
// changes nothing (programs that set one for their own children keep
// working), and setting SIGKILL again works.
func TestLinuxPdeathsigPinned(t *testing.T) {
	requireSandbox(t)
	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
PR_SET_PDEATHSIG, PR_GET_PDEATHSIG = 1, 2
def get(label):
    sig = ctypes.c_int(-1)
    check(libc.prctl(PR_GET_PDEATHSIG, ctypes.byref(sig), 0, 0, 0))
    print("%s=%d" % (label, sig.value), flush=True)
get("start")
attempt("clear", lambda: check(libc.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)))
get("after_clear")
attempt("sigusr1", lambda: check(libc.prctl(PR_SET_PDEATHSIG, 10, 0, 0, 0)))
attempt("sigkill_high_bits", lambda: check(libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(9 | 1 << 32), 0, 0, 0)))
attempt("sigkill", lambda: check(libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)))
get("end")
`)
	for _, l := range []string{"clear", "sigusr1", "sigkill_high_bits", "sigkill"} {
		assert.Equal(t, "OK", res[l], "%s: %s", l, out.Stdout)
	}
	for _, l := range []string{"start", "after_clear", "end"} {
		assert.Equal(t, "9", res[l], "%s: %s", l, out.Stdout)
	}

	// A child the command starts may ask for a parent-death signal of its
	// own; it is not set, which is harmless: it dies with the call.
	res, out = lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
import subprocess
r = subprocess.run([sys.executable, "-c", "import ctypes; l = ctypes.CDLL(None); print(l.prctl(1, 15, 0, 0, 0))"],
    capture_output=True, text=True)
print("child=%s" % r.stdout.strip())
`)
	assert.Equal(t, "0", res["child"], out.Stdout)
}

// clone3 reports ENOSYS, so that no process can be started straight into
// another cgroup (CLONE_INTO_CGROUP); programs fall back to clone, and
// spawning still works.
func TestLinuxClone3Refused(t *testing.T) {
	requireSandbox(t)
	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
import subprocess
SYS_clone3 = 435  # the same number on every architecture
attempt("clone3", lambda: check(libc.syscall(SYS_clone3, None, 0)))
print("child=%s" % subprocess.run(["echo", "spawned"], capture_output=True, text=True).stdout.strip())
`)
	assert.Equal(t, "ENOSYS", res["clone3"], out.Stdout)
	assert.Equal(t, "spawned", res["child"], out.Stdout)
}

func TestLinuxPtraceAndProcessVM(t *testing.T) {
	requireSandbox(t)
	testPID := strconv.Itoa(os.Getpid())
	body := `
target = int(sys.argv[1])
PTRACE_TRACEME, PTRACE_ATTACH = 0, 16
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(64)
def vm_read(pid):
    local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
    remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
    check(libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
def vm_write(pid):
    local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
    remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
    check(libc.process_vm_writev(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
print("ppid=%d" % os.getppid())
attempt("ptrace_parent", lambda: check(libc.ptrace(PTRACE_ATTACH, os.getppid(), None, None)))
attempt("ptrace_host", lambda: check(libc.ptrace(PTRACE_ATTACH, target, None, None)))
attempt("ptrace_traceme", lambda: check(libc.ptrace(PTRACE_TRACEME, 0, None, None)))
attempt("vm_readv_host", lambda: vm_read(target))
attempt("vm_readv_self", lambda: vm_read(os.getpid()))
attempt("vm_writev_host", lambda: vm_write(target))
`
	// Run python under sh so that its parent is a real process in the
	// sandbox (the command itself is pid 1 of its namespace, with no
	// visible parent).
	py := lxPy(t, body, testPID)
	out, err := lxRun(t, append([]string{"sh", "-c", `"$@"; exit $?`, "sh"}, py...), []string{t.TempDir()}, SandboxPolicy{})
	lxDeniedOrNil(t, out, err)
	require.Empty(t, out.Stderr)
	res := lxResults(out.Stdout)
	assert.NotEqual(t, "0", res["ppid"], "python must have a parent in the sandbox")
	for _, l := range []string{"ptrace_parent", "ptrace_host", "ptrace_traceme", "vm_readv_host", "vm_readv_self", "vm_writev_host"} {
		assert.Equal(t, "EPERM", res[l], "%s: %s", l, out.Stdout)
	}

	if strace, err := exec.LookPath("strace"); err == nil {
		out, err := lxRun(t, []string{strace, "-p", testPID}, []string{t.TempDir()}, SandboxPolicy{})
		lxRequireDenied(t, out, err)
		assert.Contains(t, out.Stderr, "Operation not permitted")
	}
}

// A command cannot make its processes the host's children (clone with
// CLONE_PARENT): the host would be left with their zombies. The filter
// refuses the flag to every process, with or without a PID namespace (in
// one, only the namespace's init, the command, could hand the host a child,
// and the kernel refuses it that). A plain fork works.
func TestLinuxCloneParent(t *testing.T) {
	requireSandbox(t)
	body := `
SYS_clone, CLONE_PARENT, SIGCHLD = 56, 0x8000, 17
def clone(flags):
    pid = libc.syscall(SYS_clone, flags, None, None, None, None)
    if pid == 0:
        os._exit(0)
    check(pid)
    if not flags & CLONE_PARENT:
        os.waitpid(pid, 0)
attempt("fork", lambda: clone(SIGCHLD))
attempt("clone_parent", lambda: clone(CLONE_PARENT | SIGCHLD))
`
	if runtime.GOARCH != "amd64" {
		t.Skip("the probe calls clone by its x86-64 number")
	}
	for _, pidns := range []bool{true, false} {
		if !pidns {
			lxWithoutPIDNamespace(t)
		}
		// Under sh, so that python is not the namespace's init.
		py := lxPy(t, body)
		out, err := lxRun(t, append([]string{"sh", "-c", `"$@"; exit $?`, "sh"}, py...), []string{t.TempDir()}, SandboxPolicy{})
		lxDeniedOrNil(t, out, err)
		res := lxResults(out.Stdout)
		assert.Equal(t, "OK", res["fork"], "pid namespace %v: %s", pidns, out.Stdout)
		assert.Equal(t, "EPERM", res["clone_parent"], "pid namespace %v: %s", pidns, out.Stdout)
	}
}

const lxNofileEnv = "SANDBOXEXEC_TEST_NOFILE"

// Go raises this process's soft RLIMIT_NOFILE at start and gives os/exec
// children the original back; a sandboxed command gets it back too, as a
// plain one does (found in review: it kept the raised limit). Re-run with
// a soft limit below the hard one (1024 where the hard one allows), as a
// host whose service manager set them.
func TestLinuxOpenFileLimitAsStarted(t *testing.T) {
	requireSandbox(t)
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	if os.Getenv(lxNofileEnv) == "" {
		if _, err := exec.LookPath("prlimit"); err != nil {
			t.Skip("prlimit (util-linux) is not installed")
		}
		if lim.Max < 64 || lim.Max == unix.RLIM_INFINITY {
			t.Skipf("the hard limit, %d, leaves no room below it", lim.Max)
		}
		// A soft limit below the hard one is all this may set: raising
		// the hard one takes CAP_SYS_RESOURCE.
		lxRerunUnder(t, lxNofileEnv, "prlimit", fmt.Sprintf("--nofile=%d:%d", min(1024, lim.Max/2), lim.Max))
		return
	}
	want := fmt.Sprintf("%d\n%d\n", min(1024, lim.Max/2), lim.Max)
	require.GreaterOrEqual(t, lim.Cur, lim.Max-1, "Go raised this process's limit (else this tests nothing)")
	for _, st := range []SandboxType{SandboxNone, SandboxLinuxSeccomp} {
		out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: lxSh(`ulimit -Sn; ulimit -Hn`)},
			st, []string{t.TempDir()}, SandboxPolicy{})
		lxRequireOK(t, out, err)
		assert.Equal(t, want, out.Stdout, "%v", st)
	}
}

// No core dump: where core_pattern pipes dumps to a helper, the helper runs
// as root outside the sandbox and writes outside the roots. The limit is 1
// byte, which the kernel takes as "none" for a pipe, and which the command
// can neither raise nor lower: a soft limit of 0 set by the command had the
// helper run (found in review). Setting it succeeds and changes nothing;
// asking for the old limit too is refused. Where core_pattern names a file
// in the working directory (here, a root), no file appears either, even
// with the soft limit raised to the hard one.
func TestLinuxNoCoreDumps(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	// Spawned with a mount namespace and without one (each child sets the
	// limit before its last filter), and from a standby (made after the
	// second call; the host sets its limit).
	for _, policy := range []SandboxPolicy{{}, {FullDiskWriteAccess: true}, {}} {
		linuxNoCoreDumps(t, root, policy)
	}
	if linuxspawn.StandbySupported && hasSysAdmin() && cgroups() != nil {
		sbSettle(t)
		used := false
		standbyUsedHook = func(u bool) { used = u }
		defer func() { standbyUsedHook = nil }()
		linuxNoCoreDumps(t, root, SandboxPolicy{})
		assert.True(t, used, "no standby taken")
	}
}

func linuxNoCoreDumps(t *testing.T, root string, policy SandboxPolicy) {
	res, out := lxPyRun(t, []string{root}, policy, `
import resource, signal, subprocess
print("core=%d,%d" % resource.getrlimit(resource.RLIMIT_CORE))
for name, limit in (("raise", (4096, 4096)), ("lower", (0, 0)), ("soft", (0, 1))):
    attempt(name, lambda: resource.setrlimit(resource.RLIMIT_CORE, limit))
    print("%s.after=%d,%d" % ((name,) + resource.getrlimit(resource.RLIMIT_CORE)))
attempt("prlimit", lambda: resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)))
sh = subprocess.run(["sh", "-c", "ulimit -c 0 && echo set"], capture_output=True, text=True)
print("ulimit=%s" % sh.stdout.strip())
print("ulimit.after=%d,%d" % resource.getrlimit(resource.RLIMIT_CORE))
crash = "import os, resource, signal; h = resource.getrlimit(resource.RLIMIT_CORE)[1]; resource.setrlimit(resource.RLIMIT_CORE, (h, h)); os.kill(os.getpid(), signal.SIGSEGV)"
print("crashed=%d" % -subprocess.run([sys.executable, "-c", crash], cwd=sys.argv[1]).returncode)
`, root)
	assert.Equal(t, "1,1", res["core"], out.Stdout)
	for _, name := range []string{"raise", "lower", "soft"} {
		assert.Equal(t, "OK", res[name], "%s: %s", name, out.Stdout)
		assert.Equal(t, "1,1", res[name+".after"], "%s: %s", name, out.Stdout)
	}
	assert.Equal(t, "EPERM", res["prlimit"], out.Stdout)
	assert.Equal(t, "set", res["ulimit"], out.Stdout)
	assert.Equal(t, "1,1", res["ulimit.after"], out.Stdout)
	assert.Equal(t, strconv.Itoa(int(syscall.SIGSEGV)), res["crashed"], out.Stdout)
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	require.NoError(t, err)
	if p := strings.TrimSpace(string(pattern)); strings.HasPrefix(p, "/") || strings.HasPrefix(p, "|") {
		t.Logf("core_pattern %q dumps outside the working directory: only the limit is checked", p)
		return
	}
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, entries, "a core dump was written")
}

func TestLinuxTimeoutKillsEverything(t *testing.T) {
	requireSandbox(t)
	arg := lxSleepArg(60)
	t.Cleanup(func() { lxKillArg(arg) })
	start := time.Now()
	out, err := lxRunParams(t, ExecParams{
		Command:   lxSh(`sleep "$1" & sleep "$1" & echo $!; wait`, arg),
		TimeoutMs: ptrU64Linux(300),
	}, []string{t.TempDir()}, SandboxPolicy{})
	elapsed := time.Since(start)
	require.NoError(t, err)
	assert.True(t, out.TimedOut)
	assert.Equal(t, TimeoutExitCode, out.ExitCode)
	assert.Less(t, elapsed, 1300*time.Millisecond)
	assert.NotEmpty(t, strings.TrimSpace(out.Stdout), "the background pid was printed")
	assert.Empty(t, lxPidsWithArg(arg), "a sleep survived the timeout")
}

func TestLinuxSetsidDoesNotOutlive(t *testing.T) {
	s := requireSandbox(t)
	if !s.PIDNamespace {
		t.Skip("without a PID namespace a process that leaves the session escapes the kill")
	}
	arg := lxSleepArg(61)
	t.Cleanup(func() { lxKillArg(arg) })
	// A new session and a double fork; the script waits until both sleeps
	// run before it exits.
	script := `setsid sleep "$1" >/dev/null 2>&1 &
( setsid sh -c 'sleep "$1" & exit 0' sh "$1" >/dev/null 2>&1 & )
if command -v pgrep >/dev/null; then
	i=0
	while [ "$(pgrep -c -x -f "sleep $1")" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i+1)); done
	echo "started $(pgrep -c -x -f "sleep $1")"
else
	sleep 0.3
	echo "started 2"
fi`
	start := time.Now()
	out, err := lxRun(t, lxSh(script, arg), []string{t.TempDir()}, SandboxPolicy{})
	elapsed := time.Since(start)
	lxRequireOK(t, out, err)
	assert.Equal(t, "started 2\n", out.Stdout)
	assert.Less(t, elapsed, 3*time.Second)
	assert.Empty(t, lxPidsWithArg(arg), "a process that left the session outlived the call")
}

func TestLinuxConcurrentCalls(t *testing.T) {
	requireSandbox(t)
	const n = 20
	roots := make([]string, n)
	for i := range roots {
		roots[i] = t.TempDir()
	}
	var wg sync.WaitGroup
	outs := make([]ExecToolCallOutput, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
			defer cancel()
			neighbour := roots[(i+1)%n]
			outs[i], errs[i] = ProcessExecToolCall(ctx, ExecParams{Command: lxSh(
				`echo "$1" > "$2/own" && cat "$2/own" && if echo x > "$3/intruder"; then echo LEAK; fi`,
				strconv.Itoa(i), roots[i], neighbour)}, SandboxLinuxSeccomp, []string{roots[i]}, SandboxPolicy{})
		}(i)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		require.NoError(t, errs[i], "call %d: %+v", i, outs[i])
		assert.Equal(t, 0, outs[i].ExitCode, "call %d", i)
		assert.Equal(t, strconv.Itoa(i)+"\n", outs[i].Stdout, "call %d", i)
		assert.Contains(t, outs[i].Stderr, lxWriteOutsideText(), "call %d", i)
		b, err := os.ReadFile(filepath.Join(roots[i], "own"))
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(i)+"\n", string(b))
		lxRequireAbsent(t, filepath.Join(roots[i], "intruder"))
	}
}

const lxSchedChildEnv = "SANDBOXEXEC_TEST_RT_CHILD"

// A host that runs under a real-time policy does not hand it on: a busy
// command of the same priority would starve the host's threads, the one that
// enforces the timeout included.
func TestLinuxRealtimeNotInherited(t *testing.T) {
	requireSandbox(t)
	if os.Getenv(lxSchedChildEnv) == "" {
		for _, tool := range []string{"chrt", "ionice"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s (util-linux) is not installed", tool)
			}
		}
		if err := exec.Command("chrt", "-f", "10", "true").Run(); err != nil {
			t.Skipf("this host may not use SCHED_FIFO: %v", err)
		}
		lxRerunUnder(t, lxSchedChildEnv, "chrt", "-f", "10", "ionice", "-c", "1", "-n", "0")
		return
	}
	out, err := lxRun(t, lxSh(`chrt -p $$; ionice -p $$`), []string{t.TempDir()}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Contains(t, out.Stdout, "SCHED_OTHER")
	assert.NotContains(t, out.Stdout, "realtime")
	// In this process (the host) both are still real-time.
	host, err := exec.Command("sh", "-c", `chrt -p $$; ionice -p $$`).Output()
	require.NoError(t, err)
	assert.Contains(t, string(host), "SCHED_FIFO")
	assert.Contains(t, string(host), "realtime")
}

// lxRunTraced runs a sandboxed command that a process outside the call
// (here the host's own child, as root may) traces with the given
// PTRACE_SEIZE options once it has started; the command then exits. It
// returns the call's result, how long it took, and the tracer, which the
// test's end kills before it checks that the command was reaped.
func lxRunTraced(t *testing.T, options int, timeoutMs uint64) (ExecToolCallOutput, time.Duration, error, *exec.Cmd) {
	t.Helper()
	s := requireSandbox(t)
	if !s.PIDNamespace || cgroups() == nil {
		t.Skip("needs a PID namespace and a pids cgroup")
	}
	if !pidfdUsable() {
		t.Skip("without pidfds the engine waits in wait4, which a tracer holds")
	}
	python := lxPython(t)
	dir := lxRealDir(t)
	marker := "traced-" + strconv.Itoa(os.Getpid())
	type result struct {
		out     ExecToolCallOutput
		elapsed time.Duration
		err     error
	}
	done := make(chan result, 1)
	go func() {
		// No child, so no SIGCHLD: a signal would stop the tracee until its
		// tracer, which never waits, let it go.
		start := time.Now()
		out, err := lxRunParams(t, ExecParams{Command: []string{"sh", "-c",
			`while [ ! -e "$1/attached" ]; do :; done; exit 0`, "sh", dir, marker}}.withTimeoutMs(timeoutMs),
			[]string{dir}, SandboxPolicy{})
		done <- result{out, time.Since(start), err}
	}()
	var pid int
	t.Cleanup(func() { // after the tracer has ended: cleanups run last first
		if pid != 0 {
			engReaped(t, pid)
		}
	})
	tracer, pid := lxAttachTracer(t, python, marker, dir, options)
	r := <-done
	attached, _ := os.ReadFile(filepath.Join(dir, "attached"))
	if string(attached) != "True" {
		t.Skipf("ptrace refused here (Yama?): %s", attached)
	}
	return r.out, r.elapsed, r.err, tracer
}

// lxAttachTracer waits for the command whose arguments hold marker, and
// attaches a python tracer to it (PTRACE_SEIZE with options), which writes
// "True" to dir/attached once it has, and holds the command until the test
// ends. It returns the tracer and the command's pid.
func lxAttachTracer(t *testing.T, python, marker, dir string, options int) (*exec.Cmd, int) {
	t.Helper()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		require.True(t, time.Now().Before(deadline), "the command did not start")
		if pids := pidsWithArg(marker); len(pids) > 0 {
			pid = pids[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	tracer := exec.Command(python, "-c", `import ctypes, sys, time
ok = ctypes.CDLL(None, use_errno=True).ptrace(0x4206, int(sys.argv[1]), None, int(sys.argv[3])) == 0  # PTRACE_SEIZE
open(sys.argv[2] + "/attached", "w").write(str(ok))
time.sleep(60)`, strconv.Itoa(pid), dir, strconv.Itoa(options))
	require.NoError(t, tracer.Start())
	t.Cleanup(func() {
		tracer.Process.Kill()
		tracer.Wait()
	})
	return tracer, pid
}

// A sandboxed command that a process outside the call traces cannot be
// reaped when it exits: the call returns after the drain grace, and its pids
// cgroup, which the unreaped command still counts against, is not handed to
// the next call as empty.
func TestLinuxTracedCommandLeavesNoFullCgroup(t *testing.T) {
	_, _, err, tracer := lxRunTraced(t, 0, 10_000)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("process %d traces it", tracer.Process.Pid))
	for i := 0; i < 3; i++ {
		out, err := lxRun(t, lxSh(`true & wait; echo forked`), []string{t.TempDir()}, SandboxPolicy{MaxProcesses: 2})
		lxRequireOK(t, out, err)
		assert.Equal(t, "forked\n", out.Stdout)
	}
}

// A tracer that holds a sandboxed command in its exit (PTRACE_O_TRACEEXIT),
// and so in its pids cgroup, holds neither the call past its timeout and
// drain grace, nor the release of that cgroup, which waits for the command
// in the background. The call says the command is not reaped: it is alive.
func TestLinuxTracerHoldsExitPastTimeout(t *testing.T) {
	const traceExit = 0x40 // PTRACE_O_TRACEEXIT
	out, elapsed, err, tracer := lxRunTraced(t, traceExit, 1500)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("process %d traces it", tracer.Process.Pid))
	assert.True(t, out.TimedOut)
	assert.Less(t, elapsed, 4*time.Second, "the call waits a grace past the kill, not the tracer")
}

// As its PID namespace's init, the command ignores the signals it sends
// itself without a handler, SIGKILL included, and abort()'s SIGABRT, after
// which glibc ends it with an illegal instruction: docs/linux.md's "As pid 1"
// says so, and a crash the kernel raises is still reported as itself.
func TestLinuxCommandAsPid1(t *testing.T) {
	if !requireSandbox(t).PIDNamespace {
		t.Skip("no PID namespace: the command is not pid 1")
	}
	roots := []string{t.TempDir()}
	out, err := lxRun(t, lxSh(`kill -KILL $$; echo "survived as pid $$"`), roots, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, "survived as pid 1\n", out.Stdout)

	python := lxPython(t)
	for _, tc := range []struct {
		script string
		signal string
	}{
		{"import ctypes; ctypes.string_at(0)", "SIGSEGV"},
		{"import os, signal; signal.signal(signal.SIGUSR1, lambda *a: os._exit(3)); os.kill(1, signal.SIGUSR1); signal.pause()", ""},
	} {
		out, err := lxRun(t, []string{python, "-c", tc.script}, roots, SandboxPolicy{})
		require.NoError(t, err, "%s: %+v", tc.script, out)
		assert.Equal(t, tc.signal, out.Signal, "%s: stderr %q", tc.script, out.Stderr)
		if tc.signal == "" {
			assert.Equal(t, 3, out.ExitCode, "%s: a handler gets the signal", tc.script)
		} else {
			assert.Equal(t, 128+11, out.ExitCode, tc.script)
		}
	}

	// glibc's last resort after an ignored SIGABRT is an instruction that
	// traps: on x86-64 a general protection fault, SIGSEGV.
	out, err = lxRun(t, []string{python, "-c", "import os; os.abort()"}, roots, SandboxPolicy{})
	require.NoError(t, err, "%+v", out)
	assert.NotEqual(t, "SIGABRT", out.Signal, "abort() as pid 1")
	assert.NotEmpty(t, out.Signal, "abort() as pid 1")
	if runtime.GOARCH == "amd64" {
		assert.Equal(t, "SIGSEGV", out.Signal)
		assert.Equal(t, 128+11, out.ExitCode)
	}
}

// As pid 1 the command inherits the namespace's orphans: a shell reaps them,
// a command that waits only for its own children leaves them as zombies,
// each of which holds a place under MaxProcesses until the call ends.
func TestLinuxOrphansOfPid1(t *testing.T) {
	if !requireSandbox(t).PIDNamespace {
		t.Skip("no PID namespace: orphans go to the host's reaper")
	}
	roots := []string{t.TempDir()}
	policy := SandboxPolicy{MaxProcesses: 20}
	out, err := lxRun(t, lxSh(`for i in $(seq 50); do sh -c 'sleep 0 &' || exit 1; done; echo reaped`), roots, policy)
	lxRequireOK(t, out, err)
	assert.Equal(t, "reaped\n", out.Stdout)

	python := []string{lxPython(t), "-c", `import subprocess
for i in range(50):
    if subprocess.run(["sh", "-c", "sleep 0 &"], stderr=subprocess.DEVNULL).returncode != 0:
        print("fork failed after", i)
        break
else:
    print("all ran")`}
	out, err = lxRun(t, python, roots, policy)
	lxRequireOK(t, out, err)
	assert.Regexp(t, `^fork failed after 1\d\n$`, out.Stdout, "zombies hold their places")

	// docs/linux.md's advice: a shell that stays above it reaps them.
	out, err = lxRun(t, lxSh(`"$@"; exit $?`, python...), roots, policy)
	lxRequireOK(t, out, err)
	assert.Equal(t, "all ran\n", out.Stdout)
}

// A command takes no lease (fcntl F_SETLEASE): a write lease makes every
// other open of the file, an execve of it too, wait until the holder lets
// go, up to /proc/sys/fs/lease-break-time (45 s), and a command may take
// one on any file it can read and owns (a root host's command: on the
// host's programs). Found in review: a command that leased a program
// held a concurrent call that ran it until the first call ended, before
// the second call's timeout had started. So does a delegation
// (F_SETDELEG, Linux 6.19). Asking for the lease kind, and locks, still
// work.
func TestLinuxLeaseRefused(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	prog := filepath.Join(root, "prog")
	b, err := os.ReadFile("/bin/true")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(prog, b, 0o755))

	done := make(chan map[string]string, 1)
	go func() {
		res, _ := lxPyRun(t, []string{root}, SandboxPolicy{}, `
import fcntl, signal, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
fd = os.open(sys.argv[1], os.O_RDONLY)
F_SETLEASE, F_GETLEASE, F_SETDELEG = 1024, 1025, 1040
attempt("read_lease", lambda: fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK))
attempt("write_lease", lambda: fcntl.fcntl(fd, F_SETLEASE, fcntl.F_WRLCK))
# struct delegation {u32 d_flags; u16 d_type; u16 pad}: a write delegation
deleg = ctypes.create_string_buffer(b"\0\0\0\0" + fcntl.F_WRLCK.to_bytes(2, sys.byteorder) + b"\0\0")
attempt("delegation", lambda: check(libc.fcntl(fd, F_SETDELEG, deleg)))
attempt("get_lease", lambda: fcntl.fcntl(fd, F_GETLEASE))
attempt("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH))
open(os.path.join(sys.argv[2], "tried"), "w").close()
time.sleep(3)
`, prog, root)
		done <- res
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(root, "tried")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the leases were never tried")
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	out, err := lxRunParams(t, ExecParams{Command: []string{prog}, TimeoutMs: ptrU64Linux(1000)}, []string{root}, SandboxPolicy{})
	took := time.Since(start)
	res := <-done
	lxRequireOK(t, out, err)
	assert.Less(t, took, 1500*time.Millisecond, "the second call's timeout is 1 s")
	assert.Equal(t, "EPERM", res["read_lease"])
	assert.Equal(t, "EPERM", res["write_lease"])
	assert.Equal(t, "EPERM", res["delegation"], "F_SETDELEG, which kernels before 6.19 know not (EINVAL)")
	assert.Equal(t, "OK", res["get_lease"])
	assert.Equal(t, "OK", res["flock"])
}
