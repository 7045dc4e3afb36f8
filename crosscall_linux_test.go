//go:build linux && cgo

package sandboxexec

// What one call's command can leave to another call through the state the
// library keeps between calls (kept TMPDIRs, mount namespaces, standbys):
// tried against the kernel.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command with the network can send a descriptor of its TMPDIR, opened
// through its call's writable mount of it, to a process of a call that
// outlives it (SCM_RIGHTS over a pathname UNIX socket). Landlock checks
// where a file is, so that process makes nothing there; but chmod, chown,
// xattrs and inode flags are not Landlock's, and the writable mount lets
// them through. A TMPDIR kept for a later call would hand that process the
// later call's private directory (found in review).
func TestTMPDIRNotKeptAfterItsDescriptorLeft(t *testing.T) {
	requireTMPDIRKept(t)
	sbOff(t)
	tmpDropKept()
	a, b, c := lxRealDir(t), lxRealDir(t), lxRealDir(t)
	sock := filepath.Join(a, "sock")

	// The receiver: a call with the network that outlives the sender and
	// waits for the later call.
	receiver := lxPy(t, `
import array, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[1] + ".ready", "w").close()
conn, _ = s.accept()
msg, anc, flags, addr = conn.recvmsg(16, socket.CMSG_LEN(4))
fds = array.array("i"); fds.frombytes(anc[0][2][:4])
fd = fds[0]
print("received=OK", flush=True)
deadline = time.time() + 15
while not os.path.exists(sys.argv[2]) and time.time() < deadline:
    time.sleep(0.02)
attempt("chmod", lambda: os.chmod(fd, 0o777))
attempt("xattr", lambda: os.setxattr(fd, "user.left", b"1"))
attempt("chmodfile", lambda: os.chmod("secret", 0o666, dir_fd=fd))
attempt("create", lambda: os.close(os.open("planted", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd)))
open(sys.argv[1] + ".done", "w").close()
`, sock, filepath.Join(c, "ready"))
	type result struct {
		out ExecToolCallOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
		defer cancel()
		out, err := ProcessExecToolCall(ctx, ExecParams{Command: receiver}, SandboxLinuxSeccomp, []string{a},
			SandboxPolicy{NetworkAccess: true}, WithEnv(tmpPoolEnv))
		done <- result{out, err}
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(sock + ".ready"); return err == nil }, 10*time.Second, 10*time.Millisecond)

	// The sender: its TMPDIR, opened, sent, and the call over.
	out, err := lxRun(t, lxPy(t, `
import array
fd = os.open(os.environ["TMPDIR"], os.O_RDONLY | os.O_DIRECTORY)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
print("tmpdir=" + os.environ["TMPDIR"])
`, sock), []string{b}, SandboxPolicy{NetworkAccess: true}, WithEnv(tmpPoolEnv))
	lxRequireOK(t, out, err)
	sent := lxResults(out.Stdout)["tmpdir"]
	require.NotEmpty(t, sent)

	// A later call, without the network, and its private files.
	out, err = lxRun(t, lxSh(`printf 'tmpdir=%s\n' "$TMPDIR"
umask 077; echo secret >"$TMPDIR/secret"; : >"$1"
i=0; while [ ! -e "$2.done" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
printf 'mode=%s\n' "$(stat -c %a "$TMPDIR")"; printf 'filemode=%s\n' "$(stat -c %a "$TMPDIR/secret")"
ls -A "$TMPDIR"`, filepath.Join(c, "ready"), sock), []string{c}, SandboxPolicy{}, WithEnv(tmpPoolEnv))
	r := <-done
	lxRequireOK(t, out, err)
	got := lxResults(out.Stdout)
	lxDeniedOrNil(t, r.out, r.err)
	t.Logf("sender's TMPDIR %s, later call's %s; receiver: %s %s", sent, got["tmpdir"], r.out.Stdout, r.out.Stderr)
	assert.Equal(t, "700", got["mode"], "the later call's TMPDIR as made")
	assert.Equal(t, "600", got["filemode"], "the later call's file as it made it")
	assert.NotContains(t, out.Stdout, "planted")
	assert.False(t, strings.Contains(r.out.Stdout, "chmod=OK") && got["tmpdir"] == sent,
		"the sender's TMPDIR went to a later call, which the receiver changed")
}
