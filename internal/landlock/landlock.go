//go:build linux

// Package landlock builds Landlock rulesets in the parent process. A ruleset
// is a file descriptor; the child applies it with landlock_restrict_self just
// before execve, so building it costs the child nothing.
//
// Reading and executing are never handled, so they stay allowed everywhere;
// every right that changes the filesystem is handled, and granted only below
// the writable roots and on a few harmless devices.
package landlock

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Rights that change the filesystem, by the ABI that introduced them.
const (
	writeRightsV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	referV2     = unix.LANDLOCK_ACCESS_FS_REFER
	truncateV3  = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	ioctlDevV5  = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	netTCPV4    = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopeUnixV6 = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	scopeSigV6  = unix.LANDLOCK_SCOPE_SIGNAL
)

// Rights that apply to a file rather than a directory.
const fileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | truncateV3 | ioctlDevV5

// Devices a shell expects to write whatever the policy. They stay writable,
// with their ioctls: the data sinks and sources, and pseudo-terminals
// (tools such as script, expect and Python's pty need them; the seccomp
// filter still refuses TIOCSTI).
//
// /dev/tty is not among them. The command starts without a controlling
// terminal, and takes as one any terminal without a session that it opens,
// if only for reading: for a root command, a virtual console or a serial
// line. /dev/tty would then be a writable name for that terminal (found in
// review: escape sequences written to a console through it switched the
// machine's active console). A pseudo-terminal of the command's own is
// written through its /dev/pts name.
//
// /dev/pts/ptmx is named on its own for a root command's mount namespace,
// where it is bound over /dev/ptmx (see linuxspawn's mounts): a rule of
// /dev/pts does not reach it there, nor one of the /dev/ptmx it covers.
var devices = []string{
	"/dev/null",
	"/dev/zero",
	"/dev/full",
	"/dev/random",
	"/dev/urandom",
	"/dev/ptmx",
	"/dev/pts",
	"/dev/pts/ptmx",
}

// ABI returns the Landlock ABI version the kernel offers, or 0 and the
// reason when it offers none.
func ABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		switch errno {
		case unix.ENOSYS:
			return 0, fmt.Errorf("the kernel has no Landlock (landlock_create_ruleset: %w)", errno)
		case unix.EOPNOTSUPP:
			return 0, fmt.Errorf("Landlock is built in but disabled at boot (add landlock to lsm=): %w", errno)
		}
		return 0, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	return int(v), nil
}

// Rules is what a ruleset enforces.
type Rules struct {
	// WritableRoots are absolute, symlink-free directories below which all
	// handled filesystem rights are granted.
	WritableRoots []string
	// FullDiskWrite leaves the filesystem unrestricted.
	FullDiskWrite bool
	// DenyNetwork denies TCP bind and connect (ABI 4+). (Abstract UNIX
	// sockets are scoped to the sandbox, ABI 6+, either way: they are the
	// host's daemons, not the network.)
	DenyNetwork bool
	// Seen, if set, gives the device and inode that the caller found at a
	// writable root's path just before, which a Cache takes instead of a
	// stat of its own when it checks a kept ruleset; ok false for a path it
	// did not look at. It is not part of what makes two Rules the same.
	Seen func(path string) (dev, ino uint64, ok bool)
}

// Handled reports the rights a ruleset for abi handles under r: filesystem
// rights, network rights and scopes.
func Handled(abi int, r Rules) (fs, net, scoped uint64) {
	if !r.FullDiskWrite && abi >= 1 {
		fs = writeRightsV1
		if abi >= 2 {
			fs |= referV2
		}
		if abi >= 3 {
			fs |= truncateV3
		}
		if abi >= 5 {
			fs |= ioctlDevV5
		}
	}
	if r.DenyNetwork && abi >= 4 {
		net = netTCPV4
	}
	if abi >= 6 {
		scoped = scopeSigV6 | scopeUnixV6
	}
	return fs, net, scoped
}

// DeviceRights are the rights a ruleset for abi under r gives the devices
// (pseudo-terminals among them), for a rule added to it later.
func DeviceRights(abi int, r Rules) uint64 {
	fs, _, _ := Handled(abi, r)
	return fs & fileRights
}

