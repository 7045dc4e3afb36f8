//go:build linux && cgo

package sandboxexec

// Real-kernel tests of SandboxLinuxSeccomp: every command below runs under
// the actual Landlock ruleset, seccomp filter and PID namespace, and every
// denial is checked by the errno the command saw.
//
// These tests change package state (forcedLandlockABI, pidNamespaceRefused)
// and so none of them calls t.Parallel.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentbox/sandboxexec/internal/landlock"
	"github.com/agentbox/sandboxexec/internal/linuxspawn"
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

func TestLinuxReadEtcPasswd(t *testing.T) {
	requireSandbox(t)
	out, err := lxRun(t, []string{"cat", "/etc/passwd"}, []string{t.TempDir()}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Contains(t, out.Stdout, "root:")
	assert.False(t, out.TimedOut)
}

func TestLinuxWriteInsideRoot(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	script := `set -e
cd "$1"
echo hello > a
mv a b
mkdir d
echo x > d/f
mv d/f d/g
ln -s b link
cat link
rm link d/g
rmdir d
mkdir -p keep/sub
echo kept > keep/sub/file
rm b`
	out, err := lxRun(t, lxSh(script, root), []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, "hello\n", out.Stdout)
	b, err := os.ReadFile(filepath.Join(root, "keep", "sub", "file"))
	require.NoError(t, err)
	assert.Equal(t, "kept\n", string(b))
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "keep", entries[0].Name())

	res, _ := lxPyRun(t, []string{root}, SandboxPolicy{}, `
p = sys.argv[1]
attempt("create", lambda: create(p + "/f"))
attempt("rename", lambda: os.rename(p + "/f", p + "/g"))
attempt("truncate", lambda: os.truncate(p + "/g", 1))
attempt("mkdir", lambda: os.mkdir(p + "/d"))
attempt("remove", lambda: os.remove(p + "/g"))
attempt("rmdir", lambda: os.rmdir(p + "/d"))
attempt("mkfifo", lambda: os.mkfifo(p + "/fifo"))
`, root)
	for _, l := range []string{"create", "rename", "truncate", "mkdir", "remove", "rmdir", "mkfifo"} {
		assert.Equal(t, "OK", res[l], l)
	}
}

func TestLinuxWriteOutsideDenied(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	outsideDir := t.TempDir() // the test's own, not a root
	etcPath := "/etc/sandboxexec-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(lxSeq.Add(1), 10)
	t.Cleanup(func() { os.RemoveAll(etcPath); os.RemoveAll(etcPath + ".d") })

	for name, target := range map[string]string{
		"tempdir": filepath.Join(outsideDir, "f"),
		"etc":     etcPath,
	} {
		t.Run(name, func(t *testing.T) {
			res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
p = sys.argv[1]
attempt("create", lambda: create(p))
attempt("excl", lambda: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)))
attempt("mkdir", lambda: os.mkdir(p + ".d"))
attempt("mkfifo", lambda: os.mkfifo(p))
attempt("symlink", lambda: os.symlink("/etc/passwd", p))
`, target)
			for _, l := range []string{"create", "excl", "mkdir", "mkfifo", "symlink"} {
				assert.Equal(t, lxWriteOutside(), res[l], "%s: %s", l, out.Stdout)
			}
			lxRequireAbsent(t, target)
			lxRequireAbsent(t, target+".d")

			// The same through a shell: exit 2 and "Permission denied",
			// which the call reports as a denial.
			out, err := lxRun(t, lxSh(`echo x > "$1"`, target), []string{root}, SandboxPolicy{})
			lxRequireDenied(t, out, err)
			assert.Equal(t, 2, out.ExitCode)
			assert.Contains(t, out.Stderr, lxWriteOutsideText())
			lxRequireAbsent(t, target)
		})
	}
}

func TestLinuxTruncateOutsideDenied(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	keep := filepath.Join(t.TempDir(), "keep")
	require.NoError(t, os.WriteFile(keep, []byte("precious"), 0o666))

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
p = sys.argv[1]
attempt("truncate", lambda: os.truncate(p, 0))
attempt("truncate_grow", lambda: os.truncate(p, 1 << 20))
attempt("open_trunc", lambda: os.close(os.open(p, os.O_WRONLY | os.O_TRUNC)))
attempt("open_rdwr", lambda: os.close(os.open(p, os.O_RDWR)))
attempt("append", lambda: os.close(os.open(p, os.O_WRONLY | os.O_APPEND)))
attempt("unlink", lambda: os.unlink(p))
attempt("rename", lambda: os.rename(p, p + ".renamed"))
def read():
    with open(p) as f:
        assert f.read() == "precious"
attempt("read", read)
`, keep)
	for _, l := range []string{"truncate", "truncate_grow", "open_trunc", "open_rdwr", "append", "unlink", "rename"} {
		assert.Equal(t, lxWriteOutside(), res[l], "%s: %s", l, out.Stdout)
	}
	assert.Equal(t, "OK", res["read"])
	b, err := os.ReadFile(keep)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(b))
	lxRequireAbsent(t, keep+".renamed")
}

func TestLinuxSymlinkOutOfRoot(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	outside := t.TempDir()
	target := filepath.Join(outside, "target")
	require.NoError(t, os.WriteFile(target, []byte("orig"), 0o666))
	require.NoError(t, os.Symlink(target, filepath.Join(root, "filelink")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "dirlink")))

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
root, outside = sys.argv[1], sys.argv[2]
attempt("file_link", lambda: create(root + "/filelink"))
attempt("dir_link", lambda: create(root + "/dirlink/new"))
attempt("dir_link_mkdir", lambda: os.mkdir(root + "/dirlink/newdir"))
attempt("own_symlink", lambda: os.symlink(outside, root + "/mine"))
attempt("own_link_write", lambda: create(root + "/mine/new2"))
attempt("own_link_trunc", lambda: os.truncate(root + "/mine/target", 0))
`, root, outside)
	assert.Equal(t, "OK", res["own_symlink"], out.Stdout) // a symlink is just a file in the root
	for _, l := range []string{"file_link", "dir_link", "dir_link_mkdir", "own_link_write", "own_link_trunc"} {
		assert.Equal(t, lxWriteOutside(), res[l], "%s: %s", l, out.Stdout)
	}
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "orig", string(b))
	lxRequireAbsent(t, filepath.Join(outside, "new"))
	lxRequireAbsent(t, filepath.Join(outside, "newdir"))
	lxRequireAbsent(t, filepath.Join(outside, "new2"))
}

func TestLinuxLinkAndRenameOutOfRoot(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	outside := t.TempDir()
	src := filepath.Join(root, "f")
	require.NoError(t, os.WriteFile(src, []byte("data"), 0o666))
	outsideFile := filepath.Join(outside, "theirs")
	require.NoError(t, os.WriteFile(outsideFile, []byte("theirs"), 0o666))
	crossDeviceOrDenied := func(t *testing.T, text string) {
		t.Helper()
		assert.True(t, strings.Contains(text, lxWriteOutsideText()) || strings.Contains(text, "Invalid cross-device link"),
			"want EACCES or EXDEV, got %q", text)
	}

	t.Run("ln", func(t *testing.T) {
		out, err := lxRun(t, []string{"ln", src, filepath.Join(outside, "hard")}, []string{root}, SandboxPolicy{})
		lxDeniedOrNil(t, out, err)
		assert.NotEqual(t, 0, out.ExitCode)
		crossDeviceOrDenied(t, out.Stderr)
		lxRequireAbsent(t, filepath.Join(outside, "hard"))
	})
	t.Run("mv", func(t *testing.T) {
		out, err := lxRun(t, []string{"mv", src, filepath.Join(outside, "moved")}, []string{root}, SandboxPolicy{})
		lxDeniedOrNil(t, out, err)
		assert.NotEqual(t, 0, out.ExitCode)
		crossDeviceOrDenied(t, out.Stderr)
		lxRequireAbsent(t, filepath.Join(outside, "moved"))
		b, err := os.ReadFile(src)
		require.NoError(t, err, "the source must survive a failed move")
		assert.Equal(t, "data", string(b))
	})
	t.Run("syscalls", func(t *testing.T) {
		res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
src, out, theirs = sys.argv[1], sys.argv[2], sys.argv[3]
attempt("link_out", lambda: os.link(src, out + "/hard"))
attempt("rename_out", lambda: os.rename(src, out + "/moved"))
attempt("link_in", lambda: os.link(theirs, os.path.dirname(src) + "/stolen_link"))
attempt("rename_in", lambda: os.rename(theirs, os.path.dirname(src) + "/stolen"))
`, src, outside, outsideFile)
		// A hard link into the root would make the outside file writable
		// through its new name in the root: Landlock (refer, ABI 2) refuses
		// a link or rename that would give the file more rights.
		for _, l := range []string{"link_out", "rename_out", "link_in", "rename_in"} {
			assert.Contains(t, []string{lxWriteOutside(), "EXDEV"}, res[l], "%s: %s", l, out.Stdout)
		}
		lxRequireAbsent(t, filepath.Join(root, "stolen_link"))
		lxRequireAbsent(t, filepath.Join(outside, "hard"))
		lxRequireAbsent(t, filepath.Join(outside, "moved"))
		lxRequireAbsent(t, filepath.Join(root, "stolen"))
		b, err := os.ReadFile(outsideFile)
		require.NoError(t, err)
		assert.Equal(t, "theirs", string(b))
	})
}

