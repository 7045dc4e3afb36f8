//go:build linux && cgo

package sandboxexec

// What one call's command can leave to another call through the state the
// library keeps between calls (kept TMPDIRs, mount namespaces, standbys):
// tried against the kernel.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// xcReceive starts a call with the network, roots [dir], whose command
// listens on dir/sock, takes one descriptor sent there as fd, and then
// runs body (lxPy's, with sys.argv[1] the socket's path, and args after).
// It returns the socket's path once it listens, and a function that waits
// for the call.
func xcReceive(t *testing.T, dir, body string, args ...string) (sock string, wait func() (ExecToolCallOutput, error)) {
	t.Helper()
	sock = filepath.Join(dir, "sock")
	cmd := lxPy(t, `
import array, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[1] + ".ready", "w").close()
conn, _ = s.accept()
msg, anc, flags, addr = conn.recvmsg(16, socket.CMSG_LEN(4))
fds = array.array("i"); fds.frombytes(anc[0][2][:4])
fd = fds[0]
print("received=OK", flush=True)
`+body, append([]string{sock}, args...)...)
	type result struct {
		out ExecToolCallOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
		defer cancel()
		out, err := ProcessExecToolCall(ctx, ExecParams{Command: cmd}, SandboxLinuxSeccomp, []string{dir},
			SandboxPolicy{NetworkAccess: true}, WithEnv(tmpPoolEnv))
		done <- result{out, err}
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(sock + ".ready"); return err == nil },
		10*time.Second, 10*time.Millisecond)
	var once sync.Once
	var r result
	return sock, func() (ExecToolCallOutput, error) {
		once.Do(func() { r = <-done })
		return r.out, r.err
	}
}

// xcBothWays runs test with a spawned sender, and with one a standby runs
// where standbys are made.
func xcBothWays(t *testing.T, test func(t *testing.T, standby bool)) {
	t.Run("spawn", func(t *testing.T) {
		sbOff(t)
		test(t, false)
	})
	t.Run("standby", func(t *testing.T) {
		if !linuxspawn.StandbySupported || !hasSysAdmin() || cgroups() == nil {
			t.Skip("no standbys here")
		}
		sbDropAll(t)
		test(t, true)
	})
}

// xcRun runs cmd with tmpPoolEnv, from a standby made for it when standby
// is set.
func xcRun(t *testing.T, standby bool, cmd, roots []string, policy SandboxPolicy) (ExecToolCallOutput, error) {
	t.Helper()
	if !standby {
		return lxRun(t, cmd, roots, policy, WithEnv(tmpPoolEnv))
	}
	for range 2 {
		out, err := lxRun(t, []string{"true"}, roots, policy, WithEnv(tmpPoolEnv))
		lxRequireOK(t, out, err)
	}
	sbSettle(t)
	used := false
	old := standbyUsedHook
	standbyUsedHook = func(u bool) { used = u }
	defer func() { standbyUsedHook = old }()
	out, err := lxRun(t, cmd, roots, policy, WithEnv(tmpPoolEnv))
	require.True(t, used, "the call took a standby")
	return out, err
}

// xcSend is a command that sends the descriptor open (a Python
// expression that opens one) to sock, and prints its TMPDIR.
func xcSend(t *testing.T, sock, open string) []string {
	return lxPy(t, `
import array
fd = `+open+`
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
print("tmpdir=" + os.environ.get("TMPDIR", ""))
`, sock)
}

// A command with the network can send a descriptor of its TMPDIR, opened
// through its call's writable mount of it, to a process of a call that
// outlives it (SCM_RIGHTS over a pathname UNIX socket). Landlock checks
// where a file is, so that process makes nothing there; but chmod, chown,
// xattrs and inode flags are not Landlock's, and the writable mount lets
// them through. A TMPDIR kept for a later call would hand that process the
// later call's private directory (found in review).
func TestTMPDIRNotKeptAfterItsDescriptorLeft(t *testing.T) {
	requireTMPDIRKept(t)
	xcBothWays(t, testTMPDIRNotKeptAfterItsDescriptorLeft)
}