// Build creates a ruleset for abi (the kernel's, or lower) and returns its
// close-on-exec descriptor, or -1 when the ruleset would handle nothing
// (under FullDiskWrite, only below ABI 2: see build).
// The caller closes it.
func Build(abi int, r Rules) (int, error) {
	fd, _, err := build(abi, r)
	return fd, err
}

// build is Build that also reports the files the rules were made from.
func build(abi int, r Rules) (int, []fileID, error) {
	fs, net, scoped := Handled(abi, r)
	roots := r.WritableRoots
	if fs == 0 && net == 0 && scoped == 0 && r.FullDiskWrite && abi >= 2 {
		// Nothing to restrict (full disk write, the network allowed or no
		// network rights below ABI 4, no scopes below ABI 6) would mean
		// no domain at all, and with it goes what any domain gets: no
		// ptrace access to a process outside it. A command of a host user
		// (no PID or user namespace then) opened the host's
		// /proc/PID/environ, with the secrets the call leaves out, and
		// its mem for writing, the unsandboxed host's code (found in
		// review). So the write rights are handled and granted beneath /,
		// which changes no write: / is as a writable root. Not at ABI 1,
		// where no rule grants a rename or link across directories.
		fs, _, _ = Handled(abi, Rules{})
		roots = []string{"/"}
	}
	if fs == 0 && net == 0 && scoped == 0 {
		return -1, nil, nil
	}
	attr := unix.LandlockRulesetAttr{Access_fs: fs, Access_net: net, Scoped: scoped}
	// Kernels older than a field accept it as long as it is zero, which
	// Handled guarantees.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1, nil, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	var files []fileID
	if fs != 0 {
		for _, root := range roots {
			id, err := allow(ruleset, root, fs, true)
			if err != nil {
				unix.Close(ruleset)
				return -1, nil, err
			}
			files = append(files, id)
		}
		for _, d := range devices {
			id, err := allow(ruleset, d, fs&fileRights, false)
			if err != nil && !os.IsNotExist(err) {
				unix.Close(ruleset)
				return -1, nil, err
			}
			id.device = true
			files = append(files, id)
		}
	}
	return ruleset, files, nil
}

// fileID is the file a path named when a rule was made for it; absent when
// there was none (an optional device).
type fileID struct {
	path     string
	absent   bool
	device   bool // one of devices, not a writable root
	dev, ino uint64
}

// allow grants rights below path. With noSymlinks, a symlink anywhere on the
// path is an error: a writable root is given resolved, and a symlink on its
// path now was put there since, possibly by a command that may write where
// it lies.
func allow(ruleset int, path string, rights uint64, noSymlinks bool) (fileID, error) {
	id := fileID{path: path}
	fd, err := openPath(path, noSymlinks)
	if err != nil {
		id.absent = err == unix.ENOENT
		return id, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return id, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	id.dev, id.ino = uint64(st.Dev), st.Ino // Dev has 32 bits on mips
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset),
		unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return id, &os.PathError{Op: "landlock_add_rule", Path: path, Err: errno}
	}
	return id, nil
}

// openPath opens path with O_PATH, refusing symlinks on it with noSymlinks
// (ELOOP). openat2 dates from Linux 5.6, older than Landlock's ABI 1 (5.13);
// a seccomp profile that hides it (ENOSYS) leaves the plain open.
func openPath(path string, noSymlinks bool) (int, error) {
	if noSymlinks {
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS,
		})
		if err != unix.ENOSYS {
			return fd, err
		}
	}
	return unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
}

// current reports whether path still names the file id was made from, by
// what seen says of it, or else a stat.
func (id fileID) current(seen func(string) (dev, ino uint64, ok bool)) bool {
	if seen != nil && !id.device {
		if dev, ino, ok := seen(id.path); ok {
			return !id.absent && dev == id.dev && ino == id.ino
		}
	}
	var st unix.Stat_t
	err := unix.Stat(id.path, &st)
	if id.absent {
		return err == unix.ENOENT
	}
	return err == nil && uint64(st.Dev) == id.dev && st.Ino == id.ino
}