func TestLinuxRootsValidation(t *testing.T) {
	requireSandbox(t)
	writeScript := `
for p in sys.argv[1:]:
    attempt(p, lambda: create(p))
`
	t.Run("missing root is skipped", func(t *testing.T) {
		root := t.TempDir()
		missing := filepath.Join(t.TempDir(), "does", "not", "exist")
		outside := filepath.Join(t.TempDir(), "f")

		res, out := lxPyRun(t, []string{missing}, SandboxPolicy{}, writeScript, outside)
		assert.Equal(t, lxWriteOutside(), res[outside], out.Stdout)
		lxRequireAbsent(t, outside)

		inRoot := filepath.Join(root, "f")
		res, out = lxPyRun(t, []string{missing, root}, SandboxPolicy{}, writeScript, inRoot, outside)
		assert.Equal(t, "OK", res[inRoot], out.Stdout)
		assert.Equal(t, lxWriteOutside(), res[outside], out.Stdout)
		lxRequireAbsent(t, outside)
	})
	for name, bad := range map[string]func(t *testing.T) string{
		"relative root": func(t *testing.T) string { return "relative/dir" },
		"dotdot root":   func(t *testing.T) string { return t.TempDir() + "/../x" },
		"file root": func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(f, nil, 0o644))
			return f
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			marker := filepath.Join(root, "marker")
			out, err := lxRun(t, []string{"touch", marker}, []string{root, bad(t)}, SandboxPolicy{})
			require.Error(t, err)
			assert.False(t, errors.Is(err, ErrSandboxUnavailable), "a bad root is the caller's mistake: %v", err)
			var denied *SandboxDeniedError
			assert.False(t, errors.As(err, &denied))
			assert.Equal(t, ExecToolCallOutput{}, out)
			lxRequireAbsent(t, marker)
		})
	}
}

func TestLinuxDevices(t *testing.T) {
	requireSandbox(t)
	out, err := lxRun(t, lxSh(`echo x > /dev/null && head -c 4 /dev/zero | od -An -tx1 && head -c 4 /dev/urandom | wc -c`),
		[]string{t.TempDir()}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, []string{"00", "00", "00", "00", "4"}, strings.Fields(out.Stdout))

	res, o := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
def null():
    with open("/dev/null", "w") as f:
        f.write("x")
def zero():
    with open("/dev/zero", "rb") as f:
        assert f.read(3) == b"\0\0\0"
attempt("null", null)
attempt("zero", zero)
attempt("null_trunc", lambda: os.close(os.open("/dev/null", os.O_WRONLY | os.O_TRUNC)))
attempt("create_dev", lambda: create("/dev/sandboxexec-test"))
`)
	assert.Equal(t, "OK", res["null"], o.Stdout)
	assert.Equal(t, "OK", res["zero"], o.Stdout)
	assert.Equal(t, "OK", res["null_trunc"], o.Stdout)
	assert.Equal(t, lxWriteOutside(), res["create_dev"], o.Stdout)
	lxRequireAbsent(t, "/dev/sandboxexec-test")
}

func TestLinuxNetwork(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()

	script := `
port = int(sys.argv[1])
def tcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("127.0.0.1", port))
    os.write(s.fileno(), b"x")
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("127.0.0.1", port))
def udp_raw_sendto():
    # sendto(2) with a destination, on whatever socket can be had (without
    # one, it is send(2), which a socketpair may use).
    a, b = socket.socketpair()
    a.sendto(b"x", "/tmp/sandboxexec-no-such-socket")