func testTMPDIRNotKeptAfterItsDescriptorLeft(t *testing.T, standby bool) {
	tmpDropKept()
	a, b, c := lxRealDir(t), lxRealDir(t), lxRealDir(t)
	ready := filepath.Join(c, "ready")

	// The receiver: a call with the network that outlives the sender and
	// waits for the later call.
	sock, receiver := xcReceive(t, a, `
deadline = time.time() + 15
while not os.path.exists(sys.argv[2]) and time.time() < deadline:
    time.sleep(0.02)
attempt("chmod", lambda: os.chmod(fd, 0o777))
attempt("xattr", lambda: os.setxattr(fd, "user.left", b"1"))
attempt("chmodfile", lambda: os.chmod("secret", 0o666, dir_fd=fd))
attempt("create", lambda: os.close(os.open("planted", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd)))
open(sys.argv[1] + ".done", "w").close()
`, ready)

	// The sender: its TMPDIR, opened, sent, and the call over.
	out, err := xcRun(t, standby, xcSend(t, sock, `os.open(os.environ["TMPDIR"], os.O_RDONLY | os.O_DIRECTORY)`),
		[]string{b}, SandboxPolicy{NetworkAccess: true})
	lxRequireOK(t, out, err)
	sent := lxResults(out.Stdout)["tmpdir"]
	require.NotEmpty(t, sent)

	// A later call, without the network, and its private files.
	out, err = lxRun(t, lxSh(`printf 'tmpdir=%s\n' "$TMPDIR"
umask 077; echo secret >"$TMPDIR/secret"; : >"$1"
i=0; while [ ! -e "$2.done" ] && [ $i -lt 300 ]; do sleep 0.02; i=$((i+1)); done
printf 'mode=%s\n' "$(stat -c %a "$TMPDIR")"; printf 'filemode=%s\n' "$(stat -c %a "$TMPDIR/secret")"
ls -A "$TMPDIR"`, ready, sock), []string{c}, SandboxPolicy{}, WithEnv(tmpPoolEnv))
	rout, rerr := receiver()
	lxRequireOK(t, out, err)
	lxDeniedOrNil(t, rout, rerr)
	got := lxResults(out.Stdout)
	t.Logf("sender's TMPDIR %s, later call's %s; receiver: %s %s", sent, got["tmpdir"], rout.Stdout, rout.Stderr)
	assert.Equal(t, "700", got["mode"], "the later call's TMPDIR as made")
	assert.Equal(t, "600", got["filemode"], "the later call's file as it made it")
	assert.NotContains(t, out.Stdout, "planted")
	assert.False(t, strings.Contains(rout.Stdout, "chmod=OK") && got["tmpdir"] == sent,
		"the sender's TMPDIR went to a later call, which the receiver changed")
}

// A command with the network can send a descriptor of its mount
// namespace's root to a process of a call that outlives it. Were the
// namespace kept for later calls with the same mounts, that process would
// open their files there: the pseudo-terminals of the namespace's devpts,
// whose input it reads (reads are not confined), as here (found in
// review). A namespace such a command entered is not kept.
func TestMountNamespaceNotKeptAfterItsDescriptorLeft(t *testing.T) {
	requireSandbox(t)
	if !mountNamespaceSupported() || !hostHasSysAdmin() {
		t.Skip("namespaces are kept only on a host with CAP_SYS_ADMIN")
	}
	xcBothWays(t, testMountNamespaceNotKeptAfterItsDescriptorLeft)
}

func testMountNamespaceNotKeptAfterItsDescriptorLeft(t *testing.T, standby bool) {
	a := lxRealDir(t)
	sock, receiver := xcReceive(t, a, `
deadline = time.time() + 15
while not os.path.exists(sys.argv[1] + ".victim") and time.time() < deadline:
    time.sleep(0.02)
got = b""
try:
    pts = os.open("dev/pts", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    for n in os.listdir(pts):
        if n.isdigit():
            try:
                p = os.open("dev/pts/" + n, os.O_RDONLY | os.O_NONBLOCK, dir_fd=fd)
                got += os.read(p, 100)
            except OSError:
                pass
except OSError as e:
    print("pts=%s" % e, flush=True)
print("stolen=%r" % got, flush=True)
open(sys.argv[1] + ".done", "w").close()
`)
	// The sender: no roots, as the later call; its namespace's root, sent.
	out, err := xcRun(t, standby, xcSend(t, sock, `os.open("/", os.O_PATH | os.O_DIRECTORY)`),
		nil, SandboxPolicy{NetworkAccess: true})
	lxRequireOK(t, out, err)

	// The later call: no network, no roots, a terminal of its own with
	// input waiting; the host tells the receiver once it is there.
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 256)
		n, _ := io.ReadAtLeast(pr, buf, 1)
		if strings.Contains(string(buf[:n]), "/dev/pts/") {
			os.WriteFile(sock+".victim", nil, 0o600)
		}
		io.Copy(io.Discard, pr)
	}()
	out, err = lxRun(t, lxPy(t, `
import pty, time
m, s = pty.openpty()
os.write(m, b"hunter2\n")
print(os.ttyname(s), flush=True)
deadline = time.time() + 10
while not os.path.exists(sys.argv[1] + ".done") and time.time() < deadline:
    time.sleep(0.02)
`, sock), nil, SandboxPolicy{}, WithEnv(tmpPoolEnv), WithLiveOutput(pw, nil))
	pw.Close()
	lxRequireOK(t, out, err)
	rout, rerr := receiver()
	lxDeniedOrNil(t, rout, rerr)
	t.Logf("receiver: %s %s", rout.Stdout, rout.Stderr)
	require.Contains(t, rout.Stdout, "received=OK")
	assert.NotContains(t, rout.Stdout, "hunter2", "the later call's terminal input, read by another call")
}

const xcSysVEnv = "SANDBOXEXEC_TEST_SYSV_AS_NOBODY"

