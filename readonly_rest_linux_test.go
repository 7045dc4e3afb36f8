//go:build linux && cgo

package sandboxexec

// Everything outside the writable roots is read-only (issue 26): the
// per-call mount namespace makes every mount but the roots read-only, so
// that a root command's metadata changes (chmod, chown, utimes, xattrs,
// inode flags), which Landlock does not see, fail with EROFS there.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// roStat is what a metadata change would show: every field it can touch,
// ctime included (any change moves it), and the extended attributes.
type roStat struct {
	Mode, UID, GID uint32
	Size           int64
	Mtime, Ctime   unix.Timespec
	Xattrs         map[string]string
}

func roStatOf(t *testing.T, path string) roStat {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(path, &st))
	s := roStat{Mode: st.Mode, UID: st.Uid, GID: st.Gid, Size: st.Size, Mtime: st.Mtim, Ctime: st.Ctim, Xattrs: map[string]string{}}
	buf := make([]byte, 4096)
	n, err := unix.Listxattr(path, buf)
	require.NoError(t, err)
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		v := make([]byte, 4096)
		m, err := unix.Getxattr(path, name, v)
		require.NoError(t, err, name)
		s.Xattrs[name] = string(v[:m])
	}
	return s
}

// roFile makes a file holding "data" with the extended attribute user.old,
// so that a removexattr has something to remove.
func roFile(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte("data"), 0o644))
	require.NoError(t, unix.Setxattr(path, "user.old", []byte("old"), 0))
}

// roChownsOthers says whether a call's command can give a file inside a
// root to another user: as root with CAP_SYS_ADMIN. A root host without it
// makes the namespace in a user namespace that maps uid 0 alone, where
// chown to any other uid fails with EINVAL (a gap SECURITY.md names).
func roChownsOthers() bool {
	mode, _ := availableMountMode(false)
	return os.Geteuid() == 0 && mode == mountsDirect
}

// roMount mounts and unmounts it (lazily) when the test ends, whatever
// happens in between, so that a failure leaves no mount behind. The mount
// is unmounted through a descriptor of its own root, not its path: a mount
// that someone else stacks over a parent meanwhile would hide it.
func roMount(t *testing.T, source, target, fstype string, flags uintptr, data string) {
	t.Helper()
	require.NoError(t, unix.Mount(source, target, fstype, flags, data), "mount %s", target)
	fd, err := unix.Open(target, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		unix.Unmount(target, unix.MNT_DETACH)
		require.NoError(t, err, "open %s", target)
	}
	t.Cleanup(func() {
		unix.Unmount(fmt.Sprintf("/proc/self/fd/%d", fd), unix.MNT_DETACH)
		unix.Close(fd)
	})
}

// roRemountReadOnly makes the mount at target read-only: the mount alone
// (a read-only bind) or, with superblock, the file system.
func roRemountReadOnly(t *testing.T, target string, superblock bool) {
	t.Helper()
	flags := uintptr(unix.MS_REMOUNT | unix.MS_RDONLY)
	if !superblock {
		flags |= unix.MS_BIND
	}
	require.NoError(t, unix.Mount("", target, "", flags, ""), "remount %s read-only", target)
}