attempt("tcp", tcp)
attempt("udp", udp)
attempt("sendto", udp_raw_sendto)
attempt("mptcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262))
attempt("tcp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
`
	t.Run("denied", func(t *testing.T) {
		res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, script, port)
		for _, l := range []string{"tcp", "udp", "sendto", "mptcp", "tcp6", "netlink", "packet"} {
			assert.Equal(t, "EPERM", res[l], "%s: %s", l, out.Stdout)
		}
		select {
		case c := <-accepted:
			c.Close()
			t.Fatal("the listener accepted a connection from a sandbox without network")
		case <-time.After(100 * time.Millisecond):
		}
	})
	t.Run("allowed", func(t *testing.T) {
		res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{NetworkAccess: true}, script, port)
		assert.Equal(t, "OK", res["tcp"], out.Stdout)
		assert.Equal(t, "OK", res["udp"], out.Stdout)
		assert.Equal(t, "OK", res["mptcp"], out.Stdout)
		select {
		case c, ok := <-accepted:
			require.True(t, ok, "listener closed")
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 1)
			n, _ := c.Read(buf)
			assert.Equal(t, "x", string(buf[:n]))
		case <-time.After(5 * time.Second):
			t.Fatal("the listener accepted nothing")
		}
	})
}

// With NetworkAccess, the host's abstract UNIX sockets (an X server's, a
// session bus's, any daemon's) stay out of reach: Landlock scopes them to
// the sandbox whatever the policy (found in review: the network opened
// them). The command's own still work. A pathname socket of the host's is
// reachable with the network (Landlock covers those from ABI 9): the
// documented gap, checked here so that the README stays true.
func TestLinuxNetworkAccessUnixSockets(t *testing.T) {
	s := requireSandbox(t)
	if s.LandlockABI < 6 {
		t.Skipf("the kernel has Landlock ABI %d: no abstract socket scope", s.LandlockABI)
	}
	name := fmt.Sprintf("sandboxexec-test-host-%d", os.Getpid())
	abstract, err := net.Listen("unix", "@"+name)
	require.NoError(t, err)
	defer abstract.Close()
	sockDir := t.TempDir()
	pathname, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	require.NoError(t, err)
	defer pathname.Close()
	for _, ln := range []net.Listener{abstract, pathname} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("host\n"))
				c.Close()
			}
		}()
	}

	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{NetworkAccess: true}, `
def connect(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(addr)
    s.recv(16)
def own():
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind("\0" + sys.argv[1] + "-own")
    srv.listen(1)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect("\0" + sys.argv[1] + "-own")
attempt("host_abstract", lambda: connect("\0" + sys.argv[1]))
attempt("own_abstract", own)
attempt("host_pathname", lambda: connect(sys.argv[2]))
`, name, filepath.Join(sockDir, "s"))
	assert.Equal(t, "EPERM", res["host_abstract"], out.Stdout)
	assert.Equal(t, "OK", res["own_abstract"], out.Stdout)
	assert.Equal(t, "OK", res["host_pathname"], "the README's gap: %s", out.Stdout)
}

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

func TestLinuxUnixSockets(t *testing.T) {
	requireSandbox(t)
	sockDir, err := os.MkdirTemp("", "lxsock")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sockPath := filepath.Join(sockDir, "s")
	ln, err := net.Listen("unix", sockPath)
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	// A datagram socket needs no connect: sendmsg with a destination
	// reaches it, so datagram UNIX sockets are refused outright.
	dgramPath := filepath.Join(sockDir, "d")
	dgram, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgramPath, Net: "unixgram"})
	require.NoError(t, err)
	defer dgram.Close()
	root := t.TempDir()

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
path, root = sys.argv[1], sys.argv[2]
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
def abstract():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0sandboxexec-test-abstract")
def bind():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(root + "/mine.sock")
def pair():
    a, b = socket.socketpair()
    assert os.write(a.fileno(), b"x") == 1
    assert os.read(b.fileno(), 1) == b"x"
    assert os.write(b.fileno(), b"y") == 1
    assert os.read(a.fileno(), 1) == b"y"
def pair_msg():
    a, b = socket.socketpair()
    a.sendmsg([b"z"])
    data, _, _, _ = b.recvmsg(1)
    assert data == b"z"
def pair_send():
    a, b = socket.socketpair()
    a.sendall(b"s")
    assert b.recv(1) == b"s"
def pair_sendto():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.sendto(b"t", root + "/mine.sock")
attempt("connect", connect)
attempt("abstract", abstract)
attempt("bind", bind)
attempt("socketpair", pair)
attempt("sendmsg", pair_msg)
attempt("send", pair_send)
attempt("sendto", pair_sendto)
# AF_UNIX makes a SOCK_RAW socket a datagram socket.
def datagram(kind):
    s = socket.socket(socket.AF_UNIX, kind)
    s.sendmsg([b"d"], [], 0, sys.argv[3])
def datagram_pair(kind):
    a, b = socket.socketpair(socket.AF_UNIX, kind)
    a.sendmsg([b"d"], [], 0, sys.argv[3])
def tipc_pair():
    socket.socketpair(30, socket.SOCK_RDM) # AF_TIPC
def seqpacket_pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    assert os.write(a.fileno(), b"q") == 1
    assert os.read(b.fileno(), 1) == b"q"
attempt("dgram", lambda: datagram(socket.SOCK_DGRAM))
attempt("dgrampair", lambda: datagram_pair(socket.SOCK_DGRAM))
attempt("raw", lambda: datagram(socket.SOCK_RAW))
attempt("rawpair", lambda: datagram_pair(socket.SOCK_RAW))
attempt("tipcpair", tipc_pair)
attempt("seqpacketpair", seqpacket_pair)
`, sockPath, root, dgramPath)
	assert.Equal(t, "EPERM", res["connect"], out.Stdout)
	assert.Equal(t, "EPERM", res["abstract"], out.Stdout)
	assert.Equal(t, "EPERM", res["bind"], out.Stdout)
	assert.Equal(t, "OK", res["socketpair"], out.Stdout)
	assert.Equal(t, "OK", res["sendmsg"], out.Stdout)
	assert.Equal(t, "OK", res["send"], out.Stdout)
	assert.Equal(t, "EPERM", res["sendto"], out.Stdout, "sendto with a destination")
	assert.Equal(t, "EPERM", res["dgram"], out.Stdout)
	assert.Equal(t, "EPERM", res["dgrampair"], out.Stdout)
	assert.Equal(t, "EPERM", res["raw"], out.Stdout)
	assert.Equal(t, "EPERM", res["rawpair"], out.Stdout)
	assert.Equal(t, "EPERM", res["tipcpair"], out.Stdout)
	assert.Equal(t, "OK", res["seqpacketpair"], out.Stdout)
	dgram.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _, err := dgram.ReadFrom(make([]byte, 8)); err == nil {
		t.Fatalf("the datagram socket outside the roots received %d bytes", n)
	}
	select {
	case <-accepted:
		t.Fatal("the UNIX listener outside the roots accepted a connection")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestLinuxSandboxEnv(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "SANDBOXEXEC_NETWORK_DISABLED=0", "TMPDIR=/tmp"}
	script := `echo "net=${SANDBOXEXEC_NETWORK_DISABLED-unset} sb=${SANDBOXEXEC_SANDBOX-unset} tmp=$TMPDIR"`

	out, err := lxRun(t, lxSh(script), []string{root, "/tmp"}, SandboxPolicy{}, WithEnv(env))
	lxRequireOK(t, out, err)
	assert.Equal(t, "net=1 sb=linux tmp=/tmp\n", out.Stdout)

	// An inherited value would claim a restriction that is not there.
	env[1] = "SANDBOXEXEC_NETWORK_DISABLED=1"
	out, err = lxRun(t, lxSh(script), []string{root, "/tmp"}, SandboxPolicy{NetworkAccess: true}, WithEnv(env))
	lxRequireOK(t, out, err)
	assert.Equal(t, "net=unset sb=linux tmp=/tmp\n", out.Stdout)

	// Nor may one claim a sandbox.
	out, err = ProcessExecToolCall(context.Background(), ExecParams{Command: lxSh(script)}, SandboxNone, nil, SandboxPolicy{},
		WithEnv(append(env, "SANDBOXEXEC_SANDBOX=linux")))
	require.NoError(t, err)
	assert.Equal(t, "net=unset sb=unset tmp=/tmp\n", out.Stdout)
}

// Where its temporary directory is not below a writable root, the command
// gets one of its own, writable, outside the roots (the go command ignores
// a go.mod in the temporary directory), empty at the start, and emptied or
// removed once the call is over (see tmpdir_pool_linux_test.go for its
// reuse).
func TestLinuxPrivateTMPDIR(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	hostTmp, err := filepath.EvalSymlinks(os.TempDir())
	require.NoError(t, err)
	script := `printf '%s\n' "$TMPDIR"; ls -A "$TMPDIR"; f=$(mktemp) && echo x >"$f" && mkdir -p "$TMPDIR/a/b" && echo kept >"$TMPDIR/a/b/c" && echo wrote`
	env := []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp"}
	for range 2 {
		out, err := lxRun(t, lxSh(script), []string{root}, SandboxPolicy{}, WithEnv(env))
		lxRequireOK(t, out, err)
		tmp, rest, _ := strings.Cut(out.Stdout, "\n")
		assert.Equal(t, "wrote\n", rest, "nothing of an earlier call's; stderr: %s", out.Stderr)
		assert.True(t, strings.HasPrefix(tmp, filepath.Join(hostTmp, "sandboxexec-")), "TMPDIR %q", tmp)
		lxRequireEmptyOrAbsent(t, tmp)
	}
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing left in the root")

	// Below a root, with FullDiskWriteAccess, or without roots (nothing is
	// written), TMPDIR stays.
	for _, tc := range []struct {
		roots  []string
		policy SandboxPolicy
	}{
		{[]string{root, "/tmp"}, SandboxPolicy{}},
		{[]string{root}, SandboxPolicy{FullDiskWriteAccess: true}},
		{nil, SandboxPolicy{}},
	} {
		out, err := lxRun(t, lxSh(`printf '%s' "$TMPDIR"`), tc.roots, tc.policy, WithEnv(env))
		lxRequireOK(t, out, err)
		assert.Equal(t, "/tmp", out.Stdout, "%v %+v", tc.roots, tc.policy)
	}

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Log("no go command here: its go.mod check is not tried")
		return
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644))
	out, err := lxRunParams(t, ExecParams{Command: []string{goBin, "env", "GOMOD"}, Workdir: root}, []string{root}, SandboxPolicy{},
		WithEnv(append(env, "GOTOOLCHAIN=local", "HOME="+root, "GOFLAGS=")))
	lxRequireOK(t, out, err)
	assert.Equal(t, filepath.Join(root, "go.mod")+"\n", out.Stdout, "stderr: %s", out.Stderr)
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

func TestLinuxProcStatus(t *testing.T) {
	requireSandbox(t)
	out, err := lxRun(t, []string{"cat", "/proc/self/status"}, []string{t.TempDir()}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Contains(t, out.Stdout, "NoNewPrivs:\t1\n")
	assert.Contains(t, out.Stdout, "Seccomp:\t2\n")
}

func TestLinuxTIOCSTI(t *testing.T) {
	requireSandbox(t)
	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
import fcntl, termios
attempt("sti_stdin", lambda: fcntl.ioctl(0, termios.TIOCSTI, b"x"))
# The kernel reads the request as 32 bits: high garbage must not slip past.
attempt("sti_high", lambda: check(libc.syscall(16, 0, ctypes.c_ulong((1 << 32) | termios.TIOCSTI), b"x")))
attempt("linux_stdin", lambda: fcntl.ioctl(0, 0x541C, b"\x06"))
pty = []
attempt("openpty", lambda: pty.extend(os.openpty()))
if pty:
    attempt("sti_pty", lambda: fcntl.ioctl(pty[1], termios.TIOCSTI, b"x"))
    attempt("winsz_pty", lambda: fcntl.ioctl(pty[1], termios.TIOCGWINSZ, b"\0" * 8))
`)
	assert.Equal(t, "EPERM", res["sti_stdin"], out.Stdout)
	assert.Equal(t, "EPERM", res["linux_stdin"], out.Stdout)
	if runtime.GOARCH == "amd64" {
		assert.Equal(t, "EPERM", res["sti_high"], out.Stdout)
	}
	if res["openpty"] == "OK" {
		assert.Equal(t, "EPERM", res["sti_pty"], out.Stdout)
		assert.Equal(t, "OK", res["winsz_pty"], out.Stdout)
	} else {
		t.Logf("openpty inside the sandbox: %s", res["openpty"])
	}
}

// A command starts without a controlling terminal, and takes as one any
// terminal without a session that it opens, if only for reading: a root
// command, a virtual console or a serial line. /dev/tty, that terminal's
// other name, must not give the write the terminal's own name does not
// (found in review: a root command wrote to /dev/tty5 through /dev/tty,
// switched the machine's active console and set its blanking). Here the
// terminal is a pseudo-terminal the test makes, which no session holds,
// and, for a root host, a virtual console where there is one; nothing is
// written to either.
func TestLinuxControllingTerminalNotWritable(t *testing.T) {
	requireSandbox(t)
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	defer master.Close()
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	terminals := []string{fmt.Sprintf("/dev/pts/%d", n)}
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/dev/tty63"); err == nil {
			terminals = append(terminals, "/dev/tty63")
		}
	}
	for _, term := range terminals {
		res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
fd = os.open(sys.argv[1], os.O_RDONLY)
tty_nr = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[4])
print("ctty=%s" % ("yes" if tty_nr else "no"))
attempt("read_tty", lambda: os.close(os.open("/dev/tty", os.O_RDONLY)))
attempt("write_tty", lambda: os.close(os.open("/dev/tty", os.O_WRONLY)))
`, term)
		require.Equal(t, "yes", res["ctty"], "%s did not become the controlling terminal: %s", term, out.Stdout)
		assert.Equal(t, "OK", res["read_tty"], "%s: %s", term, out.Stdout)
		assert.Equal(t, "EACCES", res["write_tty"], "%s: %s", term, out.Stdout)
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
// byte, which the command cannot raise; where core_pattern names a file in
// the working directory (here, a root), no file appears either, even with
// the soft limit raised to the hard one.
func TestLinuxNoCoreDumps(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
import resource, signal, subprocess
print("core=%d,%d" % resource.getrlimit(resource.RLIMIT_CORE))
def raise_core():
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (4096, 4096))
    except ValueError as e: # python's word for EPERM here
        raise OSError(errno.EPERM, str(e))
attempt("raise", raise_core)
crash = "import os, resource, signal; h = resource.getrlimit(resource.RLIMIT_CORE)[1]; resource.setrlimit(resource.RLIMIT_CORE, (h, h)); os.kill(os.getpid(), signal.SIGSEGV)"
print("crashed=%d" % -subprocess.run([sys.executable, "-c", crash], cwd=sys.argv[1]).returncode)
`, root)
	assert.Equal(t, "1,1", res["core"], out.Stdout)
	assert.Equal(t, "EPERM", res["raise"], out.Stdout)
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

func TestLinuxIoUringAndFriends(t *testing.T) {
	requireSandbox(t)
	body := `
params = ctypes.create_string_buffer(120)
attempt("io_uring_setup", lambda: check(libc.syscall(425, 8, params)))
attempt("io_uring_enter", lambda: check(libc.syscall(426, 0, 0, 0, 0, None, 0)))
attempt("io_uring_register", lambda: check(libc.syscall(427, 0, 0, None, 0)))
`
	labels := []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}
	if runtime.GOARCH == "amd64" {
		body += `
attempt("bpf", lambda: check(libc.syscall(321, 0, None, 0)))
attempt("userfaultfd", lambda: check(libc.syscall(323, 0)))
attempt("perf_event_open", lambda: check(libc.syscall(298, None, 0, -1, -1, 0)))
attempt("keyctl", lambda: check(libc.syscall(250, 0, 0)))
`
		labels = append(labels, "bpf", "userfaultfd", "perf_event_open", "keyctl")
	}
	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, body)
	for _, l := range labels {
		assert.Equal(t, "EPERM", res[l], "%s: %s", l, out.Stdout)
	}
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

func TestLinuxHostUnaffected(t *testing.T) {
	requireSandbox(t)
	statusLine := func(key string) string {
		b, err := os.ReadFile("/proc/self/status")
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, key+":") {
				return line
			}
		}
		return ""
	}
	nnpBefore, seccompBefore := statusLine("NoNewPrivs"), statusLine("Seccomp")
	bndBefore := statusLine("CapBnd")

	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "host-file")
	out, err := lxRun(t, lxSh(`echo x > "$1"`, outside), []string{root}, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	lxRequireAbsent(t, outside)

	require.NoError(t, os.WriteFile(outside, []byte("host"), 0o644), "the host must still write outside the roots")
	require.NoError(t, os.Truncate(outside, 1))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err, "the host must keep its network")
	ln.Close()
	assert.Equal(t, nnpBefore, statusLine("NoNewPrivs"))
	assert.Equal(t, seccompBefore, statusLine("Seccomp"))
	assert.Equal(t, bndBefore, statusLine("CapBnd"), "the spawning threads shrink their own bounding set, not the host's")

	// Only the spawning threads carry the filter: a few per filter (four
	// filters here at most: with and without network, whole or split for
	// a mount namespace), never the rest.
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	filtered := 0
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread is gone
		}
		if strings.Contains(string(b), "\nSeccomp:\t2\n") {
			filtered++
			assert.Contains(t, string(b), "\nNoNewPrivs:\t1\n")
		}
	}
	t.Logf("%d of %d threads carry the seccomp filter", filtered, len(tasks))
	assert.Positive(t, filtered)
	assert.LessOrEqual(t, filtered, 4*linuxspawn.ThreadsPerPool())
	assert.Less(t, filtered, len(tasks))
}

func TestLinuxWorkdirAndLookup(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	roots := []string{root}

	out, err := lxRunParams(t, ExecParams{Command: []string{"pwd"}, Workdir: root}, roots, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, root+"\n", out.Stdout)

	out, err = lxRunParams(t, ExecParams{Command: []string{"pwd"}, Workdir: "/etc"}, roots, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, "/etc\n", out.Stdout, "a read-only workdir is fine")

	var denied *SandboxDeniedError
	_, err = lxRunParams(t, ExecParams{Command: []string{"pwd"}, Workdir: filepath.Join(root, "missing")}, roots, SandboxPolicy{})
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.False(t, errors.As(err, &denied))

	_, err = lxRun(t, []string{"sandboxexec-no-such-program-x"}, roots, SandboxPolicy{})
	require.Error(t, err)
	assert.ErrorIs(t, err, exec.ErrNotFound)
	assert.False(t, errors.As(err, &denied))
}

func TestLinuxDenialClassification(t *testing.T) {
	s := requireSandbox(t)
	roots := []string{t.TempDir()}
	var denied *SandboxDeniedError

	for _, code := range []int{3, 126} {
		out, err := lxRun(t, lxSh("exit "+strconv.Itoa(code)), roots, SandboxPolicy{})
		require.NoError(t, err, "exit %d", code)
		assert.Equal(t, code, out.ExitCode)
	}

	// A timeout never counts, even with a denial message in the output.
	out, err := lxRunParams(t, ExecParams{
		Command:   lxSh(`echo "sh: x: Permission denied" >&2; exec sleep 5`),
		TimeoutMs: ptrU64Linux(200),
	}, roots, SandboxPolicy{})
	require.NoError(t, err)
	assert.True(t, out.TimedOut)
	assert.False(t, errors.As(err, &denied))

	// A seccomp kill: an x32 system call is of a foreign ABI, which the
	// filter answers by killing the process with SIGSYS.
	if runtime.GOARCH == "amd64" {
		out, err = lxRun(t, lxPy(t, `libc.syscall(0x40000000 | 39)
print("survived")`), roots, SandboxPolicy{})
		lxRequireDeniedSignal(t, out, err)
		assert.NotContains(t, out.Stdout, "survived")
	}

	// A shell whose child died of SIGSYS says "Bad system call".
	out, err = lxRun(t, lxSh(`sh -c 'kill -SYS $$'; exit $?`), roots, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	assert.Equal(t, 128+int(syscall.SIGSYS), out.ExitCode)
	assert.Empty(t, out.Signal)
	assert.Contains(t, out.Stderr, "Bad system call")

	// A command that signals itself. With a PID namespace the command is
	// pid 1 of it, and pid 1 ignores a signal it has no handler for when
	// it comes from inside its namespace: the shell survives its own
	// kill -SYS. Without the namespace it dies of it, and that is a denial.
	if s.PIDNamespace {
		out, err = lxRun(t, lxSh(`kill -SYS $$; echo "survived as pid $$"`), roots, SandboxPolicy{})
		t.Logf("sh -c 'kill -SYS $$' as pid 1 of its namespace: exit %d, signal %q, stdout %q, err %v",
			out.ExitCode, out.Signal, out.Stdout, err)
	}
	t.Run("self-signal without PID namespace", func(t *testing.T) {
		lxWithoutPIDNamespace(t)
		out, err := lxRun(t, lxSh(`kill -SYS $$; echo survived`), roots, SandboxPolicy{})
		lxRequireDeniedSignal(t, out, err)
		assert.Empty(t, out.Stdout)
	})
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

func TestLinuxFailClosedAndBestEffort(t *testing.T) {
	s := requireSandbox(t)
	netScript := `attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
for p in sys.argv[1:]:
    attempt(p, lambda: create(p))
`
	t.Run("no landlock", func(t *testing.T) {
		lxSetABI(t, 0)
		p := ProbeSandbox()
		assert.False(t, p.Available)
		assert.NotEmpty(t, p.Detail)

		root := t.TempDir()
		marker := filepath.Join(root, "marker")
		out, err := lxRun(t, []string{"touch", marker}, []string{root}, SandboxPolicy{})
		require.ErrorIs(t, err, ErrSandboxUnavailable)
		assert.Equal(t, ExecToolCallOutput{}, out)
		lxRequireAbsent(t, marker)

		res, o := lxPyRun(t, []string{root}, SandboxPolicy{BestEffort: true}, netScript, marker)
		assert.Equal(t, "OK", res[marker], o.Stdout)
		assert.FileExists(t, marker)
		assert.Equal(t, "EPERM", res["tcp"], "seccomp still denies the network: %s", o.Stdout)
	})
	t.Run("abi 2", func(t *testing.T) {
		lxSetABI(t, 2)
		assert.False(t, ProbeSandbox().Available)
		root := t.TempDir()
		marker := filepath.Join(root, "marker")
		outside := filepath.Join(t.TempDir(), "outside")
		out, err := lxRun(t, []string{"touch", marker}, []string{root}, SandboxPolicy{})
		require.ErrorIs(t, err, ErrSandboxUnavailable)
		assert.Equal(t, ExecToolCallOutput{}, out)
		lxRequireAbsent(t, marker)

		res, o := lxPyRun(t, []string{root}, SandboxPolicy{BestEffort: true}, netScript, marker, outside)
		assert.Equal(t, "OK", res[marker], o.Stdout)
		assert.Equal(t, lxWriteOutside(), res[outside], "ABI 2 still handles writes: %s", o.Stdout)
		assert.Equal(t, "EPERM", res["tcp"], o.Stdout)
		assert.FileExists(t, marker)
		lxRequireAbsent(t, outside)
	})
	t.Run("abi 5", func(t *testing.T) {
		if s.LandlockABI < 5 {
			t.Skipf("the kernel has Landlock ABI %d", s.LandlockABI)
		}
		lxSetABI(t, 5)
		assert.True(t, ProbeSandbox().Available)
		_, _, scoped := landlock.Handled(5, landlock.Rules{DenyNetwork: true})
		assert.Zero(t, scoped, "ABI 5 has no scopes")

		root := t.TempDir()
		marker := filepath.Join(root, "marker")
		outside := filepath.Join(t.TempDir(), "outside")
		res, o := lxPyRun(t, []string{root}, SandboxPolicy{}, netScript, marker, outside)
		assert.Equal(t, "OK", res[marker], o.Stdout)
		assert.Equal(t, lxWriteOutside(), res[outside], o.Stdout)
		assert.Equal(t, "EPERM", res["tcp"], o.Stdout)
		lxRequireAbsent(t, outside)

		killScript := `attempt("kill", lambda: os.kill(int(sys.argv[1]), 9))`
		if s.PIDNamespace {
			pid, alive := lxStartSleeper(t)
			res, o := lxPyRun(t, []string{root}, SandboxPolicy{}, killScript, strconv.Itoa(pid))
			assert.Equal(t, "ESRCH", res["kill"], "the PID namespace hides the host's processes: %s", o.Stdout)
			assert.True(t, alive())
		}

		// Without the PID namespace nothing confines signals at ABI 5:
		// the host's process (our own sleep) can be killed. This is
		// why the namespace matters on such kernels.
		lxWithoutPIDNamespace(t)
		pid, alive := lxStartSleeper(t)
		res, o = lxPyRun(t, []string{root}, SandboxPolicy{}, killScript, strconv.Itoa(pid))
		assert.Equal(t, "OK", res["kill"], "no signal scope at ABI 5: %s", o.Stdout)
		assert.False(t, alive(), "no signal scope at ABI 5")
	})
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

func TestLinuxCapabilitiesDropped(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("only a root command has capabilities to drop")
	}
	// Setting the hostname and the clock to what they are needs
	// CAP_SYS_ADMIN and CAP_SYS_TIME, and changes nothing if it works.
	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
for line in open("/proc/self/status"):
    if line.startswith(("CapEff", "CapBnd", "CapAmb")):
        print(line, end="")
name = socket.gethostname().encode()
attempt("hostname", lambda: check(libc.sethostname(name, len(name))))
class timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]
now = timespec()
check(libc.clock_gettime(0, ctypes.byref(now)))
attempt("clock", lambda: check(libc.clock_settime(0, ctypes.byref(now))))
`)
	want := fmt.Sprintf("%016x", uint64(keptCapabilities))
	assert.Contains(t, out.Stdout, "CapEff:\t"+want, out.Stdout)
	assert.Contains(t, out.Stdout, "CapBnd:\t"+want, out.Stdout)
	assert.Contains(t, out.Stdout, "CapAmb:\t0000000000000000", out.Stdout)
	assert.Equal(t, "EPERM", res["hostname"], out.Stdout)
	assert.Equal(t, "EPERM", res["clock"], out.Stdout)
}

