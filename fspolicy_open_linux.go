package sandboxexec

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openRegular opens the regular file at path for reading, and nothing
// else. The file is looked at through an O_PATH descriptor, which opens
// nothing (no FIFO waits, no device acts), and then opened through that
// descriptor (/proc/self/fd): the file looked at, whatever the path names
// by then. A look at the path and an open of it would open what a command
// swapped in between (found in review: a symlink flipped between a file
// and a FIFO in a loop had the FIFO opened within milliseconds).
func openRegular(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errNotRegular(path)
	}
	f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, os.ErrNotExist) {
		// No /proc: the path, checked again once open.
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	}
	if err != nil {
		return nil, err
	}
	var again unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &again); err != nil || again.Dev != st.Dev || again.Ino != st.Ino {
		f.Close()
		return nil, errNotRegular(path)
	}
	return f, nil
}

// openDir opens the directory at path for listing, and opens nothing else
// (no FIFO waits).
func openDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
