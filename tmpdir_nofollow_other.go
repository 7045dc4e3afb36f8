//go:build unix && !linux

package sandboxexec

import "golang.org/x/sys/unix"

// lchmodDirAt sets the mode of the directory name, in dirfd, and does not
// follow name where it is a symlink (the link's own mode changes).
func lchmodDirAt(dirfd int, name string, mode uint32) error {
	return unix.Fchmodat(dirfd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
}

// openHeld is not available here (no O_PATH): an emptying on a call's path
// stops at once, and all of it is done after the call (see emptying).
func openHeld(int, string) (int, error) { return -1, unix.ENOTSUP }
