//go:build linux && cgo

package sandboxexec

// Devices, terminals and the kernel interfaces (ioctls, io_uring, ...)
// that seccomp refuses.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

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
// terminal is a pseudo-terminal the command makes ("own": it sees no other,
// TestLinuxOtherTerminalsUnreachable), and, for a root host, a virtual
// console where there is one; nothing is written to either.
func TestLinuxControllingTerminalNotWritable(t *testing.T) {
	requireSandbox(t)
	terminals := []string{"own"}
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/dev/tty63"); err == nil {
			terminals = append(terminals, "/dev/tty63")
		}
	}
	for _, term := range terminals {
		policy := SandboxPolicy{}
		if term == "/dev/tty63" {
			// A root command opens a console only without its mount
			// namespace (TestLinuxDisksUnreadable).
			sbOff(t)
			old := forcedMountMode
			forcedMountMode = mountsNone
			t.Cleanup(func() { forcedMountMode = old })
			policy.BestEffort = true
		}
		res, out := lxPyRun(t, []string{t.TempDir()}, policy, `
name = sys.argv[1]
if name == "own":
    master, slave = os.openpty()
    name = os.ttyname(slave)
fd = os.open(name, os.O_RDONLY)
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

// The host's terminals are out of a command's reach: its mount namespace
// has a devpts of its own on /dev/pts, which holds only the terminals the
// command makes (found in review: a command read what was typed in another
// terminal, a sudo password as well). Its own still work. So for a root
// host without CAP_SYS_ADMIN, whose namespace is made in a user namespace.
func TestLinuxOtherTerminalsUnreachable(t *testing.T) {
	fsRequireMounts(t)
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	defer master.Close()
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	host := fmt.Sprintf("/dev/pts/%d", n)
	slave, err := os.OpenFile(host, os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	defer slave.Close()
	_, err = master.WriteString("typed\n") // what a read would take
	require.NoError(t, err)
	for _, policy := range []SandboxPolicy{{}, {AllowedDomains: []string{"localhost"}}} {
		res, out := lxPyRun(t, []string{t.TempDir()}, policy, `
attempt("open_host", lambda: os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_NOCTTY)))
print("listed=%s" % ",".join(sorted(os.listdir("/dev/pts"))))
def own():
    master, slave = os.openpty()
    os.write(slave, b"out\n")
    check(0 if os.read(master, 100).startswith(b"out") else -1)
    fd = os.open(os.ttyname(slave), os.O_WRONLY | os.O_NOCTTY)
    os.write(fd, b"again\n")
attempt("own", own)
`, host)
		assert.Equal(t, "ENOENT", res["open_host"], "%+v: %s", policy, out.Stdout)
		assert.NotContains(t, strings.Split(res["listed"], ","), strconv.Itoa(n), "%+v: %s", policy, out.Stdout)
		assert.Equal(t, "OK", res["own"], "%+v: %s", policy, out.Stdout)
	}
	buf := make([]byte, 16)
	require.NoError(t, slave.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	k, _ := slave.Read(buf)
	assert.Equal(t, "typed\n", string(buf[:k]), "a command took what was typed")
	if os.Getenv(lxNoSysAdminEnv) == "" && os.Geteuid() == 0 {
		lxRerunWithoutSysAdmin(t) // the namespace made in a user namespace
	}
}

// A host user's terminal bound outside /dev/pts, as a container runtime
// binds its terminal on /dev/console (owned by the container's user) and
// an LXC its /dev/ttyN, is out of a command's reach too. The devpts of the
// namespace's own hid only /dev/pts, and a host user's namespace is not
// nodev: as nobody, a command opened such a bind and read what was typed
// there (found in review). Every devpts mount but the namespace's own is
// nodev now.
func TestLinuxTerminalBindUnreachable(t *testing.T) {
	const env = "SANDBOXEXEC_TEST_TERMINAL_BIND"
	if os.Getenv(env) == "1" {
		for _, policy := range []SandboxPolicy{{}, {AllowedDomains: []string{"localhost"}}} {
			res, out := lxPyRun(t, []string{os.Getenv("SANDBOXEXEC_TEST_ROOT")}, policy, `
