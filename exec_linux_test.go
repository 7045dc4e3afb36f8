//go:build linux && cgo

package sandboxexec

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// noPidfdEnv makes this test binary a host whose kernel gives no pidfds: one
// older than 5.3, or a container whose seccomp profile refuses pidfd_open.
// noPidfdSignalEnv makes it one whose profile refuses pidfd_send_signal
// alone.
const (
	noPidfdEnv       = "SANDBOXEXEC_TEST_NO_PIDFD"
	noPidfdSignalEnv = "SANDBOXEXEC_TEST_NO_PIDFD_SIGNAL"
)

func init() {
	refuse := func(name string, errno syscall.Errno) {
		// Before any test: the engine decides once.
		f, err := libseccomp.NewFilter(libseccomp.ActAllow)
		if err == nil {
			var call libseccomp.ScmpSyscall
			if call, err = libseccomp.GetSyscallFromName(name); err == nil {
				if err = f.AddRule(call, libseccomp.ActErrno.SetReturnCode(int16(errno))); err == nil {
					err = f.Load()
				}
			}
			f.Release()
		}
		if err != nil {
			panic("refusing " + name + ": " + err.Error())
		}
	}
	if os.Getenv(noPidfdEnv) != "" {
		refuse("pidfd_open", syscall.ENOSYS)
	}
	if os.Getenv(noPidfdSignalEnv) != "" {
		refuse("pidfd_send_signal", syscall.EPERM)
	}
}

// engineTests are the tests of the engine: timeouts, cancellation, escaped
// processes, floods, live output, descendants, sandboxed or not.
const engineTests = "^(TestEngineWithoutPidfd|TestExec|TestHostile|TestCapture|TestDrain|TestReliability)"

// Where the kernel gives no pidfd, the engine drains each stream on a
// goroutine of its own and waits for the command in wait4. The
// engine's tests pass that way too: this re-runs them in a test binary that
// is refused pidfd_open.
func TestEngineWithoutPidfd(t *testing.T) {
	if os.Getenv(noPidfdEnv) != "" {
		require.False(t, pidfdUsable(), "pidfd_open is refused")
		out, _, err := engRun(t, engSh("echo out; echo err >&2; exit 3"))
		require.NoError(t, err)
		assert.Equal(t, "out\n", out.Stdout)
		assert.Equal(t, "err\n", out.Stderr)
		assert.Equal(t, 3, out.ExitCode)
		return
	}
	if testing.Short() {
		t.Skip("re-runs the engine's tests; skipped with -short")
	}
	require.True(t, pidfdUsable(), "this kernel gives pidfds, and the engine polls them")
	child := exec.Command(os.Args[0], "-test.run="+engineTests, "-test.count=1", "-test.v")
	child.Env = append(os.Environ(), noPidfdEnv+"=1")
	out, err := child.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestEngineWithoutPidfd", "%s", out)
	t.Logf("%d tests passed without pidfds", strings.Count(string(out), "--- PASS: Test"))
}

const probeEMFILEEnv = "SANDBOXEXEC_TEST_PROBE_EMFILE"

// A host out of descriptors when it first asks whether pidfds work learns
// nothing of the kernel from that: the answer is still yes.
func TestPidfdProbeOutOfDescriptors(t *testing.T) {
	if os.Getenv(probeEMFILEEnv) == "" {
		lxRerunUnder(t, probeEMFILEEnv, "env")
		return
	}
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	lim.Cur = min(lim.Cur, 256) // fill no more than that
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	var fillers []int
	for {
		fd, err := syscall.Dup(0)
		if err != nil {
			require.ErrorIs(t, err, syscall.EMFILE)
			break
		}
		fillers = append(fillers, fd)
	}
	usable := pidfdUsable() // the process's first look
	for _, fd := range fillers {
		syscall.Close(fd)
	}
	assert.True(t, usable)
	out, _, err := engRun(t, engSh("echo ok"))
	require.NoError(t, err)
	assert.Equal(t, "ok\n", out.Stdout)
}

const ignoreSIGCHLDEnv = "SANDBOXEXEC_TEST_IGNORE_SIGCHLD"