// Rulesets are cached per policy; a root that is replaced (removed and made
// again) or moved away between calls must get the rules its path now names:
// writable again in the first case, not writable at its old place in the
// second.
func TestLinuxRootReplacedOrMovedBetweenCalls(t *testing.T) {
	requireSandbox(t)
	base := lxRealDir(t)
	root := filepath.Join(base, "root")
	require.NoError(t, os.Mkdir(root, 0o755))
	write := func(dir string) (ExecToolCallOutput, error) {
		return lxRun(t, lxSh(`echo hi > "$1/f"`, dir), []string{root}, SandboxPolicy{})
	}
	out, err := write(root)
	lxRequireOK(t, out, err)

	require.NoError(t, os.RemoveAll(root))
	require.NoError(t, os.Mkdir(root, 0o755))
	out, err = write(root)
	lxRequireOK(t, out, err)

	// Move the root away and put another directory in its place: the
	// moved one is no longer a writable root.
	moved := filepath.Join(base, "moved")
	require.NoError(t, os.Rename(root, moved))
	require.NoError(t, os.Mkdir(root, 0o755))
	out, err = write(root)
	lxRequireOK(t, out, err)
	out, err = lxRun(t, lxSh(`echo hi > "$1/g"`, moved), []string{root}, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	lxRequireAbsent(t, filepath.Join(moved, "g"))
}

// A command that may write in a root must not be able to widen the next
// call's roots: with roots /p and /p/cache (not made yet), a command that
// makes /p/cache a symlink to a directory outside gets, in the next call, an
// error, not that directory.
func TestLinuxNestedRootSymlinkedOut(t *testing.T) {
	requireSandbox(t)
	base := lxRealDir(t)
	project := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.Mkdir(project, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	roots := []string{project, filepath.Join(project, "cache")}
	pwned := filepath.Join(outside, "pwned")

	out, err := lxRun(t, lxSh(`echo x > "$1"`, pwned), roots, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	out, err = lxRun(t, lxSh(`ln -s "$1" "$2/cache"`, outside, project), roots, SandboxPolicy{})
	lxRequireOK(t, out, err)

	out, err = lxRun(t, lxSh(`echo x > "$1"`, pwned), roots, SandboxPolicy{})
	require.ErrorContains(t, err, "goes through the symlink "+filepath.Join(project, "cache"))
	assert.False(t, errors.Is(err, ErrSandboxUnavailable), "the roots are the caller's: %v", err)
	assert.Equal(t, ExecToolCallOutput{}, out, "nothing ran")
	lxRequireAbsent(t, pwned)
}

// A step of the child that confines the command and fails is
// ErrSandboxUnavailable; a mistake the plain runner would report too keeps
// that runner's error.
func TestLinuxSpawnErrorKinds(t *testing.T) {
	req := &spawnRequest{path: "/bin/prog", dir: "/work"}
	for _, stage := range []string{"close_range", "cgroup", "setrlimit", "pdeathsig", "scheduling", "no_new_privs",
		"landlock_restrict_self", "capabilities", "seccomp"} {
		err := spawnError(req, &linuxspawn.StageError{Stage: stage, Err: syscall.EPERM})
		assert.ErrorIs(t, err, ErrSandboxUnavailable, stage)
		assert.ErrorContains(t, err, stage)
	}
	for _, stage := range []string{"setsid", "dup2", "signals", "clone", "stack"} {
		err := spawnError(req, &linuxspawn.StageError{Stage: stage, Err: syscall.ENOMEM})
		assert.NotErrorIs(t, err, ErrSandboxUnavailable, stage)
		assert.ErrorIs(t, err, syscall.ENOMEM, stage)
	}
	err := spawnError(req, &linuxspawn.StageError{Stage: "execve", Err: syscall.ENOENT})
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "/bin/prog")
	err = spawnError(req, &linuxspawn.StageError{Stage: "chdir", Err: syscall.ENOENT})
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "/work")
}

// Landlock checks a file when it is opened: a descriptor the host left open
// without close-on-exec (a C library's, or one the host itself inherited)
// would let the command write outside its roots, or talk on a socket, with
// nothing checked. The command gets stdin, stdout and stderr only. Not
// parallel: the descriptor would leak into the other tests' children.
func TestLinuxHostDescriptorsNotInherited(t *testing.T) {
	requireSandbox(t)
	lxRequireNoHostDescriptors(t)
}

const lxNoCloseRangeEnv = "SANDBOXEXEC_TEST_NO_CLOSE_RANGE"

// Where close_range is refused (the seccomp profile of an older container
// runtime), the child walks /proc/self/fd instead.
func TestLinuxHostDescriptorsNotInheritedWithoutCloseRange(t *testing.T) {
	requireSandbox(t)
	if os.Getenv(lxNoCloseRangeEnv) == "" {
		lxRerunUnder(t, lxNoCloseRangeEnv, "env")
		return
	}
	lxRefuse(t, "close_range", unix.EPERM, 0)
	require.ErrorIs(t, unix.CloseRange(1000, 1000, 0), unix.EPERM, "close_range is refused")
	lxRequireNoHostDescriptors(t)
}

// lxRequireNoHostDescriptors opens a file outside the roots and a socket,
// neither close-on-exec, and requires that a sandboxed command can use
// neither and has only its stdio open.
func lxRequireNoHostDescriptors(t *testing.T) {
	outside := filepath.Join(lxRealDir(t), "outside")
	require.NoError(t, os.WriteFile(outside, []byte("host\n"), 0o644))
	fd, err := unix.Open(outside, unix.O_WRONLY|unix.O_APPEND, 0) // no O_CLOEXEC
	require.NoError(t, err)
	defer unix.Close(fd)
	sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0) // no SOCK_CLOEXEC
	require.NoError(t, err)
	defer unix.Close(sock)

	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
attempt("write", lambda: os.write(int(sys.argv[1]), b"pwned\n"))
attempt("send", lambda: os.write(int(sys.argv[2]), b"x"))
print("fds=" + ",".join(sorted(os.listdir("/proc/self/fd"), key=int)))
`, strconv.Itoa(fd), strconv.Itoa(sock))
	assert.Equal(t, "EBADF", res["write"], out.Stdout)
	assert.Equal(t, "EBADF", res["send"], out.Stdout)
	// Listing the directory takes one descriptor of its own, 3.
	assert.Equal(t, "0,1,2,3", res["fds"], "the command's descriptors")
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "host\n", string(data), "the file outside the roots")
}

// With namespaces, System V IPC is the call's own: the host's segments are
// out of sight, and what the command makes is not the host's.
func TestLinuxIPCNamespace(t *testing.T) {
	s := requireSandbox(t)
	if !s.PIDNamespace {
		t.Skip("without CAP_SYS_ADMIN the call shares the host's System V IPC (see SECURITY.md)")
	}
	hostKey, callKey := 0x5b000000|os.Getpid()&0xffff, 0x5c000000|os.Getpid()&0xffff
	mqName := fmt.Sprintf("sandboxexec-test-%d", os.Getpid())
	id, err := unix.SysvShmGet(hostKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	require.NoError(t, err)
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })

	res, out := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
host, mine = int(sys.argv[1]), int(sys.argv[2])
attempt("host", lambda: check(libc.shmget(host, 0, 0)))
attempt("mine", lambda: check(libc.shmget(mine, 4096, 0o1600)))
attempt("queue", lambda: check(libc.msgget(mine, 0o1600)))
# A POSIX queue is a file of the namespace's own mqueue mount, which no
# Landlock rule covers: made, but not opened (found in review).
libc.mq_open.restype = ctypes.c_int
attempt("mq_open", lambda: check(libc.mq_open(sys.argv[3].encode(), os.O_CREAT | os.O_RDWR, 0o600, None)))
`, strconv.Itoa(hostKey), strconv.Itoa(callKey), "/"+mqName)
	assert.Equal(t, "ENOENT", res["host"], "the host's segment: %s", out.Stdout)
	assert.Equal(t, "OK", res["mine"], out.Stdout)
	assert.Equal(t, "OK", res["queue"], out.Stdout)
	assert.Equal(t, "EACCES", res["mq_open"], out.Stdout)
	name, err := unix.BytePtrFromString(mqName)
	require.NoError(t, err)
	if fd, _, errno := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_RDONLY, 0, 0, 0, 0); errno == 0 {
		unix.Close(int(fd))
		unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(name)), 0, 0)
		t.Error("the command's message queue was made in the host's namespace")
	} else {
		assert.Equal(t, unix.ENOENT, errno)
	}
	_, err = unix.SysvShmGet(hostKey, 0, 0)
	assert.NoError(t, err, "the host's segment is still there")
	if leftover, err := unix.SysvShmGet(callKey, 0, 0); err == nil {
		unix.SysvShmCtl(leftover, unix.IPC_RMID, nil)
		t.Error("the command's segment was made in the host's namespace")
	}
}

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

