package sandboxexec

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// lchmodDirAt sets the mode of the directory name, in dirfd, and fails
// where name is not one (a symlink, say) rather than follow it.
func lchmodDirAt(dirfd int, name string, mode uint32) error {
	// fchmodat2 (Linux 6.6) refuses a symlink; before it, the mode is set
	// through an O_PATH descriptor of the directory, which a symlink does
	// not open.
	err := unix.Fchmodat(dirfd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		return err
	}
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode)
}

// openHeld opens name, in dirfd, whatever it is, for a descriptor that
// keeps it (and its blocks) after its last name goes: O_PATH, which opens
// no device or FIFO, and not through a symlink.
func openHeld(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}