// A host that ignores SIGCHLD has its children reaped by the kernel, so no
// call could learn how its command ended: a call says so, and runs nothing.
func TestHostIgnoringSIGCHLDRefused(t *testing.T) {
	if os.Getenv(ignoreSIGCHLDEnv) == "" {
		lxRerunUnder(t, ignoreSIGCHLDEnv, "env")
		return
	}
	marker := engMarker(t)
	signal.Ignore(syscall.SIGCHLD)
	for _, st := range []SandboxType{SandboxNone, SandboxLinuxSeccomp} {
		_, err := ProcessExecToolCall(context.Background(), engSh(`touch "$1"`, marker), st, []string{t.TempDir()}, SandboxPolicy{})
		require.Error(t, err, "%v", st)
		assert.Contains(t, err.Error(), "ignores SIGCHLD", "%v", st)
		assert.NoFileExists(t, marker, "%v: nothing runs", st)
	}
	// Notify, not Reset, undoes Ignore.
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGCHLD)
	signal.Stop(c)
	out, _, err := engRun(t, engSh("echo ok"))
	require.NoError(t, err)
	assert.Equal(t, "ok\n", out.Stdout)
}

const panicNilEnv = "SANDBOXEXEC_TEST_PANIC_NIL"

type nilPanicWriter struct{}

func (nilPanicWriter) Write([]byte) (int, error) { panic(nil) }

// Under GODEBUG=panicnil=1 (a main module older than Go 1.21), panic(nil)
// recovers as nil; a live writer that panics so is still dropped, and the
// call still panics, once the command has ended.
func TestLiveWriterPanicsNil(t *testing.T) {
	if os.Getenv(panicNilEnv) == "" {
		lxRerunUnder(t, panicNilEnv, "env", "GODEBUG=panicnil=1")
		return
	}
	var got any
	func() {
		defer func() { got = recover() }()
		engRun(t, engSh("echo one; echo two; sleep 0.1; echo three"), WithLiveOutput(nilPanicWriter{}, nil))
	}()
	assert.IsType(t, new(runtime.PanicNilError), got)
}

// The kernel reaps the children of a host that ignores SIGCHLD behind Go's
// back (C code calling sigaction), or sets SA_NOCLDWAIT: calls refuse to run
// there too.
func TestHostIgnoringSIGCHLDInCRefused(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("sets the disposition with x86-64's struct sigaction")
	}
	if os.Getenv(ignoreSIGCHLDEnv) == "" {
		lxRerunUnder(t, ignoreSIGCHLDEnv, "env")
		return
	}
	sigaction := func(act, old *[4]uint64) {
		_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGCHLD),
			uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
		require.Zero(t, errno)
	}
	var goHandler [4]uint64 // handler, flags, restorer, mask
	sigaction(nil, &goHandler)
	ignore := [4]uint64{1} // SIG_IGN
	noCldWait := goHandler
	noCldWait[1] |= 2 // SA_NOCLDWAIT
	for name, act := range map[string][4]uint64{"SIG_IGN": ignore, "SA_NOCLDWAIT": noCldWait} {
		marker := engMarker(t)
		sigaction(&act, nil)
		_, err := ProcessExecToolCall(context.Background(), engSh(`touch "$1"`, marker), SandboxNone, nil, SandboxPolicy{})
		sigaction(&goHandler, nil)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "ignores SIGCHLD", name)
		assert.NoFileExists(t, marker, "%s: nothing runs", name)
	}
	out, _, err := engRun(t, engSh("echo ok"))
	require.NoError(t, err)
	assert.Equal(t, "ok\n", out.Stdout)
}

// A seccomp profile that refuses pidfd_send_signal but not pidfd_open does
// not cost a sandboxed call its timeout: the command, init of its PID
// namespace, is killed by pid instead, before it is reaped.
func TestSandboxTimeoutWithoutPidfdSignal(t *testing.T) {
	s := requireSandbox(t)
	if !s.PIDNamespace {
		t.Skip("needs CAP_SYS_ADMIN: without a PID namespace the group is killed by pgid")
	}
	if os.Getenv(noPidfdSignalEnv) == "" {
		lxRerunUnder(t, noPidfdSignalEnv, "env")
		return
	}
	require.True(t, pidfdUsable())
	start := time.Now()
	out, err := lxRunParams(t, ExecParams{Command: []string{"sleep", "8"}}.withTimeoutMs(500), []string{t.TempDir()}, SandboxPolicy{})
	require.NoError(t, err)
	assert.True(t, out.TimedOut)
	assert.Less(t, time.Since(start), 3*time.Second, "the timeout killed the command")
}

