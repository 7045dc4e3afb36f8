//go:build linux && cgo

package sandboxexec

// Helpers shared by the Linux tests of this package: running a call under
// the real sandbox, the Python probes that report each errno, and the knobs
// that simulate a host with less.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// requireSandbox skips the test when the Linux sandbox cannot be enforced in
// full here, or fails it when SANDBOXEXEC_REQUIRE_SANDBOX=1 (CI machines that
// must run these tests).
func requireSandbox(t *testing.T) SandboxSupport {
	t.Helper()
	s := ProbeSandbox()
	if !s.Available {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("the Linux sandbox is required but not available: %s", s.Detail)
		}
		t.Skipf("the Linux sandbox is not available: %s", s.Detail)
	}
	return s
}

// lxCallLimit bounds every sandboxed call, so that a regression fails the
// test instead of hanging the binary.
const lxCallLimit = 20 * time.Second

func lxRunParams(t *testing.T, p ExecParams, roots []string, policy SandboxPolicy, opts ...Option) (ExecToolCallOutput, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
	defer cancel()
	defer waitTMPDIRCleanups() // the call's TMPDIR emptied, for tests of what it leaves
	return ProcessExecToolCall(ctx, p, SandboxLinuxSeccomp, roots, policy, opts...)
}

func lxRun(t *testing.T, cmd []string, roots []string, policy SandboxPolicy, opts ...Option) (ExecToolCallOutput, error) {
	t.Helper()
	return lxRunParams(t, ExecParams{Command: cmd}, roots, policy, opts...)
}

// lxRequireOK asserts the call succeeded with exit code 0.
func lxRequireOK(t *testing.T, out ExecToolCallOutput, err error) {
	t.Helper()
	require.NoError(t, err, "output: %+v", out)
	require.Equal(t, 0, out.ExitCode, "stdout: %q stderr: %q", out.Stdout, out.Stderr)
}

// lxRequireDenied asserts the call returned a *SandboxDeniedError carrying
// the same, non-empty output that the call returned.
func lxRequireDenied(t *testing.T, out ExecToolCallOutput, err error) {
	t.Helper()
	var denied *SandboxDeniedError
	require.True(t, errors.As(err, &denied), "want *SandboxDeniedError, got %v (output %+v)", err, out)
	assert.Equal(t, out, denied.Output)
	assert.NotEqual(t, 0, out.ExitCode)
	assert.NotEmpty(t, out.Stdout+out.Stderr, "a denial comes with the command's output")
	assert.NotEmpty(t, denied.Error())
}

// lxDeniedOrNil asserts err is nil or a *SandboxDeniedError holding out.
func lxDeniedOrNil(t *testing.T, out ExecToolCallOutput, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var denied *SandboxDeniedError
	require.True(t, errors.As(err, &denied), "unexpected error %v (output %+v)", err, out)
	assert.Equal(t, out, denied.Output)
}

func lxPython(t *testing.T) string {
	t.Helper()
	return hostilePython(t)
}

// lxPyPrelude defines attempt(label, fn): it runs fn and prints
// "label=OK" or "label=<ERRNO NAME> <strerror>", so that a test reads the
// exact errno the command saw. The script exits 1 if any attempt failed.
// check() turns a ctypes -1 return into an OSError carrying errno.
const lxPyPrelude = `
import ctypes, errno, os, socket, sys
failed = False
def attempt(label, fn):
    global failed
    try:
        fn()
    except OSError as e:
        failed = True
        print("%s=%s %s" % (label, errno.errorcode.get(e.errno, e.errno), e.strerror), flush=True)
        return
    print("%s=OK" % label, flush=True)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def check(r):
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def create(p):
    with open(p, "w") as f:
        f.write("sandbox")
`