// Outside the roots every metadata change fails with EROFS and leaves the
// file as it was, to its ctime and extended attributes; inside a root the
// same changes are made.
func TestReadOnlyRestMetadata(t *testing.T) {
	fsRequireMounts(t)
	root, outsideDir := lxRealDir(t), lxRealDir(t)
	outside, inside := filepath.Join(outsideDir, "f"), filepath.Join(root, "f")
	roFile(t, outside)
	roFile(t, inside)
	mounts := fsMountinfo(t)
	before := roStatOf(t, outside)
	body := `
p, uid = sys.argv[1], int(sys.argv[2])
attempt("chmod", lambda: os.chmod(p, int(sys.argv[3], 8)))
attempt("chown", lambda: os.chown(p, uid, uid))
attempt("truncate", lambda: os.truncate(p, 0))
attempt("setxattr", lambda: os.setxattr(p, "user.new", b"new"))
attempt("removexattr", lambda: os.removexattr(p, "user.old"))
# Last: a truncate would move the mtime again.
attempt("utime", lambda: os.utime(p, (946684800, 946684800)))
`
	ops := []string{"chmod", "chown", "utime", "setxattr", "removexattr", "truncate"}
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, body, outside, "65534", "777")
	for _, op := range ops {
		if op == "chown" && os.Geteuid() != 0 {
			// A host user's chown to another uid: the kernel checks the
			// mount before the owner, but accept either refusal.
			assert.Contains(t, []string{"EROFS", "EPERM"}, res[op], "%s: %s", op, out.Stdout)
			continue
		}
		assert.Equal(t, "EROFS", res[op], "%s: %s", op, out.Stdout)
	}
	assert.Equal(t, before, roStatOf(t, outside), "the file outside the roots changed")

	uid, wantChown := "65534", "OK"
	switch {
	case os.Geteuid() != 0:
		uid = "-1"
	case !roChownsOthers():
		wantChown = "EINVAL"
	}
	was := roStatOf(t, inside)
	res, out = lxPyRun(t, []string{root}, SandboxPolicy{}, body, inside, uid, "751")
	for _, op := range ops {
		want := "OK"
		if op == "chown" {
			want = wantChown
		}
		assert.Equal(t, want, res[op], "%s: %s", op, out.Stdout)
	}
	now := roStatOf(t, inside)
	assert.Equal(t, uint32(0o751), now.Mode&0o7777)
	if wantChown == "OK" && uid != "-1" {
		assert.Equal(t, uint32(65534), now.UID)
		assert.Equal(t, uint32(65534), now.GID)
	}
	assert.Equal(t, int64(946684800), now.Mtime.Sec)
	assert.Equal(t, map[string]string{"user.new": "new"}, now.Xattrs)
	assert.Equal(t, int64(0), now.Size)
	assert.NotEqual(t, was.Ctime, now.Ctime)
	assert.Equal(t, mounts, fsMountinfo(t), "the host's mounts changed")
}

// FullDiskWriteAccess leaves everything writable, metadata included.
func TestReadOnlyRestFullDiskWrite(t *testing.T) {
	fsRequireMounts(t)
	root, outside := lxRealDir(t), filepath.Join(lxRealDir(t), "f")
	roFile(t, outside)
	uid := "65534"
	if os.Geteuid() != 0 {
		uid = "-1"
	}
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{FullDiskWriteAccess: true}, `
p, uid = sys.argv[1], int(sys.argv[2])
attempt("chmod", lambda: os.chmod(p, 0o600))
attempt("chown", lambda: os.chown(p, uid, uid))
attempt("utime", lambda: os.utime(p, (946684800, 946684800)))
attempt("setxattr", lambda: os.setxattr(p, "user.new", b"new"))
attempt("removexattr", lambda: os.removexattr(p, "user.old"))
`, outside, uid)
	for _, op := range []string{"chmod", "chown", "utime", "setxattr", "removexattr"} {
		assert.Equal(t, "OK", res[op], "%s: %s", op, out.Stdout)
	}
	now := roStatOf(t, outside)
	assert.Equal(t, uint32(0o600), now.Mode&0o7777)
	if uid != "-1" {
		assert.Equal(t, uint32(65534), now.UID)
	}
	assert.Equal(t, int64(946684800), now.Mtime.Sec)
	assert.Equal(t, map[string]string{"user.new": "new"}, now.Xattrs)
}