// Where the engine has no pidfd, it still ends the command's group while
// the command is a zombie, not after the reap: its pid, and its group's id,
// can then be nobody else's.
func TestAwaitDrainingEndsBeforeReap(t *testing.T) {
	req := &spawnRequest{path: "/bin/sh", argv: []string{"sh", "-c", "echo out; exit 7"}, env: os.Environ()}
	stdin, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer stdin.Close()
	req.stdio[0] = stdin
	var readers [2]*os.File
	for i := range readers {
		r, w, err := os.Pipe() // in Go's poller, as drain needs
		require.NoError(t, err)
		defer r.Close()
		readers[i], req.stdio[i+1] = r, w
	}
	ch, err := startPlain(req)
	req.stdio[1].Close()
	req.stdio[2].Close()
	require.NoError(t, err)
	if ch.pidfd != nil {
		ch.pidfd.Close()
		ch.killed.Close()
		ch.pidfd, ch.killed = nil, nil
	}
	streams := [2]*stream{newStream(readers[0], nil), newStream(readers[1], nil)}
	defer streams[0].close()
	defer streams[1].close()

	state := "not called"
	code, _, err := awaitDraining(ch, streams, func() {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(ch.pid) + "/stat")
		if err != nil {
			state = err.Error()
			return
		}
		_, after, _ := strings.Cut(string(stat), ") ")
		state, _, _ = strings.Cut(after, " ")
	})
	require.NoError(t, err)
	assert.Equal(t, 7, code)
	assert.Equal(t, "Z", state, "the command's state when the call ended its group")
	assert.Equal(t, "out\n", streams[0].capture.String())
}

// A pipe Go cannot poll, as Windows' anonymous pipes are, takes no read
// deadline; where a process that escaped the kill holds it, the call still
// returns once the drain grace is over, with what was read before. A
// blocking pipe is one such on Linux; the test holds its write end.
func TestAwaitDrainingAbandonsPipeWithoutDeadline(t *testing.T) {
	req := &spawnRequest{path: "/bin/sh", argv: []string{"sh", "-c", "echo out; echo err >&2"}, env: os.Environ()}
	stdin, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer stdin.Close()
	req.stdio[0] = stdin
	var readers [2]*os.File
	for i := range readers {
		var p [2]int
		require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC)) // blocking: out of Go's poller
		readers[i], req.stdio[i+1] = os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1")
	}
	require.ErrorIs(t, readers[0].SetReadDeadline(time.Now()), os.ErrNoDeadline)
	held := req.stdio[1] // as by a process that escaped the kill
	defer held.Close()
	ch, err := startPlain(req)
	req.stdio[2].Close()
	require.NoError(t, err)
	if ch.pidfd != nil {
		ch.pidfd.Close()
		ch.killed.Close()
		ch.pidfd, ch.killed = nil, nil
	}
	streams := [2]*stream{newStream(readers[0], nil), newStream(readers[1], nil)}
	defer streams[0].close()
	defer streams[1].close()
	defer streams[0].closeReader()
	defer streams[1].closeReader()

	returned := make(chan struct{})
	start := time.Now()
	var code int
	go func() {
		defer close(returned)
		code, _, err = awaitDraining(ch, streams, func() {})
	}()
	select {
	case <-returned:
	case <-time.After(drainGrace + 3*time.Second):
		held.Close() // the read's EOF, so that the test ends
		<-returned
		t.Fatalf("the call waited %v for a pipe that stays open", time.Since(start))
	}
	require.NoError(t, err)
	assert.Zero(t, code)
	assert.GreaterOrEqual(t, time.Since(start), drainGrace, "the stream had its grace")
	assert.Equal(t, "out\n", streams[0].capture.String())
	assert.Equal(t, "err\n", streams[1].capture.String())
	assert.True(t, streams[0].abandoned)
	assert.False(t, streams[1].abandoned, "a stream that reached EOF is not abandoned")

	// The drain goroutine's read returns these; it keeps none of them, and
	// touches the stream no more (the race detector would see it).
	_, err = held.Write([]byte("late\n"))
	require.NoError(t, err)
	held.Close()
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, "out\n", streams[0].capture.String())
}

const adoptingHostEnv = "SANDBOXEXEC_TEST_ADOPTING_HOST"

