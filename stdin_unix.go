//go:build unix

package sandboxexec

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// confinedStdin is what a sandboxed command reads for the host's file f:
//   - f itself, where it is open for reading only and a new open of it
//     (through /proc/self/fd/0) goes through the sandbox's checks: not a
//     socket, nor a file that has no path the sandbox could check (see
//     unnamed: an anonymous pipe, a memfd), which a new open would give
//     with any access, nor a pseudo-terminal's master (see
//     controlsTerminal);
//   - on Linux, a file, named FIFO, block device or terminal open for
//     reading and writing, opened anew for reading only (through
//     /proc/self/fd), at f's offset where it has one, which f takes over
//     once the command has ended, as it would have sharing f;
//   - with readOnlyView (see readOnlyViewer), such a file, and the null
//     device, opened anew in both cases, through a read-only mount of its
//     own (see openReadOnlyMount);
//   - otherwise a copy, through a pipe, of what f gives while the call
//     lasts (see copyFromFD): a socket, a file without a path, a file open
//     for writing only (whose contents the command may not read), and a
//     device that a new open would not give again (a pseudo-terminal's
//     master makes a new terminal).
func confinedStdin(f *os.File, readOnlyView bool) (*os.File, *stdinCopier, func(), error) {
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, nil, fmt.Errorf("sandboxexec: stdin: %w", os.NewSyscallError("fstat", err))
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sandboxexec: stdin: %w", os.NewSyscallError("fcntl", err))
	}
	kind := uint32(st.Mode) & unix.S_IFMT
	writable := kind == unix.S_IFSOCK || unnamed(fd) || controlsTerminal(fd, kind)
	readable := flags&unix.O_ACCMODE != unix.O_WRONLY
	switch {
	case writable || !readable:
	case flags&unix.O_ACCMODE == unix.O_RDONLY && !readOnlyView:
		return f, nil, nil, nil
	case reopensAlike(fd, kind) || readOnlyView && nullDevice(&st):
		if nf, done, ok := reopenReadOnly(f, readOnlyView); ok {
			return nf, nil, done, nil
		}
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sandboxexec: stdin: %w", os.NewSyscallError("fcntl", err))
	}
	nf, c, done, err := copiedStdin(nil, dup)
	if c != nil {
		c.mayBlock = readMayBlock(kind)
	}
	return nf, c, done, err
}

// reopenReadOnly opens f's file anew for reading only (through a read-only
// mount of its own with readOnlyMount), at f's offset where it has one, and
// returns what to do once the command has ended: give f the offset the
// command left. ok is false where the open or the offset failed.
func reopenReadOnly(f *os.File, readOnlyMount bool) (nf *os.File, done func(), ok bool) {
	var err error
	if readOnlyMount {
		nf, err = openReadOnlyMount(int(f.Fd()), f.Name())
	} else {
		nf, err = os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDONLY|unix.O_NOCTTY, 0)
	}
	if err != nil {
		return nil, nil, false
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil { // no offset: a FIFO, a terminal
		return nf, func() { nf.Close() }, true
	}
	if _, err := nf.Seek(off, io.SeekStart); err != nil {
		nf.Close()
		return nil, nil, false
	}
	return nf, func() {
		if end, err := nf.Seek(0, io.SeekCurrent); err == nil {
			f.Seek(end, io.SeekStart)
		}
		nf.Close()
	}, true
}

func closeFD(fd int) { unix.Close(fd) }

// readMayBlock says copyFromFD's read of a file of this kind can block
// after poll saw input, where another reader took the input first: every
// kind but a socket (read with MSG_DONTWAIT), a regular file or block device
// (whose reads do not wait for input), and a pipe where it is spliced. A
// terminal's read cannot be made not to block (neither MSG_DONTWAIT nor
// RWF_NOWAIT reaches one), nor an eventfd's, a timerfd's or an inotify
// descriptor's (anonymous inodes, of no kind at all: found in review, the
// call hung on an eventfd).
func readMayBlock(kind uint32) bool {
	switch kind {
	case unix.S_IFSOCK, unix.S_IFREG, unix.S_IFBLK:
		return false
	case unix.S_IFIFO:
		return !splicesPipes
	}
	return true
}

// copyFromFD copies what fd gives into w while fd is readable, until EOF,
// an error, or stop is readable: a file of the host's is read only while
// the call lasts, so that what the host reads from it next is its own. The
// host's file stays as it is (blocking, most likely), so each read is made
// not to block some other way, where the file's kind has one: a socket's
// with MSG_DONTWAIT, a pipe's with a non-blocking splice into a pipe of the
// copy's own (Linux). Another reader of the same file can take what poll
// saw; the read of a file of another kind (a terminal) then waits for more,
// which finish does not wait for (see readMayBlock).
func copyFromFD(w io.Writer, fd int, stop *os.File) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	kind := uint32(st.Mode) & unix.S_IFMT
	own := [2]int{-1, -1}
	defer func() {
		for _, p := range own {
			if p >= 0 {
				unix.Close(p)
			}
		}
	}()
	buf := make([]byte, 32*1024)
	readNow := func() (int, error) {
		switch kind {
		case unix.S_IFSOCK:
			n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			return n, err
		case unix.S_IFIFO:
			if n, err := spliceNow(fd, buf, &own); !errors.Is(err, errors.ErrUnsupported) {
				return n, err
			}
		}
		return unix.Read(fd, buf)
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(stop.Fd()), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := readNow()
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if n <= 0 {
			return
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return
		}
	}
}

// nullDevice says st is Linux's null device (1:3); copyNamed is asked on
// Linux only.
func nullDevice(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && uint64(st.Rdev) == uint64(unix.Mkdev(1, 3))
}