def take():
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    print("took=%r" % os.read(fd, 100))
attempt("read", take)
`, os.Getenv("SANDBOXEXEC_TEST_CONSOLE"))
			assert.Equal(t, "EACCES", res["read"], "%+v: %s", policy, out.Stdout)
		}
		return
	}
	pts, slave, dir, root := lxTerminalBindSetup(t)
	console := filepath.Join(dir, "console")
	require.NoError(t, os.WriteFile(console, nil, 0o600))
	out := lxRunAsNobodyWithMounts(t, map[string]string{console: pts}, dir, time.Minute,
		[]string{env + "=1", "SANDBOXEXEC_TEST_ROOT=" + root, "SANDBOXEXEC_TEST_CONSOLE=" + console},
		"-test.run=^TestLinuxTerminalBindUnreachable$")
	assert.Contains(t, out, "--- PASS: TestLinuxTerminalBindUnreachable", out)
	lxRequireTyped(t, slave)
}

// lxNobodyTerminal makes a pseudo-terminal whose slave belongs to nobody,
// with "typed\n" waiting to be read on it, and returns the slave's path
// and the slave, open (closed when the test ends).
// lxTerminalBindSetup is what the terminal bind tests share: a terminal
// of nobody's (lxNobodyTerminal), a directory for the nobody host
// (lxNobodyDir) and a root of nobody's in it. Root only.
func lxTerminalBindSetup(t *testing.T) (pts string, slave *os.File, dir, root string) {
	t.Helper()
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind a terminal and run the test binary as another user")
	}
	pts, slave = lxNobodyTerminal(t)
	dir = lxNobodyDir(t, "sandboxexec-terminal-")
	root = filepath.Join(dir, "root")
	require.NoError(t, os.Mkdir(root, 0o755))
	require.NoError(t, os.Chown(root, nobody, nobody))
	return pts, slave, dir, root
}

func lxNobodyTerminal(t *testing.T) (string, *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	pts := fmt.Sprintf("/dev/pts/%d", n)
	slave, err := os.OpenFile(pts, os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { slave.Close() })
	require.NoError(t, os.Chown(pts, nobody, nobody)) // the user's terminal
	_, err = master.WriteString("typed\n")            // what a read would take
	require.NoError(t, err)
	return pts, slave
}

// lxRequireTyped requires that what lxNobodyTerminal typed is still there.
func lxRequireTyped(t *testing.T, slave *os.File) {
	t.Helper()
	buf := make([]byte, 16)
	require.NoError(t, slave.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	k, _ := slave.Read(buf)
	assert.Equal(t, "typed\n", string(buf[:k]), "a command took what was typed")
}

// A terminal bound below a directory the user may not search when the call
// starts, which becomes searchable during the call (root chmods it), is
// out of reach too. The child, which could not reach the bind to seal it,
// took it that the command could not either, and skipped it: as nobody, a
// command read what was typed there once the directory opened (found in
// review). A nodev clone of the directory now covers it.
func TestLinuxTerminalBindBelowUnsearchableDirectory(t *testing.T) {
	const env = "SANDBOXEXEC_TEST_TERMINAL_UNSEARCHABLE"
	if os.Getenv(env) == "1" {
		root := os.Getenv("SANDBOXEXEC_TEST_ROOT")
		res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
import time
open(os.path.join(sys.argv[2], "ready"), "w").close()  # the host chmods now
def take():
    end = time.time() + 3
    while True:
        try:
            fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
            break
        except PermissionError:
            if time.time() > end:
                raise
            time.sleep(0.05)
    print("took=%r" % os.read(fd, 100))
attempt("read", take)
`, os.Getenv("SANDBOXEXEC_TEST_CONSOLE"), root)
		assert.Equal(t, "EACCES", res["read"], out.Stdout)
		return
	}
	pts, slave, dir, root := lxTerminalBindSetup(t)
	locked := filepath.Join(dir, "locked")
	console := filepath.Join(locked, "console")
	require.NoError(t, os.Mkdir(locked, 0o700)) // root's: nobody may not search it
	require.NoError(t, os.WriteFile(console, nil, 0o600))

	stop := make(chan struct{})
	opened := make(chan error, 1)
	go func() { // opens the directory once the command runs
		for {
			select {
			case <-stop:
				opened <- nil
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(root, "ready")); err == nil {
				opened <- os.Chmod(locked, 0o755)
				return
			}
		}
	}()
	out := lxRunAsNobodyWithMounts(t, map[string]string{console: pts}, dir, time.Minute,
		[]string{env + "=1", "SANDBOXEXEC_TEST_ROOT=" + root, "SANDBOXEXEC_TEST_CONSOLE=" + console},
		"-test.run=^TestLinuxTerminalBindBelowUnsearchableDirectory$")
	close(stop)
	require.NoError(t, <-opened)
	assert.Contains(t, out, "--- PASS: TestLinuxTerminalBindBelowUnsearchableDirectory", out)
	lxRequireTyped(t, slave)
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