// A host that is a child subreaper, or pid 1, inherits the processes the
// command leaves in its group when it exits, and those the call's cgroup
// kills outside it: the call reaps what it killed, so that none stays a
// zombie of the host (found in review: one or two per call). This re-runs
// the test binary as a subreaper (as root and as nobody, who has no PID
// namespace), and as the pid 1 of a PID namespace of its own.
func TestExecAdoptingHostLeavesNoZombies(t *testing.T) {
	if os.Getenv(adoptingHostEnv) != "" {
		adoptingHost(t)
		return
	}
	lxRerunUnder(t, adoptingHostEnv, "env")
	if os.Geteuid() != 0 {
		return
	}
	if exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").Run() == nil {
		lxRerunUnder(t, adoptingHostEnv, "unshare", "--pid", "--fork", "--mount-proc")
	}
	dir := lxNobodyDir(t, "sandboxexec-adopting-")
	out := lxRunAsNobody(t, dir, 2*time.Minute, []string{adoptingHostEnv + "=1"}, "-test.run=^"+t.Name()+"$")
	require.Contains(t, out, "--- PASS: "+t.Name(), "%s", out)
}

func adoptingHost(t *testing.T) {
	if os.Getpid() != 1 {
		require.NoError(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	}
	t.Logf("pid %d, uid %d", os.Getpid(), os.Geteuid())
	type run struct {
		name    string
		sandbox SandboxType
		noPIDNS bool
	}
	runs := []run{{"plain", SandboxNone, false}}
	if ProbeSandbox().Available {
		runs = append(runs, run{"sandbox", SandboxLinuxSeccomp, false})
		if os.Geteuid() == 0 {
			runs = append(runs, run{"sandbox without a PID namespace", SandboxLinuxSeccomp, true})
		}
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			if r.noPIDNS {
				lxWithoutPIDNamespace(t)
			}
			script := `sleep 60 & sleep 60 & sh -c 'sleep 60 & sleep 60' & echo $!; `
			// Without a cgroup (a host that is not root) nothing kills
			// what left the group.
			escapes := r.sandbox != SandboxNone && pidfdUsable() && cgroups() != nil
			for i := 0; i < 6; i++ {
				s := script + "exit 3"
				if escapes {
					// The cgroup, where there is one, kills what left the
					// group, and the call reaps it through pidfds: processes
					// that fork as the kill runs (the command exits at once),
					// and, the command exiting later, zombies that an escaped
					// process and one of the group hold (sleep never reaps
					// the true it inherits).
					s = `setsid sh -c 'sleep 60 & sleep 60' & ` + s
					if i%2 == 1 {
						s = `setsid sh -c 'true & exec sleep 60' & sh -c 'setsid true & exec sleep 60' & ` +
							script + "sleep 0.3; exit 3"
					}
				}
				out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"sh", "-c", s}},
					r.sandbox, []string{t.TempDir()}, SandboxPolicy{})
				require.NoError(t, err)
				assert.Equal(t, 3, out.ExitCode, "%+v", out)
				assert.Empty(t, zombieChildren(t), "call %d", i)
			}
			out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"sh", "-c", "sleep 60 & sleep 60"},
				TimeoutMs: ptrU64Linux(100)}, r.sandbox, []string{t.TempDir()}, SandboxPolicy{})
			require.NoError(t, err)
			assert.True(t, out.TimedOut)
			assert.Empty(t, zombieChildren(t), "after a timeout")
		})
	}
}

// zombieChildren lists this process's children that are zombies.
func zombieChildren(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var zombies []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			zombies = append(zombies, pid)
			t.Logf("zombie: %s", stat)
		}
	}
	return zombies
}

const reapingHostEnv = "SANDBOXEXEC_TEST_REAPING_HOST"

