//go:build linux && cgo

package sandboxexec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// File system ioctls that a directory or file open for reading only is
// enough for, and that change more than metadata outside the roots (found
// in review: a btrfs snapshot of a host subvolume made outside the roots,
// host subvolumes made read-only, an empty host directory locked to an
// encryption key). Each is tried for real on a loop-mounted image and must
// fail with EPERM. Without the filter, a root command here makes subvolumes
// and snapshots, makes a subvolume read-only, adds a key and sets a policy;
// the kernel refuses the rest itself (no CAP_SYS_ADMIN; no fs-verity in
// every kernel), which the filter does not count on.

// lxMountImage makes a file system of type fstype in an image file,
// loop-mounts it, and unmounts it when the test ends.
func lxMountImage(t *testing.T, fstype string, size int64, mkfsArgs ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system image takes root")
	}
	mkfs, err := exec.LookPath("mkfs." + fstype)
	if err != nil {
		mkfs = "/usr/sbin/mkfs." + fstype
		if _, err := os.Stat(mkfs); err != nil {
			if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
				t.Fatalf("mkfs.%s is not installed (.ci/run installs it)", fstype)
			}
			t.Skipf("mkfs.%s is not installed", fstype)
		}
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "image")
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, size))
	out, err := exec.Command(mkfs, append(append([]string{"-q"}, mkfsArgs...), img)...).CombinedOutput()
	require.NoError(t, err, "mkfs.%s: %s", fstype, out)
	mnt := filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot loop-mount a %s image here: %v: %s", fstype, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}

// lxBtrfsSubvolume makes subvolume name in dir, as the host.
func lxBtrfsSubvolume(t *testing.T, dir, name string) string {
	t.Helper()
	d, err := os.Open(dir)
	require.NoError(t, err)
	defer d.Close()
	var args [4096]byte // struct btrfs_ioctl_vol_args: s64 fd, then the name
	copy(args[8:], name)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, d.Fd(), 0x5000940e, uintptr(unsafe.Pointer(&args[0])))
	require.Zero(t, errno, "BTRFS_IOC_SUBVOL_CREATE: %v", errno)
	return filepath.Join(dir, name)
}

const lxIoctlPrelude = `
import fcntl, struct
def ioc(path, req, arg):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, req, bytearray(arg))
    finally:
        os.close(fd)
`

func TestLinuxBtrfsIoctls(t *testing.T) {
	requireSandbox(t)
	top := lxMountImage(t, "btrfs", 256<<20)
	host := lxBtrfsSubvolume(t, top, "host")
	outside := filepath.Join(top, "outside")
	root := filepath.Join(top, "root")
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Mkdir(root, 0o755))
	file := filepath.Join(outside, "file")
	require.NoError(t, os.WriteFile(file, []byte("host data\n"), 0o644))

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, lxIoctlPrelude+fmt.Sprintf(`
outside, host, top, file = sys.argv[1:5]
def vol(name, fd=0): return struct.pack("q4088s", fd, name)
def vol2(name, fd=0): return struct.pack("qQQ32s4040s", fd, 0, 0, b"", name)
hostfd = os.open(host, os.O_RDONLY)
attempt("subvol_create", lambda: ioc(outside, 0x5000940e, vol(b"made")))
attempt("subvol_create_v2", lambda: ioc(outside, 0x50009418, vol2(b"made2")))
attempt("snap_create", lambda: ioc(outside, 0x50009401, vol(b"snap", hostfd)))
attempt("snap_create_v2", lambda: ioc(outside, 0x50009417, vol2(b"snap2", hostfd)))
attempt("subvol_setflags", lambda: ioc(host, 0x4008941a, struct.pack("Q", 2)))
attempt("snap_destroy", lambda: ioc(top, 0x5000940f, vol(b"host")))
attempt("snap_destroy_v2", lambda: ioc(top, 0x5000943f, vol2(b"host")))
attempt("default_subvol", lambda: ioc(top, 0x40089413, struct.pack("Q", 256)))
attempt("set_received_subvol", lambda: ioc(host, 0xc0c89425, b"u" * 16 + bytes(184)))
attempt("enable_verity", lambda: ioc(file, %#x, struct.pack("IIII", 1, 1, 4096, 0) + bytes(112)))
attempt("subvol_getflags", lambda: ioc(host, 0x80089419, bytes(8)))
`, unix.FS_IOC_ENABLE_VERITY), outside, host, top, file)

	for _, label := range []string{
		"subvol_create", "subvol_create_v2", "snap_create", "snap_create_v2",
		"subvol_setflags", "snap_destroy", "snap_destroy_v2", "default_subvol",
		"set_received_subvol", "enable_verity",
	} {
		assert.Equal(t, "EPERM", res[label], "%s\n%s", label, out.Stdout)
	}
	// Reading a subvolume's flags is no change: btrfs works as it did.
	assert.Equal(t, "OK", res["subvol_getflags"], out.Stdout)

	for _, name := range []string{"made", "made2", "snap", "snap2"} {
		lxRequireAbsent(t, filepath.Join(outside, name))
	}
	require.NoError(t, os.WriteFile(filepath.Join(host, "still-writable"), nil, 0o644))
	require.NoError(t, os.WriteFile(file, []byte("still writable\n"), 0o644))
}