// /dev/shm is the host's, and writable only as a root: POSIX semaphores
// (Python's multiprocessing.Lock) fail without it, as docs/linux.md says.
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

// A root command owns every device node, and a disk read below its file
// system gives up any file on it, those DenyRead covers too (found in
// review: a loop device's blocks held a denied file's text). Outside the
// writable roots only the devices a shell needs can be opened: no disk, no
// console, wherever the node lies. A node inside a writable root is the
// host's to put there.
func TestLinuxDisksUnreadable(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("reading a disk takes root")
	}
	img := filepath.Join(t.TempDir(), "image")
	require.NoError(t, os.WriteFile(img, append([]byte("disk secret\n"), make([]byte, 1<<20-12)...), 0o600))
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device here: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	var st unix.Stat_t
	require.NoError(t, unix.Stat(dev, &st))
	node := filepath.Join(t.TempDir(), "disk")
	require.NoError(t, unix.Mknod(node, unix.S_IFBLK|0o600, int(st.Rdev)))
	data, err := os.ReadFile(node)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "disk secret"), "the host reads the disk")

	console := "/dev/tty63"
	if _, err := os.Stat(console); err != nil {
		console = "/dev/null" // checked as usable below anyway
	}
	res, o := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{}, `
def read(path):
    with open(path, "rb") as f:
        print("read=%r" % f.read(11))
attempt("dev", lambda: read(sys.argv[1]))
attempt("node", lambda: read(sys.argv[2]))
attempt("console", lambda: os.close(os.open(sys.argv[3], os.O_RDONLY)))
attempt("null", lambda: os.close(os.open("/dev/null", os.O_RDWR)))
attempt("urandom", lambda: read("/dev/urandom"))
attempt("tty", lambda: os.close(os.open("/dev/tty", os.O_RDONLY)))
attempt("openpty", lambda: [os.close(fd) for fd in os.openpty()])
`, dev, node, console)
	assert.Equal(t, "EACCES", res["dev"], o.Stdout)
	assert.Equal(t, "EACCES", res["node"], o.Stdout)
	assert.NotContains(t, o.Stdout, "disk secret")
	if console != "/dev/null" {
		assert.Equal(t, "EACCES", res["console"], o.Stdout)
	}
	assert.Equal(t, "OK", res["null"], o.Stdout)
	assert.Equal(t, "OK", res["urandom"], o.Stdout)
	assert.Equal(t, "ENXIO", res["tty"], "no controlling terminal, but /dev/tty is there\n%s", o.Stdout)
	assert.Equal(t, "OK", res["openpty"], o.Stdout)
}