// A host that waits for any child (a reaper loop for zombies) races the
// call for its command's exit status: the call either reports the status,
// if it reaped the command first, or says that the status is lost, in time,
// rather than reporting an exit it did not see or waiting for one that is
// gone. Run as a subreaper, where the call also reaps what it killed. (What
// reapedElsewhere guards against, the group's id taken by another group
// once the command was reaped, needs pids to wrap around: not made here.)
func TestHostReapingAnyChild(t *testing.T) {
	if os.Getenv(reapingHostEnv) == "" {
		lxRerunUnder(t, reapingHostEnv, "env")
		return
	}
	require.NoError(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	sandboxes := []SandboxType{SandboxNone}
	if ProbeSandbox().Available { // probed before the reaper starts
		sandboxes = append(sandboxes, SandboxLinuxSeccomp)
	}
	defer repeatUntilStopped(func() {
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 {
			time.Sleep(time.Millisecond)
		}
	})()
	lost := map[SandboxType]int{}
	for _, st := range sandboxes {
		for i := 0; i < 10; i++ {
			start := time.Now()
			out, err := ProcessExecToolCall(context.Background(),
				ExecParams{Command: []string{"sh", "-c", "sleep 60 & sleep 0.05; exit 3"}, TimeoutMs: ptrU64Linux(10_000)},
				st, []string{t.TempDir()}, SandboxPolicy{})
			assert.Less(t, time.Since(start), 5*time.Second, "%v: the call waited for a status that was gone", st)
			if err == nil {
				assert.Equal(t, 3, out.ExitCode, "%v: %+v", st, out)
				continue
			}
			lost[st]++
			assert.ErrorIs(t, err, syscall.ECHILD, "%v", st)
			assert.Contains(t, err.Error(), "reaped by another wait", "%v", st)
		}
	}
	t.Logf("statuses lost to the host's wait, of 10: %v", lost)
}

// A command that a SIGKILL cannot end (frozen by the cgroup v1 freezer, as
// in uninterruptible sleep) holds the call no longer than the drain grace
// past its timeout or cancellation: the longer grace for a PID namespace's
// teardown is for such an init alone. Found in review: every call waited
// 5 s more. The error says the command was not reaped; a cancelled call's
// said only that it was cancelled, with exit code 0 (found in review).
func TestUnkillableCommandReturnsOnTime(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the freezer cgroup needs root")
	}
	freezer := "/sys/fs/cgroup/freezer"
	if _, err := os.Stat(freezer + "/cgroup.procs"); err != nil {
		t.Skip("no cgroup v1 freezer hierarchy here (cgroup v2 lets a SIGKILL through its freezer)")
	}
	run := func(t *testing.T, ctx context.Context, timeout uint64) (ExecToolCallOutput, error) {
		cg, err := os.MkdirTemp(freezer, "sandboxexec-test-")
		require.NoError(t, err)
		t.Cleanup(func() {
			os.WriteFile(cg+"/freezer.state", []byte("THAWED"), 0o644)
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if os.Remove(cg) == nil {
					return
				}
			}
		})
		start := time.Now()
		out, err := ProcessExecToolCall(ctx, ExecParams{
			Command:   []string{"sh", "-c", `echo $$ > "$1/cgroup.procs" && echo FROZEN > "$1/freezer.state"; sleep 10`, "sh", cg},
			TimeoutMs: &timeout,
		}, SandboxNone, nil, SandboxPolicy{})
		took := time.Since(start)
		state, _ := os.ReadFile(cg + "/freezer.state")
		require.Equal(t, "FROZEN\n", string(state), "the command froze itself: %q %v", out.Stderr, err)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "has not been reaped")
		assert.Less(t, took, 300*time.Millisecond+drainGrace+time.Second, "the call returned %v after it started", took)
		return out, err
	}
	t.Run("timeout", func(t *testing.T) {
		out, _ := run(t, context.Background(), 300)
		assert.True(t, out.TimedOut)
		assert.Equal(t, TimeoutExitCode, out.ExitCode)
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		out, err := run(t, ctx, 10_000)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.False(t, out.TimedOut)
		assert.Equal(t, -1, out.ExitCode, "the exit status is unknown")
	})
}

// lookPathAsNobodyEnv holds, for TestLookPathSkipsUnsearchableDirectory's
// run as nobody, the PATH to search.
const lookPathAsNobodyEnv = "SANDBOXEXEC_TEST_LOOKPATH_AS_NOBODY"

// A PATH directory the host cannot search hides nothing it could run: a
// program in none of the others is not found (os/exec and the shells say
// so too), where a file found but not executable is a permission error.
func TestLookPathSkipsUnsearchableDirectory(t *testing.T) {
	if path := os.Getenv(lookPathAsNobodyEnv); path != "" {
		env := []string{"PATH=" + path}
		_, err := lookPath("prog", "", env)
		require.ErrorIs(t, err, exec.ErrNotFound)
		_, err = lookPath("plain", "", env)
		require.ErrorIs(t, err, fs.ErrPermission)
		assert.Contains(t, err.Error(), "plain")
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make a directory that nobody cannot search")
	}
	dir := lxNobodyDir(t, "sandboxexec-lookpath-")
	private, open := filepath.Join(dir, "private"), filepath.Join(dir, "open")
	require.NoError(t, os.Mkdir(private, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(private, "prog"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(open, "plain"), []byte("#!/bin/sh\n"), 0o644))
	out := lxRunAsNobody(t, dir, time.Minute, []string{lookPathAsNobodyEnv + "=" + private + ":" + open},
		"-test.run=^"+t.Name()+"$")
	require.Contains(t, out, "--- PASS: "+t.Name(), out)
}