const lxNoSysAdminEnv = "SANDBOXEXEC_TEST_NO_SYS_ADMIN"

// Root without CAP_SYS_ADMIN (a container's root, usually) gets no
// namespaces: the probe says so before the first call, and calls run without
// them.
func TestLinuxRootWithoutSysAdmin(t *testing.T) {
	requireSandbox(t)
	if os.Getenv(lxNoSysAdminEnv) == "" {
		if os.Geteuid() != 0 {
			t.Skip("needs root")
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("setpriv (util-linux) is not installed")
		}
		lxRerunUnder(t, lxNoSysAdminEnv, "setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin")
		return
	}
	require.Equal(t, 0, os.Geteuid())
	require.False(t, hasSysAdmin())
	assert.False(t, ProbeSandbox().PIDNamespace, "before the first call")
	hostNS, err := os.Readlink("/proc/self/ns/pid")
	require.NoError(t, err)
	out, err := lxRun(t, []string{"readlink", "/proc/self/ns/pid"}, []string{t.TempDir()}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, hostNS+"\n", out.Stdout, "the host's PID namespace")
	assert.False(t, ProbeSandbox().PIDNamespace, "after a call")
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

const lxNoIPCNamespaceEnv = "SANDBOXEXEC_TEST_NO_IPC_NS"

// A host whose kernel refuses CLONE_NEWIPC (one built without it, or
// systemd's RestrictNamespaces=) keeps the PID namespace: a call drops only
// the namespace that is refused, and remembers that.
func TestLinuxIPCNamespaceRefused(t *testing.T) {
	s := requireSandbox(t)
	if !s.PIDNamespace {
		t.Skip("needs CAP_SYS_ADMIN")
	}
	if os.Getenv(lxNoIPCNamespaceEnv) == "" {
		lxRerunUnder(t, lxNoIPCNamespaceEnv, "env")
		return
	}
	lxRefuse(t, "clone", unix.EINVAL, unix.CLONE_NEWIPC)

	namespaces := func(t *testing.T) (pid, ipc string) {
		pid, err := os.Readlink("/proc/self/ns/pid")
		require.NoError(t, err)
		ipc, err = os.Readlink("/proc/self/ns/ipc")
		require.NoError(t, err)
		return pid, ipc
	}
	hostPID, hostIPC := namespaces(t)
	for i := 0; i < 2; i++ {
		out, err := lxRun(t, lxSh(`readlink /proc/self/ns/pid /proc/self/ns/ipc`), []string{t.TempDir()}, SandboxPolicy{})
		lxRequireOK(t, out, err)
		got := strings.Fields(out.Stdout)
		require.Len(t, got, 2, out.Stdout)
		assert.NotEqual(t, hostPID, got[0], "call %d: a PID namespace of its own", i)
		assert.Equal(t, hostIPC, got[1], "call %d: the host's IPC namespace", i)
	}
	s = ProbeSandbox()
	assert.True(t, s.PIDNamespace)
	assert.False(t, s.IPCNamespace)
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
		engReaped(t, pid)
	})
	r := <-done
	attached, _ := os.ReadFile(filepath.Join(dir, "attached"))
	if string(attached) != "True" {
		t.Skipf("ptrace refused here (Yama?): %s", attached)
	}
	return r.out, r.elapsed, r.err, tracer
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