// System V shared memory is no file: Landlock does not see it. Two calls
// that share an IPC namespace share their segments: a command attaches
// another call's segment (the same user's, mode 0600) and reads and writes
// it. Each call has an IPC namespace of its own: on a root host, and on a
// host user's, where its user namespace allows one.
func TestSysVIPCPrivateToItsCall(t *testing.T) {
	if os.Getenv(xcSysVEnv) == "1" {
		testSysVIPCPrivateToItsCall(t, os.Getenv("SANDBOXEXEC_TEST_ROOT"))
		return
	}
	requireSandbox(t)
	t.Run("root", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("the host is not root")
		}
		testSysVIPCPrivateToItsCall(t, lxRealDir(t))
	})
	t.Run("nobody", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to run the test binary as another user")
		}
		lxRerunAsNobody(t, xcSysVEnv)
	})
}

func testSysVIPCPrivateToItsCall(t *testing.T, root string) {
	// First a call without a user namespace, whose IPC namespace a host
	// user is refused: that says nothing of one in a user namespace.
	out, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{FullDiskWriteAccess: true}, WithEnv(tmpPoolEnv))
	lxRequireOK(t, out, err)
	ready, done := filepath.Join(root, "sysv-ready"), filepath.Join(root, "sysv-done")
	os.Remove(ready)
	os.Remove(done)
	const prelude = `
import time
libc.shmget.restype = ctypes.c_int
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
`
	type result struct {
		out ExecToolCallOutput
		err error
	}
	owner := make(chan result, 1)
	go func() {
		out, err := lxRun(t, lxPy(t, prelude+`
sid = check(libc.shmget(0x5ec7e7, 4096, 0o1000 | 0o600))
p = libc.shmat(sid, None, 0)
ctypes.memmove(p, b"secret\0", 7)
open(sys.argv[1], "w").close()
deadline = time.time() + 10
while not os.path.exists(sys.argv[2]) and time.time() < deadline:
    time.sleep(0.02)
print("mine=%s" % ctypes.string_at(p).decode())
`, ready, done), []string{root}, SandboxPolicy{}, WithEnv(tmpPoolEnv))
		owner <- result{out, err}
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 10*time.Second, 10*time.Millisecond)
	other, err := lxRun(t, lxPy(t, prelude+`
try:
    print("segments=%r" % open("/proc/sysvipc/shm").read().splitlines()[1:])
    sid = check(libc.shmget(0x5ec7e7, 0, 0))
    p = libc.shmat(sid, None, 0)
    if p in (None, 2**64 - 1):
        raise OSError(ctypes.get_errno(), "shmat")
    print("read=%s" % ctypes.string_at(p).decode())
    ctypes.memmove(p, b"pwned\0", 6)
except OSError as e:
    print("attach=%s" % errno.errorcode.get(e.errno, e.errno))
open(sys.argv[1], "w").close()
`, done), []string{root}, SandboxPolicy{}, WithEnv(tmpPoolEnv))
	lxRequireOK(t, other, err)
	r := <-owner
	lxRequireOK(t, r.out, r.err)
	t.Logf("other call: %s; owner: %s", other.Stdout, r.out.Stdout)
	assert.NotContains(t, other.Stdout, "read=secret", "another call read the segment")
	assert.Contains(t, r.out.Stdout, "mine=secret", "another call wrote the segment")
}

// Without a seccomp filter (BestEffort on a kernel without it), a command
// makes and connects UNIX sockets whatever its policy, and a network
// namespace hides no pathname socket: it can send a descriptor of its
// TMPDIR out, as a NetworkAccess command can (see
// TestTMPDIRNotKeptAfterItsDescriptorLeft). Its TMPDIR was kept all the
// same (found in review), and went to the next call. It is not kept now.
func TestTMPDIRNotKeptWithoutSeccomp(t *testing.T) {
	requireTMPDIRKept(t)
	sbOff(t) // a standby in the making reads forcedNoSeccomp
	forcedNoSeccomp = true
	t.Cleanup(func() { forcedNoSeccomp = false })
	tmpDropKept()
	root := lxRealDir(t)
	out, err := lxRun(t, lxPy(t, `
print("tmpdir=" + os.environ["TMPDIR"])
s = socket.socket(socket.AF_UNIX)
attempt("bind", lambda: s.bind(sys.argv[1] + "/sock"))
`, root), []string{root}, SandboxPolicy{BestEffort: true}, WithEnv(tmpPoolEnv))
	lxRequireOK(t, out, err)
	first := lxResults(out.Stdout)
	require.Equal(t, "OK", first["bind"], "without seccomp a command makes UNIX sockets: %s", out.Stdout)
	forcedNoSeccomp = false
	waitTMPDIRCleanups()

	out, err = lxRun(t, lxSh(`printf 'tmpdir=%s\n' "$TMPDIR"`), []string{lxRealDir(t)}, SandboxPolicy{}, WithEnv(tmpPoolEnv))
	lxRequireOK(t, out, err)
	assert.NotEqual(t, first["tmpdir"], lxResults(out.Stdout)["tmpdir"], "the TMPDIR of a call without seccomp went to a later call")
}