func TestLinuxFscryptIoctls(t *testing.T) {
	requireSandbox(t)
	top := lxMountImage(t, "ext4", 64<<20, "-F", "-O", "encrypt")
	empty := filepath.Join(top, "empty")
	root := filepath.Join(top, "root")
	require.NoError(t, os.Mkdir(empty, 0o755))
	require.NoError(t, os.Mkdir(root, 0o755))

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, lxIoctlPrelude+fmt.Sprintf(`
empty, top = sys.argv[1:3]
# A v1 policy: no key needs to be there to set it.
attempt("set_policy", lambda: ioc(empty, %#x, struct.pack("BBBB8s", 0, 1, 4, 0, b"k" * 8)))
# A v2 key (key_spec type 2, an identifier the kernel fills in), 64 bytes.
attempt("add_key", lambda: ioc(top, %#x, struct.pack("II32sII32s", 2, 0, b"", 64, 0, b"") + b"k" * 64))
attempt("remove_key", lambda: ioc(top, %#x, struct.pack("II32s", 2, 0, b"i" * 16) + bytes(24)))
attempt("remove_key_all_users", lambda: ioc(top, %#x, struct.pack("II32s", 2, 0, b"i" * 16) + bytes(24)))
`, unix.FS_IOC_SET_ENCRYPTION_POLICY, unix.FS_IOC_ADD_ENCRYPTION_KEY,
		unix.FS_IOC_REMOVE_ENCRYPTION_KEY, unix.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS), empty, top)

	for _, label := range []string{"set_policy", "add_key", "remove_key", "remove_key_all_users"} {
		assert.Equal(t, "EPERM", res[label], "%s\n%s", label, out.Stdout)
	}
	// The host can still make files in its empty directory.
	require.NoError(t, os.WriteFile(filepath.Join(empty, "file"), nil, 0o644))
}

// A root that is a mount of part of a file system (a bind mount: a
// container's volume; a btrfs subvolume) is no way to the rest of it: a
// file handle of a file outside, opened through a descriptor on the root's
// mount, came out writable, its directories too (found in review: a root
// command kept CAP_DAC_READ_SEARCH, and open_by_handle_at was let through).
func TestLinuxOpenByHandleOutsideBindMountRoot(t *testing.T) {
	requireSandbox(t)
	top := lxMountImage(t, "ext4", 64<<20, "-F")
	secret := filepath.Join(top, "secret")
	require.NoError(t, os.Mkdir(filepath.Join(top, "project"), 0o755))
	require.NoError(t, os.Mkdir(secret, 0o755))
	file := filepath.Join(secret, "file")
	require.NoError(t, os.WriteFile(file, []byte("host data\n"), 0o644))
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o755))
	out, err := exec.Command("mount", "--bind", filepath.Join(top, "project"), root).CombinedOutput()
	require.NoError(t, err, "mount --bind: %s", out)
	t.Cleanup(func() { exec.Command("umount", root).Run() })

	res, o := lxPyRun(t, []string{root}, SandboxPolicy{}, `
class FileHandle(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("handle", ctypes.c_ubyte * 128)]
def handle(path):
    fh, mount_id = FileHandle(size=128), ctypes.c_int()
    check(libc.name_to_handle_at(-100, path.encode(), ctypes.byref(fh), ctypes.byref(mount_id), 0))
    return fh
file, secret, root = sys.argv[1:4]
on_root = os.open(root, os.O_RDONLY)
attempt("handle", lambda: handle(file))
def write():
    fd = check(libc.open_by_handle_at(on_root, ctypes.byref(handle(file)), os.O_WRONLY | os.O_TRUNC))
    os.write(fd, b"written by the sandbox\n")
attempt("write_outside", write)
def create():
    d = check(libc.open_by_handle_at(on_root, ctypes.byref(handle(secret)), os.O_RDONLY | os.O_DIRECTORY))
    os.close(os.open("created", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=d))
attempt("create_outside", create)
`, file, secret, root)
	assert.Equal(t, "OK", res["handle"], "making a handle is no change\n%s", o.Stdout)
	assert.Equal(t, "EPERM", res["write_outside"], o.Stdout)
	assert.Equal(t, "EPERM", res["create_outside"], o.Stdout)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "host data\n", string(data))
	lxRequireAbsent(t, filepath.Join(secret, "created"))
}