// lxPy is a python3 command that runs body after lxPyPrelude, with args as
// sys.argv[1:].
func lxPy(t *testing.T, body string, args ...string) []string {
	t.Helper()
	return append([]string{lxPython(t), "-c", lxPyPrelude + body + "\nsys.exit(1 if failed else 0)\n"}, args...)
}

// lxResults reads the "label=VALUE ..." lines of an lxPy script into
// label -> VALUE (the errno name, or OK).
func lxResults(stdout string) map[string]string {
	res := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		label, rest, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.ContainsAny(label, " \t") {
			continue
		}
		res[label], _, _ = strings.Cut(rest, " ")
	}
	return res
}

// lxPyRun runs an lxPy script sandboxed and returns its results. The call
// must end in a nil error or a *SandboxDeniedError (a failed attempt prints
// its strerror and exits 1).
func lxPyRun(t *testing.T, roots []string, policy SandboxPolicy, body string, args ...string) (map[string]string, ExecToolCallOutput) {
	t.Helper()
	out, err := lxRun(t, lxPy(t, body, args...), roots, policy)
	lxDeniedOrNil(t, out, err)
	require.False(t, out.TimedOut)
	require.Empty(t, out.Signal, "python was killed: %+v", out)
	require.Empty(t, out.Stderr, "python failed: %s", out.Stderr)
	return lxResults(out.Stdout), out
}

func lxSh(script string, args ...string) []string {
	return append([]string{"sh", "-c", script, "sh"}, args...)
}

// lxRequireEmptyOrAbsent requires that the directory dir is gone or empty:
// what a call leaves of its private TMPDIR.
func lxRequireEmptyOrAbsent(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	require.NoError(t, err)
	require.Empty(t, entries, "%s must be empty or gone", dir)
}

func lxRequireAbsent(t *testing.T, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	require.True(t, errors.Is(err, fs.ErrNotExist), "%s must not exist (lstat: %v)", path, err)
}

var lxSeq atomic.Int64

// lxSleepArg is a sleep duration unique to this process and call, so that
// /proc can be scanned for exactly the sleeps a test started.
func lxSleepArg(whole int) string {
	return fmt.Sprintf("%d.%d%04d", whole, os.Getpid()%100000, lxSeq.Add(1))
}

// lxPidsWithArg scans /proc for live processes that have arg among their
// arguments (a zombie has an empty cmdline and is not counted).
func lxPidsWithArg(arg string) []int {
	var pids []int
	for _, p := range relProcsWithArg(arg) {
		pids = append(pids, p.pid)
	}
	return pids
}