const lxNamespaceQuotaFullEnv = "SANDBOXEXEC_TEST_NS_QUOTA_FULL"

// A full namespace quota (ENOSPC from clone) fails the call: a command can
// fill the quota by keeping namespaces of its own alive, and calls that went
// on without theirs would reach the host's processes and IPC objects. It is
// not remembered as a refusal: the next call tries again.
func TestLinuxNamespaceQuotaFullFailsClosed(t *testing.T) {
	s := requireSandbox(t)
	if !s.PIDNamespace || !s.IPCNamespace {
		t.Skip("needs CAP_SYS_ADMIN")
	}
	for _, ns := range []struct {
		name string
		flag uint64
	}{{"pid", unix.CLONE_NEWPID}, {"ipc", unix.CLONE_NEWIPC}} {
		t.Run(ns.name, func(t *testing.T) {
			if os.Getenv(lxNamespaceQuotaFullEnv) != ns.name {
				// env sets the variable to the namespace, over lxRerunUnder's 1.
				lxRerunUnder(t, lxNamespaceQuotaFullEnv, "env", lxNamespaceQuotaFullEnv+"="+ns.name)
				return
			}
			lxRefuse(t, "clone", unix.ENOSPC, ns.flag)
			for i := 0; i < 2; i++ {
				root := t.TempDir()
				marker := filepath.Join(root, "ran")
				out, err := lxRun(t, lxSh(`: > "$1"`, marker), []string{root}, SandboxPolicy{})
				require.ErrorIs(t, err, ErrSandboxUnavailable, "call %d: %+v", i, out)
				assert.Contains(t, err.Error(), "namespace quota is full")
				lxRequireAbsent(t, marker)
			}
			assert.False(t, pidNamespaceRefused.Load() || ipcNamespaceRefused.Load(), "a full quota is not a refusal")
		})
	}
}

// As its PID namespace's init, the command ignores the signals it sends
// itself without a handler, SIGKILL included, and abort()'s SIGABRT, after
// which glibc ends it with an illegal instruction: the README's "As pid 1"
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