// Loop devices: a root command without the read-only view of the files
// (FullDiskWriteAccess here) opens any device for reading, and Landlock
// refuses a device's ioctls from ABI 5 only; below, LOOP_CLR_FD detached the
// host's loop device (found in review). Reading a device's status stays.
// With the view, the device cannot be opened (TestLinuxDisksUnreadable).
func TestLinuxLoopDeviceIoctls(t *testing.T) {
	s := requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("setting up a loop device takes root")
	}
	img := filepath.Join(t.TempDir(), "image")
	require.NoError(t, os.WriteFile(img, make([]byte, 1<<20), 0o600))
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device here: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	backing := filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file")

	for _, abi := range []int{4, s.LandlockABI} {
		t.Run(fmt.Sprintf("abi %d", abi), func(t *testing.T) {
			lxSetABI(t, abi)
			res, o := lxPyRun(t, []string{t.TempDir()}, SandboxPolicy{FullDiskWriteAccess: true}, lxIoctlPrelude+fmt.Sprintf(`
dev = sys.argv[1]
attempt("clr_fd", lambda: ioc(dev, %#x, b""))
attempt("set_capacity", lambda: ioc(dev, %#x, b""))
attempt("get_free", lambda: ioc("/dev/loop-control", %#x, b""))
attempt("get_status", lambda: ioc(dev, %#x, bytes(232)))
`, unix.LOOP_CLR_FD, unix.LOOP_SET_CAPACITY, unix.LOOP_CTL_GET_FREE, unix.LOOP_GET_STATUS64), dev)
			for _, label := range []string{"clr_fd", "set_capacity", "get_free"} {
				assert.Equal(t, "EPERM", res[label], "%s\n%s", label, o.Stdout)
			}
			if abi < 5 {
				assert.Equal(t, "OK", res["get_status"], o.Stdout)
			}
			b, err := os.ReadFile(backing)
			require.NoError(t, err, "the host's loop device is still attached")
			assert.Equal(t, img, strings.TrimSpace(string(b)))
		})
	}
}

// A symlink inside a writable root is found under any name of that root:
// here the root is given under its own name and the symlink under a bind
// mount's (found in review: the names differed, and the symlink's target,
// which a command chooses, became a root). macOS gives a directory several
// names without a mount (letter case, /System/Volumes/Data).
func TestLinuxCanonicalRootsBindMountAlias(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a bind mount takes root")
	}
	base := realDir(t, "base")
	a, b, home := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "home")
	for _, d := range []string{a, b, home, filepath.Join(a, "work")} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.Symlink(home, filepath.Join(a, "work", "cache")))
	out, err := exec.Command("mount", "--bind", a, b).CombinedOutput()
	require.NoError(t, err, "mount --bind: %s", out)
	t.Cleanup(func() { exec.Command("umount", b).Run() })

	for _, roots := range [][]string{
		{filepath.Join(a, "work"), filepath.Join(b, "work", "cache")},
		{filepath.Join(b, "work"), filepath.Join(a, "work", "cache")},
	} {
		got, err := canonicalRoots(roots)
		assert.ErrorContains(t, err, "goes through the symlink", "%v gave %v", roots, got)
	}
	got, err := canonicalRoots([]string{filepath.Join(b, "work", "cache")})
	require.NoError(t, err)
	assert.Equal(t, []string{home}, got, "the symlink alone, no root around it")
}