// A root host without CAP_SYS_ADMIN (a container's root) gets the read-only
// rest through a user namespace that maps uid and gid 0 alone: outside the
// roots metadata is closed as elsewhere, but inside them chown to another
// user fails with EINVAL and other users' files show as nobody (a gap
// SECURITY.md names).
func TestReadOnlyRestContainerRoot(t *testing.T) {
	requireSandbox(t)
	if !lxRerunWithoutSysAdmin(t) {
		return
	}
	require.False(t, hasSysAdmin())
	fsRequireMounts(t)
	mode, _ := availableMountMode(false)
	require.Equal(t, mountsInUserNamespace, mode)
	root, outside := lxRealDir(t), filepath.Join(lxRealDir(t), "f")
	mine, theirs := filepath.Join(root, "mine"), filepath.Join(root, "theirs")
	for _, f := range []string{mine, theirs, outside} {
		roFile(t, f)
	}
	require.NoError(t, os.Chown(theirs, 1000, 1000))
	was := roStatOf(t, outside)
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
mine, theirs, outside = sys.argv[1:4]
attempt("theirs_nobody", lambda: check(0 if os.stat(theirs).st_uid == 65534 else -1))
attempt("chown_other", lambda: os.chown(mine, 1000, 1000))
attempt("chown_root", lambda: os.chown(mine, 0, 0))
attempt("chmod_inside", lambda: os.chmod(mine, 0o600))
attempt("chmod_outside", lambda: os.chmod(outside, 0o777))
attempt("chown_outside", lambda: os.chown(outside, 0, 0))
`, mine, theirs, outside)
	assert.Equal(t, "OK", res["theirs_nobody"], "%s", out.Stdout)
	assert.Equal(t, "EINVAL", res["chown_other"])
	assert.Equal(t, "OK", res["chown_root"])
	assert.Equal(t, "OK", res["chmod_inside"])
	assert.Equal(t, "EROFS", res["chmod_outside"])
	assert.Equal(t, "EROFS", res["chown_outside"])
	assert.Equal(t, was, roStatOf(t, outside))
	assert.Equal(t, uint32(0), roStatOf(t, mine).UID)
}

// A mount the host makes while a call runs, outside the roots or inside
// one, does not reach the command: every mount of its namespace is
// private. The command still sees (and, in the root, writes) the
// directory below.
func TestReadOnlyRestHostMountDuringCall(t *testing.T) {
	fsRequireMounts(t)
	// The test's directories are on a shared mount of their own, so that a
	// namespace whose mounts were slaves rather than private would receive
	// the host's new mounts: this machine's own mounts may all be private.
	base := lxRealDir(t)
	roMount(t, base, base, "", unix.MS_BIND, "")
	require.NoError(t, unix.Mount("", base, "", unix.MS_SHARED, ""))
	root, outsideDir := filepath.Join(base, "root"), filepath.Join(base, "outside")
	mntOut, mntIn := filepath.Join(outsideDir, "mnt"), filepath.Join(root, "mnt")
	for _, d := range []string{mntOut, mntIn} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	mounts := fsMountinfo(t)
	type result struct {
		out ExecToolCallOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := lxRun(t, lxPy(t, `
import time
root, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
create(os.path.join(root, "ready"))
while not os.path.exists(os.path.join(root, "go")):
    time.sleep(0.01)
attempt("no_mount", lambda: check(-1 if [l for l in open("/proc/self/mountinfo") if l.split()[4] in (a, b)] else 0))
attempt("outside_empty", lambda: check(-1 if os.listdir(a) else 0))
attempt("inside_empty", lambda: check(-1 if os.listdir(b) else 0))
attempt("inside_write", lambda: create(os.path.join(b, "below")))
attempt("outside_write", lambda: create(os.path.join(a, "below")))
`, root, mntOut, mntIn), []string{root}, SandboxPolicy{})
		done <- result{out, err}
	}()
	deadline := time.Now().Add(lxCallLimit)
	for {
		if _, err := os.Stat(filepath.Join(root, "ready")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the command never started")
		time.Sleep(10 * time.Millisecond)
	}
	for _, d := range []string{mntOut, mntIn} {
		roMount(t, "tmpfs", d, "tmpfs", 0, "size=64k")
		require.NoError(t, os.WriteFile(filepath.Join(d, "host-mount"), nil, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "go"), nil, 0o644))
	r := <-done
	lxDeniedOrNil(t, r.out, r.err)
	res := lxResults(r.out.Stdout)
	assert.Equal(t, "OK", res["no_mount"], "stdout %q stderr %q", r.out.Stdout, r.out.Stderr)
	assert.Equal(t, "OK", res["outside_empty"])
	assert.Equal(t, "OK", res["inside_empty"])
	assert.Equal(t, "OK", res["inside_write"])
	assert.Equal(t, "EROFS", res["outside_write"])
	lxRequireAbsent(t, filepath.Join(mntIn, "below"))

	for _, d := range []string{mntOut, mntIn} {
		// Lazily: roMount holds a descriptor of each.
		require.NoError(t, unix.Unmount(d, unix.MNT_DETACH))
	}
	assert.FileExists(t, filepath.Join(mntIn, "below"), "the command wrote the directory below the host's mount")
	lxRequireAbsent(t, filepath.Join(mntOut, "below"))
	assert.Equal(t, mounts, fsMountinfo(t), "the host's mounts changed")
}

// A root that is itself a mount point keeps its submounts as they are: a
// writable tmpfs below it stays writable, a read-only one read-only.
func TestReadOnlyRestRootWithSubmounts(t *testing.T) {
	fsRequireMounts(t)
	root := lxRealDir(t)
	roMount(t, "tmpfs", root, "tmpfs", 0, "size=1m")
	rw, ro := filepath.Join(root, "rw"), filepath.Join(root, "ro")
	for _, d := range []string{rw, ro} {
		require.NoError(t, os.Mkdir(d, 0o755))
		roMount(t, "tmpfs", d, "tmpfs", 0, "size=64k")
		require.NoError(t, os.WriteFile(filepath.Join(d, "f"), []byte("data"), 0o644))
	}
	roRemountReadOnly(t, ro, false)
	mounts := fsMountinfo(t)
	was := roStatOf(t, filepath.Join(ro, "f"))
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
root, rw, ro = sys.argv[1], sys.argv[2], sys.argv[3]
attempt("top_create", lambda: create(os.path.join(root, "new")))
attempt("rw_create", lambda: create(os.path.join(rw, "new")))
attempt("rw_chmod", lambda: os.chmod(os.path.join(rw, "f"), 0o600))
attempt("rw_mkdir", lambda: os.mkdir(os.path.join(rw, "dir")))
attempt("ro_create", lambda: create(os.path.join(ro, "new")))
attempt("ro_write", lambda: open(os.path.join(ro, "f"), "a").write("x"))
attempt("ro_chmod", lambda: os.chmod(os.path.join(ro, "f"), 0o600))
`, root, rw, ro)
	for _, op := range []string{"top_create", "rw_create", "rw_chmod", "rw_mkdir"} {
		assert.Equal(t, "OK", res[op], "%s: %s", op, out.Stdout)
	}
	for _, op := range []string{"ro_create", "ro_write", "ro_chmod"} {
		assert.Equal(t, "EROFS", res[op], "%s: %s", op, out.Stdout)
	}
	assert.FileExists(t, filepath.Join(rw, "new"))
	assert.DirExists(t, filepath.Join(rw, "dir"))
	assert.Equal(t, uint32(0o600), roStatOf(t, filepath.Join(rw, "f")).Mode&0o7777)
	lxRequireAbsent(t, filepath.Join(ro, "new"))
	assert.Equal(t, was, roStatOf(t, filepath.Join(ro, "f")))
	assert.Equal(t, mounts, fsMountinfo(t), "the host's mounts changed")
}