// A user namespace would give the command the capabilities to set a
// filesystem up, and an overlay's setup empties and remakes its work
// directory, wherever that is, before any hook Landlock has: the way to
// delete and create outside the roots that a review found.
func TestLinuxNoUserNamespaceNorMountAPI(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	victim := t.TempDir()
	for _, d := range []string{filepath.Join(root, "lower"), filepath.Join(root, "upper"), filepath.Join(victim, "work")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	notes := filepath.Join(victim, "work", "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("keep"), 0o644))
	script := `import ctypes, errno, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
def result(r):
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x20000, 17
print("unshare", result(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS)))
if platform.machine() == "x86_64":
    pid = libc.syscall(56, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    print("clone", result(pid))
fd = libc.syscall(430, b"overlay", 1)  # fsopen
print("fsopen", result(fd))
if fd >= 0:
    for key, value in zip(("lowerdir", "upperdir", "workdir"), sys.argv[1:]):
        libc.syscall(431, fd, 1, key.encode(), value.encode(), 0)  # FSCONFIG_SET_STRING
    print("create", result(libc.syscall(431, fd, 6, None, None, 0)))  # FSCONFIG_CMD_CREATE
print("open_tree", result(libc.syscall(428, -100, b"/", 1)))  # OPEN_TREE_CLONE
`
	out, err := lxRun(t, []string{lxPython(t), "-c", script, filepath.Join(root, "lower"), filepath.Join(root, "upper"), victim}, []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	want := "unshare EPERM\n"
	if runtime.GOARCH == "amd64" {
		want += "clone EPERM\n"
	}
	assert.Equal(t, want+"fsopen EPERM\nopen_tree EPERM\n", out.Stdout, "stderr: %s", out.Stderr)
	data, err := os.ReadFile(notes)
	require.NoError(t, err, "a file outside the roots")
	assert.Equal(t, "keep", string(data))
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

	// The README's advice: a shell that stays above it reaps them.
	out, err = lxRun(t, lxSh(`"$@"; exit $?`, python...), roots, policy)
	lxRequireOK(t, out, err)
	assert.Equal(t, "all ran\n", out.Stdout)
}

// /dev/shm is the host's, and writable only as a root: POSIX semaphores
// (Python's multiprocessing.Lock) fail without it, as the README says.
func TestLinuxDevShm(t *testing.T) {
	requireSandbox(t)
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm on this host")
	}
	cmd := []string{lxPython(t), "-c", `import errno, multiprocessing
try:
    multiprocessing.Lock()
    print("lock=OK")
except OSError as e:
    print("lock=" + errno.errorcode[e.errno])`}
	out, err := lxRun(t, cmd, []string{t.TempDir()}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, "lock="+lxWriteOutside()+"\n", out.Stdout)

	out, err = lxRun(t, cmd, []string{t.TempDir(), "/dev/shm"}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, "lock=OK\n", out.Stdout)
}

// A file given as stdin that the command could write through (open for
// writing, or a socket, or a pipe it could open anew for writing) would take
// it past the sandbox, which checks files when they are opened. A file or
// device open for writing is opened anew for reading only, at the same
// offset, which the host's file takes over; a socket or a pipe is copied
// through a pipe, and only while the call lasts, so that what the host reads
// from it next is its own. A read-only file is handed over as it is, and so
// is any file without a sandbox.
func TestLinuxStdinFileCannotBeWritten(t *testing.T) {
	requireSandbox(t)
	roots := []string{t.TempDir()}
	script := lxSh(`read line; echo "read $line"; echo written >&0 && echo "wrote"; echo forged >/proc/self/fd/0 && echo "forged"; test -t 0 && echo "tty"; readlink /proc/self/fd/0`)

	t.Run("file open for writing", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.WriteFile(outside, []byte("input\nmore\n"), 0o644))
		rw, err := os.OpenFile(outside, os.O_RDWR, 0)
		require.NoError(t, err)
		defer rw.Close()
		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(rw))
		require.NoError(t, err)
		assert.Equal(t, "read input\n"+outside+"\n", out.Stdout, "stderr: %s", out.Stderr)
		got, err := os.ReadFile(outside)
		require.NoError(t, err)
		assert.Equal(t, "input\nmore\n", string(got), "the file outside the roots is unchanged")
		off, err := rw.Seek(0, io.SeekCurrent)
		require.NoError(t, err)
		assert.EqualValues(t, len("input\n"), off, "the host's offset is where the command stopped reading")

		// Without a sandbox, os/exec's way: the file as it is.
		_, err = rw.Seek(0, io.SeekStart)
		require.NoError(t, err)
		out, err = ProcessExecToolCall(context.Background(), ExecParams{Command: script}, SandboxNone, nil, SandboxPolicy{}, WithStdin(rw))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "wrote")
	})

	t.Run("file open for reading", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "input")
		require.NoError(t, os.WriteFile(outside, []byte("input\n"), 0o644))
		ro, err := os.Open(outside)
		require.NoError(t, err)
		defer ro.Close()
		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(ro))
		require.NoError(t, err)
		assert.Equal(t, "read input\n"+outside+"\n", out.Stdout, "stderr: %s", out.Stderr)
	})

	t.Run("socket", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}()
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		peer := <-accepted
		require.NotNil(t, peer)
		defer peer.Close()
		sock, err := conn.(*net.TCPConn).File()
		require.NoError(t, err)
		defer sock.Close()
		_, err = peer.Write([]byte("input\n"))
		require.NoError(t, err)

		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(sock))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "read input\n")
		assert.NotContains(t, out.Stdout, "wrote")
		assert.Contains(t, out.Stdout, "pipe:") // the copy's, which goes nowhere else

		// Nothing reached the peer, and what the peer sends now is the
		// host's to read.
		_, err = peer.Write([]byte("for the host"))
		require.NoError(t, err)
		buf := make([]byte, 64)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "for the host", string(buf[:n]))
		peer.(*net.TCPConn).SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _ = peer.Read(buf)
		assert.Zero(t, n, "the command sent %q", buf[:n])
	})

	t.Run("pipe", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		require.NoError(t, err)
		defer pr.Close()
		defer pw.Close()
		_, err = pw.Write([]byte("input\n"))
		require.NoError(t, err)
		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(pr))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "read input\n")

		// What the command wrote to a new open of its stdin went into the
		// copy's pipe, not the host's.
		_, err = pw.Write([]byte("for the host"))
		require.NoError(t, err)
		pr.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, err := pr.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "for the host", string(buf[:n]))
	})

	t.Run("terminal open for writing", func(t *testing.T) {
		master, tty := lxOpenPty(t)
		out, err := lxRun(t, lxSh(`echo written >&0 && echo "wrote"; test -t 0 && echo "tty"`), roots, SandboxPolicy{}, WithStdin(tty))
		require.NoError(t, err)
		assert.Equal(t, "tty\n", out.Stdout, "stderr: %s", out.Stderr)

		// The host's next line is the host's.
		_, err = master.Write([]byte("for the host\n"))
		require.NoError(t, err)
		line, err := bufio.NewReader(tty).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "for the host\n", line)
	})
}