func lxKillArg(arg string) {
	for _, pid := range lxPidsWithArg(arg) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// lxStartSleeper starts `sleep 30` outside the sandbox and returns it and a
// function that reports whether it is still running.
func lxStartSleeper(t *testing.T) (pid int, alive func() bool) {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	return cmd.Process.Pid, func() bool {
		select {
		case <-done:
			return false
		case <-time.After(50 * time.Millisecond):
			return true
		}
	}
}

// lxSetABI plays a kernel with Landlock ABI abi (0: none) for the rest of
// the test.
func lxSetABI(t *testing.T, abi int) {
	sbOff(t) // a standby in the making reads it
	old := forcedLandlockABI
	forcedLandlockABI = abi
	t.Cleanup(func() { forcedLandlockABI = old })
}

// lxWithoutPIDNamespace makes the runner start commands without PID and IPC
// namespaces for the rest of the test, as on a host without CAP_SYS_ADMIN.
func lxWithoutPIDNamespace(t *testing.T) {
	oldPID, oldIPC := pidNamespaceRefused.Load(), ipcNamespaceRefused.Load()
	pidNamespaceRefused.Store(true)
	ipcNamespaceRefused.Store(true)
	t.Cleanup(func() {
		pidNamespaceRefused.Store(oldPID)
		ipcNamespaceRefused.Store(oldIPC)
	})
}

func lxRealDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func lxRequireDeniedSignal(t *testing.T, out ExecToolCallOutput, err error) {
	t.Helper()
	lxRequireDeniedNoOutput(t, out, err)
	assert.Equal(t, "SIGSYS", out.Signal)
	assert.Equal(t, 128+int(syscall.SIGSYS), out.ExitCode)
}

// lxRequireDeniedNoOutput is lxRequireDenied for a command that may have
// been killed before it printed anything.
func lxRequireDeniedNoOutput(t *testing.T, out ExecToolCallOutput, err error) {
	t.Helper()
	var denied *SandboxDeniedError
	require.True(t, errors.As(err, &denied), "want *SandboxDeniedError, got %v (output %+v)", err, out)
	assert.Equal(t, out, denied.Output)
}

func ptrU64Linux(n uint64) *uint64 { return &n }

// lxRerunUnder runs this test again in a new test binary process that
// wrapper (a command and its arguments) starts, with env set to 1, and
// requires that it passes there.
func lxRerunUnder(t *testing.T, env string, wrapper ...string) {
	t.Helper()
	args := append(append([]string(nil), wrapper[1:]...),
		os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	child := exec.Command(wrapper[0], args...)
	child.Env = append(os.Environ(), env+"=1")
	out, err := child.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s", out)
}

// lxNobodyDir makes a directory in /tmp for lxRunAsNobody, which the user
// nobody can enter (t.TempDir's parent is private to root, and so may be
// $TMPDIR), and removes it when the test ends. It holds a world-readable
// copy of this test binary (go test's may sit in a directory private to
// root too) and home, nobody's own HOME and TMPDIR.
func lxNobodyDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", pattern)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	copyExecutable(t, exe, filepath.Join(dir, "host.test"))
	home := filepath.Join(dir, "home")
	require.NoError(t, os.Mkdir(home, 0o700))
	require.NoError(t, os.Chown(home, nobody, nobody))
	return dir
}

// lxRunAsNobody runs the test binary of lxNobodyDir dir as the user nobody,
// in dir, with -test.count=1 -test.v and args, and this process's
// environment plus env (which wins, TMPDIR included, over dir/home). It
// fails the test with the output if the run fails or outlives limit (given
// to the binary as -test.timeout, for a panic that shows where it hung),
// and returns the output.
func lxRunAsNobody(t *testing.T, dir string, limit time.Duration, env []string, args ...string) string {
	t.Helper()
	out, err := lxNobodyOutput(dir, limit, env, args...)
	require.NoError(t, err, "as nobody:\n%s", out)
	return string(out)
}

// lxNobodyOutput is lxRunAsNobody's run, which calls no method of a
// testing.T: for a goroutine of its own (see lxRunAsNobodyWithMounts).
func lxNobodyOutput(dir string, limit time.Duration, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit+30*time.Second)
	defer cancel()
	host := exec.CommandContext(ctx, filepath.Join(dir, "host.test"),
		append([]string{"-test.count=1", "-test.v", "-test.timeout=" + limit.String()}, args...)...)
	host.Dir = dir
	home := filepath.Join(dir, "home")
	host.Env = append(append(os.Environ(), "HOME="+home, "TMPDIR="+home), env...)
	host.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	// A command left running with the output pipe cannot hold the test.
	host.WaitDelay = 10 * time.Second
	return host.CombinedOutput()
}

// lxRunAsNobodyWithMounts is lxRunAsNobody in a mount namespace of the
// run's own, in which binds (target to source) are made first: a host's
// mounts for the test, which no other process of the machine sees.
func lxRunAsNobodyWithMounts(t *testing.T, binds map[string]string, dir string, limit time.Duration, env []string, args ...string) string {
	t.Helper()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Never unlocked: the thread, in a mount namespace of its own,
		// ends with the goroutine; the run is forked from it.
		runtime.LockOSThread()
		err := unix.Unshare(unix.CLONE_NEWNS)
		if err == nil {
			err = unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		}
		for target, source := range binds {
			if err == nil {
				err = unix.Mount(source, target, "", unix.MS_BIND, "")
			}
		}
		if err != nil {
			done <- result{err: fmt.Errorf("the run's mounts: %w", err)}
			return
		}
		out, err := lxNobodyOutput(dir, limit, env, args...)
		done <- result{out, err}
	}()
	r := <-done
	require.NoError(t, r.err, "as nobody:\n%s", r.out)
	return string(r.out)
}