// The kernel's interfaces mounted below a root (a chroot's /proc, /sys,
// /dev, a cgroup hierarchy) are read-only, nodev and noexec, as the host's
// own are, and a device node in a root opens for no root command (found in
// review: a write to a chroot's /proc/sys set the host's sysctl). The rest
// of the root stays writable. The same holds for a root host without
// CAP_SYS_ADMIN, whose namespace is made in a user namespace.
func TestReadOnlyRestKernelInterfacesInRoot(t *testing.T) {
	fsRequireMounts(t)
	if root := os.Getenv(roKernelRootEnv); root != "" && os.Getenv(lxNoSysAdminEnv) != "" {
		require.False(t, hasSysAdmin())
		roCheckKernelInterfacesInRoot(t, root)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting proc, sysfs and devtmpfs needs root")
	}
	// Names with a space and a backslash, which the mount table escapes.
	root := filepath.Join(lxRealDir(t), `a root\`)
	require.NoError(t, os.Mkdir(root, 0o755))
	for _, fstype := range []string{"proc", "sysfs", "devtmpfs", "devpts", "cgroup2"} {
		dir := filepath.Join(root, fstype+` \`)
		require.NoError(t, os.Mkdir(dir, 0o755))
		roMount(t, fstype, dir, fstype, 0, "")
	}
	require.NoError(t, unix.Mknod(filepath.Join(root, "zero"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))))
	roCheckKernelInterfacesInRoot(t, root)
	t.Setenv(roKernelRootEnv, root)
	lxRerunWithoutSysAdmin(t)
}

// roKernelRootEnv hands TestReadOnlyRestKernelInterfacesInRoot's root to
// its re-run without CAP_SYS_ADMIN, which cannot mount.
const roKernelRootEnv = "SANDBOXEXEC_TEST_KERNEL_FS_ROOT"

func roCheckKernelInterfacesInRoot(t *testing.T, root string) {
	t.Helper()
	in := func(fstype string, p ...string) string {
		return filepath.Join(append([]string{root, fstype + ` \`}, p...)...)
	}
	cgDir := in("cgroup2", fmt.Sprintf("sandboxexec-ro-test-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(cgDir) }) // only if the test failed
	mounts := fsMountinfo(t)
	sysMode := roStatOf(t, in("sysfs", "kernel")).Mode
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
sysctl, sysdir, cg, null, zero, new, ptmx = sys.argv[1:8]
attempt("sysctl", lambda: os.close(os.open(sysctl, os.O_WRONLY)))
attempt("sysfs_chmod", lambda: os.chmod(sysdir, os.stat(sysdir).st_mode & 0o7777))
attempt("cgroup_mkdir", lambda: os.mkdir(cg))
attempt("devtmpfs_open", lambda: os.close(os.open(null, os.O_RDONLY)))
attempt("node_open", lambda: os.close(os.open(zero, os.O_RDONLY)))
attempt("devpts_open", lambda: os.close(os.open(ptmx, os.O_RDWR | os.O_NOCTTY)))
attempt("create", lambda: create(new))
`, in("proc", "sys", "vm", "overcommit_ratio"), in("sysfs", "kernel"), cgDir, in("devtmpfs", "null"),
		filepath.Join(root, "zero"), filepath.Join(root, "new"), in("devpts", "ptmx"))
	for _, op := range []string{"sysctl", "sysfs_chmod", "cgroup_mkdir"} {
		assert.Equal(t, "EROFS", res[op], "%s: %s", op, out.Stdout)
	}
	for _, op := range []string{"devtmpfs_open", "node_open", "devpts_open"} {
		assert.Equal(t, "EACCES", res[op], "%s: %s", op, out.Stdout)
	}
	assert.Equal(t, "OK", res["create"], out.Stdout)
	assert.FileExists(t, filepath.Join(root, "new"))
	lxRequireAbsent(t, cgDir)
	assert.Equal(t, sysMode, roStatOf(t, in("sysfs", "kernel")).Mode)
	assert.Equal(t, mounts, fsMountinfo(t), "the host's mounts changed")
}