// More cases of a file given as stdin in a sandbox: a file open for writing
// only is not read (the command could not read it without the sandbox
// either); a pseudo-terminal's master, which a new open would turn into a
// new terminal, is copied; a pipe that another call, or the host, reads at
// the same time is not read once the call is over.
func TestLinuxStdinFileKinds(t *testing.T) {
	requireSandbox(t)
	roots := []string{t.TempDir()}

	t.Run("file open for writing only", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret")
		require.NoError(t, os.WriteFile(secret, []byte("secret\n"), 0o644))
		wo, err := os.OpenFile(secret, os.O_WRONLY, 0)
		require.NoError(t, err)
		defer wo.Close()
		out, err := lxRun(t, lxSh(`cat; echo "done"`), roots, SandboxPolicy{}, WithStdin(wo))
		require.NoError(t, err)
		assert.Equal(t, "done\n", out.Stdout)
	})

	t.Run("memfd open for reading", func(t *testing.T) {
		// A file on an internal mount, which Landlock does not check: a
		// new open of /proc/self/fd/0 would give write access to it.
		mfd, err := unix.MemfdCreate("sandboxexec-test", unix.MFD_CLOEXEC)
		require.NoError(t, err)
		defer unix.Close(mfd)
		_, err = unix.Write(mfd, []byte("original\n"))
		require.NoError(t, err)
		ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", mfd))
		require.NoError(t, err)
		defer ro.Close()
		out, err := lxRun(t, lxSh(`read line; echo "read $line"; echo PWNED >/proc/self/fd/0 && echo "wrote"`), roots, SandboxPolicy{}, WithStdin(ro))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "read original\n", "stderr: %s", out.Stderr)
		// (What it wrote went into the copy's pipe.)
		buf := make([]byte, 64)
		n, err := unix.Pread(mfd, buf, 0)
		require.NoError(t, err)
		assert.Equal(t, "original\n", string(buf[:n]))
	})

	t.Run("terminal master", func(t *testing.T) {
		master, tty := lxOpenPty(t)
		_, err := tty.Write([]byte("hello\n"))
		require.NoError(t, err)
		p := ExecParams{Command: lxSh(`read line; echo "got $line"`), TimeoutMs: ptrU64Linux(5000)}
		out, err := lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(master))
		require.NoError(t, err)
		assert.False(t, out.TimedOut, "the command waited on a new terminal")
		assert.Contains(t, out.Stdout, "got hello")
	})

	t.Run("terminal master open for reading only", func(t *testing.T) {
		// Its TIOCSIG would signal the terminal's foreground processes,
		// the host's: the command gets a copy.
		master, err := os.OpenFile("/dev/ptmx", os.O_RDONLY|unix.O_NOCTTY, 0)
		if err != nil {
			t.Skipf("no pseudo-terminals here: %v", err)
		}
		defer master.Close()
		script := `import errno, fcntl, signal
try:
    fcntl.ioctl(0, 0x40045436, signal.SIGINT)  # TIOCSIG
    print("signalled")
except OSError as e:
    print(errno.errorcode[e.errno])`
		p := ExecParams{Command: []string{lxPython(t), "-c", script}, TimeoutMs: ptrU64Linux(5000)}
		out, err := lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(master))
		require.NoError(t, err)
		assert.Equal(t, "ENOTTY\n", out.Stdout, "stderr: %s", out.Stderr)
	})

	t.Run("terminal master read by the host too", func(t *testing.T) {
		// The host reads the master while the copy does: where it takes
		// what the copy's poll saw, the copy's read blocks until the
		// terminal gives more, and the call must come back all the same
		// (found in review: it hung in 5 of 15).
		for i := range 15 {
			master, tty := lxOpenPty(t)
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // the terminal's other end, typing for 10 ms or so
				defer wg.Done()
				for range 200 {
					tty.Write([]byte("x"))
					time.Sleep(50 * time.Microsecond)
				}
			}()
			go func() { // the host's own reader of the master
				defer wg.Done()
				buf := make([]byte, 64)
				for !stop.Load() {
					if _, err := master.Read(buf); err != nil {
						return
					}
				}
			}()
			// The typing is over before the command is: nothing unblocks
			// a read that lost the race for the last of it.
			p := ExecParams{Command: []string{"sleep", "0.1"}, TimeoutMs: ptrU64Linux(5000)}
			done := make(chan error, 1)
			var out ExecToolCallOutput
			go func() {
				var err error
				out, err = lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(master))
				done <- err
			}()
			select {
			case err := <-done:
				require.NoError(t, err)
				assert.False(t, out.TimedOut, "iteration %d", i)
			case <-time.After(10 * time.Second):
				stop.Store(true)
				t.Fatalf("iteration %d: the call has not returned in 10 s", i)
			}
			stop.Store(true)
			tty.Close() // the master's reads end (EIO), the copy's too
			wg.Wait()
		}
	})

	t.Run("eventfd read by the host too", func(t *testing.T) {
		// An anonymous inode, of no file kind: its read blocks as a
		// terminal's does (found in review: the call hung until the next
		// write).
		for i := range 15 {
			efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
			require.NoError(t, err)
			f := os.NewFile(uintptr(efd), "eventfd")
			one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // a few events, over before the command is
				defer wg.Done()
				for range 10 {
					unix.Write(efd, one)
					time.Sleep(2 * time.Millisecond)
				}
			}()
			go func() { // the host's own reader
				defer wg.Done()
				buf := make([]byte, 8)
				for !stop.Load() {
					fds := []unix.PollFd{{Fd: int32(efd), Events: unix.POLLIN}}
					if n, _ := unix.Poll(fds, 10); n > 0 {
						unix.Read(efd, buf)
					}
				}
			}()
			p := ExecParams{Command: []string{"sleep", "0.1"}, TimeoutMs: ptrU64Linux(5000)}
			done := make(chan error, 1)
			go func() {
				_, err := lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(f))
				done <- err
			}()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				stop.Store(true)
				unix.Write(efd, one)
				t.Fatalf("iteration %d: the call has not returned in 10 s", i)
			}
			// The host's reader, and a copy, may be blocked in a read:
			// events until both have ended.
			stop.Store(true)
			readers := make(chan struct{})
			go func() { wg.Wait(); close(readers) }()
			for ended := false; !ended; {
				unix.Write(efd, one)
				select {
				case <-readers:
					ended = true
				case <-time.After(10 * time.Millisecond):
				}
			}
			unix.Write(efd, one)
			time.Sleep(10 * time.Millisecond)
			f.Close()
		}
	})

	t.Run("pipe fed while the call ends", func(t *testing.T) {
		// The copy may have polled input just before the command ended: it
		// must be over when the call returns, or it reads what the host
		// writes next (found in review, with one P: the copier had not run
		// yet when the call returned).
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		for i := range 20 {
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			var stop atomic.Bool
			fed := make(chan struct{})
			go func() {
				defer close(fed)
				block := bytes.Repeat([]byte("Y"), 512)
				for !stop.Load() {
					pw.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
					pw.Write(block)
					runtime.Gosched()
				}
			}()
			_, err = lxRun(t, []string{"head", "-c", "20000"}, roots, SandboxPolicy{}, WithStdin(pr))
			require.NoError(t, err)
			stack := make([]byte, 1<<20)
			stack = stack[:runtime.Stack(stack, true)]
			require.NotContains(t, string(stack), "copyFromFD", "iteration %d: the copy outlived the call", i)
			stop.Store(true)
			<-fed
			// What the host writes now is the host's to read. (Fd makes
			// the file blocking: once.)
			fd := int(pr.Fd())
			require.NoError(t, unix.SetNonblock(fd, true))
			for buf := make([]byte, 1<<16); ; {
				if n, _ := unix.Read(fd, buf); n <= 0 {
					break
				}
			}
			require.NoError(t, pw.SetWriteDeadline(time.Time{}))
			_, err = pw.Write([]byte("for the host"))
			require.NoError(t, err)
			buf := make([]byte, 64)
			n, err := unix.Read(fd, buf)
			require.NoError(t, err)
			assert.Equal(t, "for the host", string(buf[:n]))
			pr.Close()
			pw.Close()
		}
	})

	t.Run("pipe read by two calls", func(t *testing.T) {
		for range 5 {
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			stop := make(chan struct{})
			fed := make(chan struct{})
			go func() {
				defer close(fed)
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
						pw.Write([]byte{'.'})
					}
				}
			}()
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := lxRun(t, lxSh(`sleep 0.2`), roots, SandboxPolicy{}, WithStdin(pr))
					assert.NoError(t, err)
				}()
			}
			wg.Wait()
			close(stop)
			<-fed
			// Drain what the calls left (pr is blocking now: the call took
			// its descriptor), then the host's next bytes are its.
			fd := int(pr.Fd())
			require.NoError(t, unix.SetNonblock(fd, true))
			buf := make([]byte, 4096)
			for {
				if n, _ := unix.Read(fd, buf); n <= 0 {
					break
				}
			}
			_, err = pw.Write([]byte("for the host"))
			require.NoError(t, err)
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
			require.NoError(t, err)
			require.Equal(t, 1, n, "a copier of a finished call took the host's bytes")
			n, err = unix.Read(fd, buf)
			require.NoError(t, err, "a copier of a finished call took the host's bytes")
			assert.Equal(t, "for the host", string(buf[:n]))
			pr.Close()
			pw.Close()
		}
	})
}

// lxOpenPty opens a pseudo-terminal: its master, and its terminal open for
// reading and writing, as an interactive stdin is.
func lxOpenPty(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	return m, tty
}

const lxProbeEMFILEEnv = "SANDBOXEXEC_TEST_SANDBOX_PROBE_EMFILE"

// A host that runs out of descriptors while its first sandboxed calls look
// for seccomp and the pids cgroup gets errors from those calls, not a
// sandbox without them for the rest of its life (found in review: one
// EMFILE made every later strict call fail, best-effort calls run without
// seccomp, and calls go without the cgroup that kills escaped processes).
// It runs in a child process of the test binary, where nothing was probed
// yet, with 0 to 40 descriptors left free for one call each.
func TestLinuxSandboxProbesOutOfDescriptors(t *testing.T) {
	if os.Getenv(lxProbeEMFILEEnv) == "" {
		requireSandbox(t)
		lxRerunUnder(t, lxProbeEMFILEEnv, "env")
		return
	}
	withCgroup := os.Geteuid() == 0 // the machines the tests run on give root one
	check := "grep Seccomp: /proc/self/status; cat /proc/self/cgroup"
	sandboxed := func(out ExecToolCallOutput) {
		t.Helper()
		assert.Contains(t, out.Stdout, "Seccomp:\t2", "a call ran without its filter")
		if withCgroup {
			assert.Contains(t, out.Stdout, "/sandboxexec/", "a call ran outside a pids cgroup")
		}
	}
	inUse := func() (fds []int) {
		for fd := 0; fd < 4096; fd++ {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
				fds = append(fds, fd)
			}
		}
		return fds
	}
	// Go's poller, made at the first pipe, is the runtime's: its epoll
	// descriptor cannot be had out of descriptors either, and the runtime
	// dies without it.
	r, w, err := os.Pipe()
	require.NoError(t, err)
	r.Close()
	w.Close()
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &old))
	failed := 0
	for free := 0; free <= 40; free++ {
		// A limit that leaves free descriptors free, below it.
		before := inUse()
		limit, left := 0, 0
		for i := 0; left < free || (i < len(before) && before[i] == limit); limit++ {
			if i < len(before) && before[i] == limit {
				i++
			} else {
				left++
			}
		}
		lowered := old
		lowered.Cur = uint64(limit)
		require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lowered))
		for _, bestEffort := range []bool{false, true} {
			out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"sh", "-c", check}},
				SandboxLinuxSeccomp, []string{t.TempDir()}, SandboxPolicy{BestEffort: bestEffort})
			if err != nil {
				failed++
				continue
			}
			sandboxed(out)
		}
		require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &old))
	}
	t.Logf("%d of 82 calls failed for want of descriptors", failed)
	assert.Positive(t, failed)
	s := ProbeSandbox()
	require.True(t, s.Available, "%+v", s)
	assert.True(t, s.Seccomp, "%+v", s)
	for _, bestEffort := range []bool{false, true} {
		out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"sh", "-c", check}},
			SandboxLinuxSeccomp, []string{t.TempDir()}, SandboxPolicy{BestEffort: bestEffort})
		lxRequireOK(t, out, err)
		sandboxed(out)
	}
}

// Where the host's temporary directory is missing, a call that needs a
// TMPDIR of its own says which directory it could not make it in.
func TestLinuxHostTMPDIRMissing(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	missing := filepath.Join(root, "missing")
	t.Setenv("TMPDIR", missing)
	_, err := lxRun(t, []string{"true"}, []string{t.TempDir()}, SandboxPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "host's temporary directory "+missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NotErrorIs(t, err, ErrSandboxUnavailable)
}