// lxRerunAsNobody runs the test this is called from again, as the user
// nobody (a test binary of lxNobodyDir's), with env set to 1 and
// SANDBOXEXEC_TEST_ROOT naming an empty directory of nobody's, and requires
// that it passes there.
func lxRerunAsNobody(t *testing.T, env string) {
	t.Helper()
	dir := lxNobodyDir(t, "sandboxexec-nobody-")
	root := filepath.Join(dir, "root")
	require.NoError(t, os.Mkdir(root, 0o755))
	require.NoError(t, os.Chown(root, nobody, nobody))
	name, _, _ := strings.Cut(t.Name(), "/") // a subtest reruns its test
	out := lxRunAsNobody(t, dir, time.Minute, []string{env + "=1", "SANDBOXEXEC_TEST_ROOT=" + root}, "-test.run=^"+name+"$")
	assert.Contains(t, out, "--- PASS: "+name)
	t.Logf("as nobody:\n%s", out)
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// lxRefuse makes the system call name fail with errno in every thread of
// this process from now on (libseccomp-golang loads with TSYNC), and in
// every child: always, or when its first argument has all of mask's bits.
// Only for a test that runs in a process of its own (lxRerunUnder).
func lxRefuse(t *testing.T, name string, errno syscall.Errno, mask uint64) {
	t.Helper()
	f, err := libseccomp.NewFilter(libseccomp.ActAllow)
	require.NoError(t, err)
	defer f.Release()
	call, err := libseccomp.GetSyscallFromName(name)
	require.NoError(t, err)
	act := libseccomp.ActErrno.SetReturnCode(int16(errno))
	if mask == 0 {
		require.NoError(t, f.AddRule(call, act))
	} else {
		c, err := libseccomp.MakeCondition(0, libseccomp.CompareMaskedEqual, mask, mask)
		require.NoError(t, err)
		require.NoError(t, f.AddRuleConditional(call, act, []libseccomp.ScmpCondition{c}))
	}
	require.NoError(t, f.Load())
}

// lxWriteOutside is the errno of a write outside the writable roots: the
// read-only mounts' EROFS where calls get a mount namespace (root, or a
// user namespace), else Landlock's EACCES.
func lxWriteOutside() string {
	if mountNamespaceSupported() {
		return "EROFS"
	}
	return "EACCES"
}

// lxWriteOutsideText is how a shell reports lxWriteOutside.
func lxWriteOutsideText() string {
	if mountNamespaceSupported() {
		return "Read-only file system"
	}
	return "Permission denied"
}

// lxRequireFeature skips a test that needs what this host lacks, or fails
// it where SANDBOXEXEC_REQUIRE_SANDBOX=1 says the host must have it.
func lxRequireFeature(t *testing.T, have bool, what string) {
	t.Helper()
	if !have {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("%s are required but not available here", what)
		}
		t.Skipf("this host cannot make %s", what)
	}
}

const lxNoSysAdminEnv = "SANDBOXEXEC_TEST_NO_SYS_ADMIN"

// lxRerunWithoutSysAdmin re-runs the test as root without CAP_SYS_ADMIN (a
// container's root, usually) and returns false; in that re-run it returns
// true, and the test goes on there.
func lxRerunWithoutSysAdmin(t *testing.T) bool {
	t.Helper()
	if os.Getenv(lxNoSysAdminEnv) != "" {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	lxRerunUnder(t, lxNoSysAdminEnv, "setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin")
	return false
}