// A kernel file system below a root is sealed even while another call's
// command renames what leads to it: the child reads the mount table, then
// opens the point it gave (found in review: a mount whose directory had
// just been renamed away was skipped as gone, and a chroot's /proc/sys was
// left writable; a swap of two directories would seal one mount twice).
func TestReadOnlyRestKernelMountMovedDuringSeal(t *testing.T) {
	fsRequireMounts(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting proc needs root")
	}
	root := lxRealDir(t)
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d, "proc"), 0o755))
		roMount(t, "proc", filepath.Join(root, d, "proc"), "proc", 0, "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	mover := make(chan struct{})
	go func() {
		defer close(mover)
		ProcessExecToolCall(ctx, ExecParams{Command: lxPy(t, `
import time
a, b, c = sys.argv[1:4]
libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
open(os.path.join(os.path.dirname(a), "moving"), "w").close()
end = time.time() + 30
while time.time() < end:
    try:
        os.rename(a, c)
        os.rename(c, a)
        check(libc.renameat2(-100, a.encode(), -100, b.encode(), 2))  # RENAME_EXCHANGE
    except OSError:
        pass
`, filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c"))},
			SandboxLinuxSeccomp, []string{root}, SandboxPolicy{})
	}()
	defer func() { cancel(); <-mover }()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(root, "moving"))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	// Each call has roots of its own, and with them a namespace made now.
	// One whose seal keeps finding the mounts moved fails closed.
	ran := 0
	for i := 0; i < 40; i++ {
		out, err := lxRun(t, lxSh(`for d in a b c; do
  if (: >"$1/$d/proc/sys/vm/overcommit_ratio") 2>/dev/null; then echo "writable: $d"; fi
done; true`, root), []string{root, lxRealDir(t)}, SandboxPolicy{})
		if errors.Is(err, ErrSandboxUnavailable) {
			continue
		}
		lxRequireOK(t, out, err)
		require.NotContains(t, out.Stdout, "writable", "call %d", i)
		ran++
	}
	require.NotZero(t, ran)
}

// A root on a read-only mount stays read-only: a tmpfs mounted read-only,
// and a read-only bind of a directory the host can write.
func TestReadOnlyRestRootOnReadOnlyMount(t *testing.T) {
	fsRequireMounts(t)
	roFS := lxRealDir(t)
	roMount(t, "tmpfs", roFS, "tmpfs", 0, "size=64k")
	require.NoError(t, os.WriteFile(filepath.Join(roFS, "f"), []byte("data"), 0o644))
	roRemountReadOnly(t, roFS, true)
	src, roBind := lxRealDir(t), lxRealDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(src, "f"), []byte("data"), 0o644))
	roMount(t, src, roBind, "", unix.MS_BIND, "")
	roRemountReadOnly(t, roBind, false)
	mounts := fsMountinfo(t)
	was := roStatOf(t, filepath.Join(src, "f"))
	for _, root := range []string{roFS, roBind} {
		res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
attempt("create", lambda: create(os.path.join(sys.argv[1], "new")))
attempt("write", lambda: open(os.path.join(sys.argv[1], "f"), "a").write("x"))
attempt("chmod", lambda: os.chmod(os.path.join(sys.argv[1], "f"), 0o600))
attempt("utime", lambda: os.utime(os.path.join(sys.argv[1], "f"), (0, 0)))
`, root)
		for _, op := range []string{"create", "write", "chmod", "utime"} {
			assert.Equal(t, "EROFS", res[op], "%s in %s: %s", op, root, out.Stdout)
		}
		lxRequireAbsent(t, filepath.Join(root, "new"))
	}
	assert.Equal(t, was, roStatOf(t, filepath.Join(src, "f")))
	require.NoError(t, os.WriteFile(filepath.Join(src, "host"), nil, 0o644), "the host still writes the bind's source")
	assert.Equal(t, mounts, fsMountinfo(t), "the host's mounts changed")
}

// The kernel's own file systems and inode flags outside the roots: a
// sysctl, a new cgroup, a POSIX shared memory object and chattr are all
// refused by the read-only mounts. Without the namespace (BestEffort on a
// host that cannot make one) Landlock still refuses the first three, with
// EACCES, but not the inode flag, which is the namespace's alone.
func TestReadOnlyRestKernelInterfaces(t *testing.T) {
	fsRequireMounts(t)
	root, outsideDir := lxRealDir(t), lxRealDir(t)
	outside, inside := filepath.Join(outsideDir, "f"), filepath.Join(root, "f")
	roFile(t, outside)
	roFile(t, inside)
	cgroup := ""
	for _, l := range fsMountinfo(t) {
		if f := strings.Fields(l); len(f) > 7 {
			if fstype := f[len(f)-3]; (fstype == "cgroup2" || fstype == "cgroup") && strings.HasPrefix(f[4], "/sys/fs/cgroup") {
				cgroup = f[4]
				break
			}
		}
	}
	lxRequireFeature(t, cgroup != "", "cgroup file systems")
	_, err := os.Stat("/dev/shm")
	lxRequireFeature(t, err == nil, "/dev/shm directories")
	name := fmt.Sprintf("sandboxexec-ro-test-%d", os.Getpid())
	cgDir, shm := filepath.Join(cgroup, name), filepath.Join("/dev/shm", name)
	t.Cleanup(func() {
		// Only if the test failed: what a refused call would have made.
		os.Remove(cgDir)
		os.Remove(shm)
	})
	// Opening a sysctl for writing changes nothing until written; the
	// harmless FS_NOATIME_FL stands for any inode flag (immutable, append).
	body := fmt.Sprintf(`
import fcntl, array
outside, inside, cg, shm = sys.argv[1:5]
attempt("sysctl", lambda: os.close(os.open("/proc/sys/kernel/domainname", os.O_WRONLY)))
attempt("cgroup_mkdir", lambda: os.mkdir(cg))
attempt("shm_create", lambda: create(shm))
def setflags(p):
    fd = os.open(p, os.O_RDONLY)
    flags = array.array("i", [0])
    fcntl.ioctl(fd, %d, flags, True)
    flags[0] |= %d
    fcntl.ioctl(fd, %d, flags, True)
attempt("chattr_outside", lambda: setflags(outside))
attempt("chattr_inside", lambda: setflags(inside))
`, unix.FS_IOC_GETFLAGS, roNoatimeFlag, unix.FS_IOC_SETFLAGS)
	mounts := fsMountinfo(t)
	flagsBefore := roFlags(t, outside)
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, body, outside, inside, cgDir, shm)
	// A host user's sysctl open fails on the sysctl's own permission
	// check, which the kernel makes before the mount's.
	sysctl := "EROFS"
	if os.Geteuid() != 0 {
		sysctl = "EACCES"
	}
	assert.Equal(t, sysctl, res["sysctl"], "%s", out.Stdout)
	assert.Equal(t, "EROFS", res["cgroup_mkdir"])
	assert.Equal(t, "EROFS", res["shm_create"])
	assert.Equal(t, "EROFS", res["chattr_outside"])
	assert.Equal(t, "OK", res["chattr_inside"])
	assert.Equal(t, flagsBefore, roFlags(t, outside))
	assert.NotZero(t, roFlags(t, inside)&roNoatimeFlag)
	lxRequireAbsent(t, cgDir)
	lxRequireAbsent(t, shm)
	assert.Equal(t, mounts, fsMountinfo(t), "the host's mounts changed")

	// Which layer refuses: without the namespace, Landlock's EACCES.
	sbOff(t) // a standby in the making reads it
	old := forcedMountMode
	forcedMountMode = mountsNone
	t.Cleanup(func() { forcedMountMode = old })
	res, out = lxPyRun(t, []string{root}, SandboxPolicy{BestEffort: true}, body, outside, inside, cgDir, shm)
	assert.Equal(t, "EACCES", res["sysctl"], "%s", out.Stdout)
	assert.Equal(t, "EACCES", res["cgroup_mkdir"])
	assert.Equal(t, "EACCES", res["shm_create"])
	assert.Equal(t, "OK", res["chattr_outside"], "Landlock has no right for inode flags")
}

// roFlags is the file's inode flags (lsattr).
func roFlags(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	flags, err := unix.IoctlGetInt(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if errors.Is(err, syscall.ENOTTY) {
		t.Fatalf("%s: this file system has no inode flags", path)
	}
	require.NoError(t, err)
	return flags
}

// roNoatimeFlag is FS_NOATIME_FL of linux/fs.h, which x/sys/unix lacks.
const roNoatimeFlag = 0x80
