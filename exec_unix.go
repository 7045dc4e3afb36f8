//go:build unix

package sandboxexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var errNotDir error = syscall.ENOTDIR

// startPlain starts req unconfined as the leader of a new session, so that it
// has no controlling terminal and its process group can be killed whole.
func startPlain(req *spawnRequest) (*child, error) {
	var files [3]uintptr
	for i, f := range req.stdio {
		files[i] = f.Fd()
	}
	sys := &syscall.SysProcAttr{Setsid: true}
	pidfd := askPidfd(sys)
	pid, err := syscall.ForkExec(req.path, req.argv, &syscall.ProcAttr{
		Dir:   req.dir,
		Env:   req.env,
		Files: files[:],
		Sys:   sys,
	})
	if err != nil {
		if req.dir != "" && !usableDir(req.dir) {
			// It was one when the call checked: the chdir failed, not
			// the exec, and the error should say so.
			return nil, fmt.Errorf("sandboxexec: workdir: %w", &os.PathError{Op: "chdir", Path: req.dir, Err: err})
		}
		return nil, fmt.Errorf("sandboxexec: %w", &os.PathError{Op: "fork/exec", Path: req.path, Err: err})
	}
	c, err := newChild(pid, *pidfd)
	if err != nil {
		return nil, err
	}
	c.killAll = func() { killGroup(pid) }
	c.killsGroup = true
	return c, nil
}

// usableDir says dir is a directory this process may enter.
func usableDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir() && unix.Access(dir, unix.X_OK) == nil
}

// newChild is the command just started as pid, with its pidfd (-1 if none).
// Where the engine polls pidfds, the call's pipes are made for that, and a
// fork that gave none fails: the command is killed and reaped.
func newChild(pid, pidfd int) (*child, error) {
	if pidfd < 0 && pidfdUsable() {
		discard(pid)
		return nil, errors.New("sandboxexec: the kernel gave no pidfd for the command")
	}
	c := &child{pid: pid}
	if pidfd >= 0 {
		killed, err := newEventfd()
		if err != nil {
			syscall.Close(pidfd)
			discard(pid)
			return nil, fmt.Errorf("sandboxexec: %w", err)
		}
		c.pidfd, c.killed = os.NewFile(uintptr(pidfd), "pidfd"), killed
	}
	return c, nil
}

// discard kills a command the call cannot follow, and its group, and reaps
// it, before its pid can be another's.
func discard(pid int) {
	killGroup(pid)
	syscall.Kill(pid, syscall.SIGKILL)
	reap(pid)
}

// reap waits for the command and reaps it (see waitFor).
func reap(pid int) (syscall.WaitStatus, error) {
	_, ws, err := waitFor(pid, 0)
	return ws, err
}

// waitFor reaps the command, waiting for it to exit unless options has
// WNOHANG; it reports whether it did. A command that a tracer stops (itself,
// with PTRACE_TRACEME) is reported stopped: it is waited for again, until it
// exits or is killed.
func waitFor(pid, options int) (reaped bool, ws syscall.WaitStatus, err error) {
	for {
		wpid, err := syscall.Wait4(pid, &ws, options, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			return false, ws, os.NewSyscallError("wait4", err)
		case wpid == 0:
			return false, ws, nil
		case !ws.Stopped():
			return true, ws, nil
		}
	}
}

// waitCommand waits for the command where the engine has no pidfd, calls
// exited, and reaps it. Where the kernel can wait for the exit without
// reaping (see waitExited), exited runs before the reap, while the
// command's pid and its group's are still the call's: a kill from exited
// then reaches no other process. Elsewhere it runs after.
func waitCommand(c *child, exited func()) (exitCode int, signal string, err error) {
	unreaped := waitExited(c.pid)
	if unreaped {
		exited()
		reapAdopted(c, time.Now().Add(drainGrace))
	}
	ws, err := reap(c.pid)
	c.reaped.Store(true)
	if !unreaped {
		exited()
		reapAdopted(c, time.Now().Add(drainGrace))
	}
	if err != nil {
		return 0, "", waitError(err)
	}
	exitCode, signal = waitStatus(ws)
	return exitCode, signal, nil
}

// waitError says what a failed wait for the command means: ECHILD, that
// another wait of this process (a wait4(-1) reaper, a SIGCHLD handler's)
// took the command, and its exit status with it, as it would from os/exec.
func waitError(err error) error {
	if errors.Is(err, syscall.ECHILD) {
		return fmt.Errorf("the command was reaped by another wait of this process "+
			"(a wait for any child): its exit status is lost: %w", err)
	}
	return err
}

// checkHostWaits refuses a host that ignores SIGCHLD (or sets SA_NOCLDWAIT):
// the kernel then reaps its children itself, and a call could not learn how
// its command ended (every wait fails), nor be sure that the command's pid
// is still its own.
func checkHostWaits() error {
	if signal.Ignored(syscall.SIGCHLD) || kernelReapsChildren() {
		return errors.New("sandboxexec: this process ignores SIGCHLD, so the kernel " +
			"reaps its children before a call can learn how they ended")
	}
	return nil
}

// rawRead is one read(2) on a non-blocking descriptor.
func rawRead(fd uintptr, buf []byte) (int, error) { return syscall.Read(int(fd), buf) }

// killGroup kills the process group led by pid. A process that left the
// group (setsid, setpgid) is out of its reach.
func killGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
}

// waitStatus turns a wait status into an exit code: the status itself, or
// 128+N and the signal's name for a command killed by signal N.
// exitedBeforeKill says that a command the timeout was killing had exited by
// itself before the kill reached it: it died of no signal, where the kill is
// a SIGKILL. The timer fires between the command's exit and the engine's
// seeing it; the command's own status is then the true one.
func exitedBeforeKill(signal string, waitErr error) bool {
	return waitErr == nil && signal == ""
}

func waitStatus(ws syscall.WaitStatus) (int, string) {
	if ws.Signaled() {
		sig := ws.Signal()
		name := unix.SignalName(sig)
		if name == "" {
			name = fmt.Sprintf("signal %d", int(sig))
		}
		return 128 + int(sig), name
	}
	return ws.ExitStatus(), ""
}

// checkProgramArgs has nothing to refuse: execve passes argv as it is.
func checkProgramArgs(string, []string) error { return nil }

// lookPath finds the program the child will execute. A name with a slash is
// taken as it is (relative to dir, where the child starts); any other name is
// searched in the PATH of env (the host's PATH if env has none), skipping
// relative entries as os/exec does.
func lookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("sandboxexec: %w", err)
		}
		return name, nil
	}
	pathList, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList, found = v, true
		}
	}
	if !found {
		pathList = os.Getenv("PATH")
	}
	var permErr error
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		err := checkExecutable(p)
		if err == nil {
			return p, nil
		}
		if permErr == nil && os.IsPermission(err) {
			permErr = err
		}
	}
	if permErr != nil {
		return "", fmt.Errorf("sandboxexec: %w", permErr)
	}
	return "", fmt.Errorf("sandboxexec: %w", &exec.Error{Name: name, Err: exec.ErrNotFound})
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return &os.PathError{Op: "exec", Path: p, Err: underlying(err)}
	}
	if fi.IsDir() {
		return &os.PathError{Op: "exec", Path: p, Err: syscall.EACCES}
	}
	if fi.Mode()&0o111 == 0 {
		return &os.PathError{Op: "exec", Path: p, Err: syscall.EACCES}
	}
	return nil
}

func underlying(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

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
