package sandboxexec

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pidfdUsable says whether this kernel (5.3 or later, and a seccomp profile
// that allows it) gives pidfds, which the engine needs to poll for the
// command's exit. Only a refusal says no: running out of descriptors now
// says nothing of the kernel.
var pidfdUsable = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return err != unix.ENOSYS && err != unix.EPERM && err != unix.EACCES
	}
	unix.Close(fd)
	return true
})

// kernelReapsChildren says whether the kernel reaps this process's children
// itself: SIGCHLD ignored, or SA_NOCLDWAIT, whoever set it (C code too, which
// os/signal does not see). It reads the disposition without changing it.
func kernelReapsChildren() bool {
	if strings.HasPrefix(runtime.GOARCH, "mips") {
		return false // struct sigaction starts with the flags there
	}
	// The kernel's struct sigaction starts with the handler and the flags,
	// each a word, on every other architecture.
	var act [8]uintptr
	const sigsetSize = 8
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), 0,
		uintptr(unsafe.Pointer(&act[0])), sigsetSize, 0, 0)
	const sigIgn, saNocldwait = 1, 2
	return errno == 0 && (act[0] == sigIgn || act[1]&saNocldwait != 0)
}

// askPidfd asks a fork for the child's pidfd, made by the clone itself, where
// the engine polls pidfds. It returns where the pidfd will be, -1 if none.
func askPidfd(sys *syscall.SysProcAttr) *int {
	fd := -1
	if pidfdUsable() {
		sys.PidFD = &fd
	}
	return &fd
}

// waitExited waits until the command pid has exited, and leaves it
// unreaped (waitid with WNOWAIT, as os.Process.Wait does here); it reports
// whether it could.
func waitExited(pid int) bool {
	const cldExited, cldKilled, cldDumped = 1, 2, 3 // si_code of an exit
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return false
		case info.Code == cldExited || info.Code == cldKilled || info.Code == cldDumped:
			return true
		default:
			// A stop, which a command that asked this process to trace it
			// (PTRACE_TRACEME) reports despite WEXITED: take it, as reap
			// would, and wait on. WSTOPPED alone never reaps, and WNOHANG
			// returns if a kill has ended the stop since.
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOHANG, nil)
			if err != nil && err != unix.EINTR {
				return false
			}
		}
	}
}

// newEventfd makes the eventfd a call's kill writes to. Blocking, so that
// os.NewFile keeps it out of Go's poller; a write of 1 never blocks.
func newEventfd() (*os.File, error) {
	if eventfdHook != nil {
		if err := eventfdHook(); err != nil {
			return nil, os.NewSyscallError("eventfd", err)
		}
	}
	if f, ok := takeSpare(&spares.killed); ok {
		return f, nil
	}
	return newKilledEventfd()
}

// eventfdHook, set by tests, makes newEventfd fail with the error it
// returns.
var eventfdHook func() error

// newKilledEventfd is newEventfd without the spares.
func newKilledEventfd() (*os.File, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	return os.NewFile(uintptr(fd), "killed"), nil
}

// killCommand sends SIGKILL to the command alone: through its pidfd, which
// never reaches another process once the command is reaped and its pid
// free again. Where there is no pidfd, or a seccomp profile refuses
// pidfd_send_signal, it kills by pid, until the command is reaped.
func (c *child) killCommand() {
	if c.pidfd != nil && unix.PidfdSendSignal(int(c.pidfd.Fd()), unix.SIGKILL, nil, 0) == nil {
		return
	}
	if !c.reaped.Load() {
		unix.Kill(c.pid, unix.SIGKILL)
	}
}

// await drains the streams into their captures and waits for the command.
// Once the command has exited, and before it is reaped (so that its pid,
// and its process group's, are not yet free), it calls ended; it then gives
// the streams drainGrace to reach EOF. Only a process that left the group
// (setsid) and still holds a pipe makes the wait that long; the bytes read
// until then are kept. Once the call has killed the command (timeout,
// cancellation), the command too gets drainGrace to exit: a tracer that
// holds it in its exit, or a wait in the kernel that SIGKILL does not end,
// holds the call no longer.
//
// All of it runs on this goroutine, in one poll(2) over the command's pidfd,
// the call's kill and both pipes: the command's end then wakes one thread,
// where a goroutine per stream and a wait of their own woke three, and kept
// the scheduler's other threads spinning for work while the command ran.
func await(ch *child, streams [2]*stream, ended func()) (exitCode int, signal string, err error) {
	if ch.pidfd == nil {
		return awaitDraining(ch, streams, ended)
	}
	returned := false
	defer func() {
		if !returned {
			// A live writer called runtime.Goexit, which ends this
			// goroutine whatever it does: the command is ended and reaped
			// on the way out.
			ended()
			reapAdopted(ch, time.Now().Add(drainGrace))
			reapBy(ch, time.Now().Add(drainGrace))
		}
	}()
	deadline, err := follow(int(ch.pidfd.Fd()), int(ch.killed.Fd()), streams[:], drainGrace, ended)
	reapAdopted(ch, time.Now().Add(drainGrace)) // the drain may have used up the deadline
	ws, waitErr := reapBy(ch, deadline)
	returned = true
	if err = errors.Join(err, waitErr); err != nil {
		return 0, "", err
	}
	exitCode, signal = waitStatus(ws)
	return exitCode, signal, nil
}

// follow reads the streams as their pipes fill, until both reach EOF and
// exit (a descriptor) is readable, calling exited when it is. A deadline
// grace away starts when exit or killed (a descriptor) is readable, the
// first of them; past it, follow calls exited if it has not, takes what the
// pipes hold, and stops. It returns the deadline.
func follow(exit, killed int, streams []*stream, grace time.Duration, exited func()) (time.Time, error) {
	fds := make([]unix.PollFd, 2, 4)
	fds[0] = unix.PollFd{Fd: int32(exit), Events: unix.POLLIN}
	fds[1] = unix.PollFd{Fd: int32(killed), Events: unix.POLLIN}
	for _, s := range streams {
		fds = append(fds, unix.PollFd{Fd: int32(s.r.Fd()), Events: unix.POLLIN})
	}
	var deadline time.Time
	var pollErr error
	setDeadline := func() time.Time {
		d := time.Now().Add(grace)
		for _, s := range streams {
			d = minTime(d, s.endLive(d))
		}
		return d
	}
	for fds[0].Fd >= 0 || slices.ContainsFunc(fds[2:], func(pf unix.PollFd) bool { return pf.Fd >= 0 }) {
		var timeout *unix.Timespec
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			ts := unix.NsecToTimespec(int64(left))
			timeout = &ts
		}
		_, err := unix.Ppoll(fds, timeout, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// Nothing a caller can fix (ENOMEM): end the command, and keep
			// what the pipes hold now.
			pollErr = os.NewSyscallError("ppoll", err)
			break
		}
		if fds[1].Fd >= 0 && fds[1].Revents != 0 {
			fds[1].Fd = -1
			if deadline.IsZero() {
				deadline = setDeadline()
			}
		}
		if fds[0].Fd >= 0 && fds[0].Revents != 0 {
			fds[0].Fd = -1
			exited()
			if deadline.IsZero() {
				deadline = setDeadline()
			}
		}
		for i, s := range streams {
			if pf := &fds[i+2]; pf.Fd >= 0 && pf.Revents != 0 && !s.pump(uintptr(pf.Fd)) {
				pf.Fd = -1
			}
		}
	}
	if fds[0].Fd >= 0 {
		exited()
		if deadline.IsZero() { // ppoll failed
			deadline = setDeadline()
		}
	}
	for i, s := range streams {
		if fds[i+2].Fd >= 0 {
			s.sweep(uintptr(fds[i+2].Fd))
		}
	}
	return deadline, pollErr
}

// reapBy reaps the command, which has ended (or been killed), and records
// that it did. Its zombie is not this process's to reap while a process
// outside the call traces it: reapBy waits for the tracer to let go until
// deadline, then leaves the reap to a goroutine that looks now and then, and
// says why there is no exit status.
//
// Untraced, the command is still not reapable where it is the init of a PID
// namespace that other processes in it outlived: the kernel SIGKILLed them
// when it died, and it is reaped once they are gone, which for hundreds of
// them on a busy machine takes longer than the drain grace (found in review:
// four fork bombs of 200 processes each, a second more; on a loaded machine,
// more than 2 s). reapBy gives that teardownGrace more, and such an init
// alone: any other command not reaped by then is stuck where a SIGKILL
// cannot end it (uninterruptible sleep, a frozen cgroup), and the call
// returns on time without its exit status.
func reapBy(ch *child, deadline time.Time) (syscall.WaitStatus, error) {
	extended := false
	for {
		reaped, ws, err := waitFor(ch.pid, syscall.WNOHANG)
		if reaped || errors.Is(err, syscall.ECHILD) { // ECHILD: reaped by another
			ch.reaped.Store(true)
		}
		if reaped || err != nil {
			return ws, waitError(err)
		}
		if time.Now().After(deadline) {
			if extended || !ch.namespaceInit || tracerOf(ch.pid) > 0 {
				break
			}
			deadline, extended = deadline.Add(teardownGrace), true
		}
		time.Sleep(time.Millisecond)
	}
	why := "it was not reaped in time"
	if tracer := tracerOf(ch.pid); tracer > 0 {
		why = fmt.Sprintf("process %d traces it", tracer)
	}
	go func() {
		for {
			time.Sleep(100 * time.Millisecond)
			if reaped, _, err := waitFor(ch.pid, syscall.WNOHANG); reaped || err != nil {
				ch.reaped.Store(true)
				return
			}
		}
	}()
	return 0, fmt.Errorf("the command has not been reaped (%s): its exit status is unknown", why)
}

// hostAdoptsOrphans says this process inherits the orphans of its
// descendants: it is the pid 1 of its PID namespace, or a child subreaper
// (PR_SET_CHILD_SUBREAPER). Asked at each call: the host may become one.
func hostAdoptsOrphans() bool {
	var subreaper int32
	return os.Getpid() == 1 ||
		unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&subreaper)), 0, 0, 0) == nil && subreaper != 0
}

// reapAdopted reaps the processes that the call killed and this host
// adopted, where it adopts orphans (see hostAdoptsOrphans): those left in
// the command's process group, re-parented to the host when the command
// exited, and those the call's cgroup killed outside the group (see
// watchEscaped), each re-parented when its parent died. Nothing else reaps
// them: each would stay a zombie of the host. It runs before the command
// is reaped, so that the group's id, which names them, cannot be another
// group's: no child of the host's own (an os/exec command, another call's
// command) is taken. It never waits for any child. Where the command has
// been reaped, only the processes watchEscaped holds pidfds of are.
//
// It waits until deadline at most for them to die: a process that dies
// re-parents its children to the host before it is a zombie, so once no
// child of the host's is left in the group, none will be.
func reapAdopted(ch *child, deadline time.Time) {
	ch.escapedMu.Lock()
	defer ch.escapedMu.Unlock()
	defer func() {
		for _, e := range ch.escaped {
			unix.Close(e.pidfd)
		}
		ch.escaped = nil
	}()
	if !ch.killsGroup && len(ch.escaped) == 0 || !hostAdoptsOrphans() {
		return
	}
	self := os.Getpid()
	for {
		// found: a scan that found none of the group's is the last. One
		// that reaped some looks again: the host's children are listed
		// thread by thread, and a process that a reaped one handed its
		// children to the host as it died may have given them to a
		// thread listed before (found in review: a zombie left, now and
		// then, under load).
		found := false
		if ch.killsGroup && !ch.reaped.Load() && !reapedElsewhere(ch) {
			for _, pid := range childrenOf(self) {
				if pid == ch.pid || procPgid(pid, self) != ch.pid {
					continue
				}
				found = true
				if reaped, _, err := waitFor(pid, syscall.WNOHANG); !reaped && err == nil {
					// Dying, or back in the group since the kill
					// (setpgid): the pid is the host's child, so its own.
					unix.Kill(pid, unix.SIGKILL)
				}
			}
		}
		ch.escaped = slices.DeleteFunc(ch.escaped, func(e escapedProcess) bool {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PIDFD, e.pidfd, &info, unix.WEXITED|unix.WNOHANG, nil)
			switch {
			case err == nil && info.Signo == 0, err == unix.EINTR:
				return false // alive
			case err == unix.ECHILD && pidfdHeld(e.pidfd):
				return false // a zombie of a parent that dies
			}
			unix.Close(e.pidfd) // reaped, by this call or its parent
			return true
		})
		if !found && len(ch.escaped) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// reapedElsewhere says the command was reaped by another wait of the host's
// (a wait for any child): its group's id is then no longer the call's to
// name processes by. Known only through the pidfd; without one, the call
// relies on the host not reaping its command (see waitError).
func reapedElsewhere(ch *child) bool {
	if ch.pidfd == nil {
		return false
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, int(ch.pidfd.Fd()), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == unix.ECHILD
}

// watchEscaped opens pidfds, for reapAdopted, of pids, processes of the
// call's cgroup that its kill is about to kill (see killAll: each time the
// kill lists them), and of the children each has, zombies among them: a
// child that dies, or is killed, with its parent is re-parented to the host
// as a zombie that no listing shows. inGroup, read after the opens, says
// which of pids are still the call's: a pid that had been reaped and taken
// by another process before the open is dropped; a child is kept only if
// its parent is still the listed process once its pidfd is open.
func (c *child) watchEscaped(pids []int, inGroup func() []int) {
	c.escapedMu.Lock()
	defer c.escapedMu.Unlock()
	var opened []escapedProcess
	for _, pid := range pids {
		if e, ok := c.openEscaped(pid, opened); ok {
			opened = append(opened, e)
		}
	}
	if len(opened) == 0 {
		return
	}
	still := inGroup()
	for _, e := range opened {
		if !slices.Contains(still, e.pid) {
			unix.Close(e.pidfd)
			continue
		}
		c.escaped = append(c.escaped, e)
		for _, pid := range childrenOf(e.pid) {
			ce, ok := c.openEscaped(pid, opened)
			if !ok {
				continue
			}
			// The child's parent read once its pidfd is open, both still
			// unreaped after the read: their pids were theirs throughout.
			if procPgid(pid, e.pid) != 0 && pidfdHeld(ce.pidfd) && pidfdHeld(e.pidfd) {
				c.escaped = append(c.escaped, ce)
			} else {
				unix.Close(ce.pidfd)
			}
		}
	}
}

// openEscaped opens a pidfd of pid unless it is the command or one the
// call holds already (in c.escaped or opened).
func (c *child) openEscaped(pid int, opened []escapedProcess) (escapedProcess, bool) {
	isPid := func(e escapedProcess) bool { return e.pid == pid }
	if pid == c.pid || slices.ContainsFunc(c.escaped, isPid) || slices.ContainsFunc(opened, isPid) {
		return escapedProcess{}, false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return escapedProcess{}, false
	}
	return escapedProcess{pid, fd}, true
}

// pidfdHeld says the process of pidfd has not been reaped (it may have
// exited): its pid is still its own.
func pidfdHeld(pidfd int) bool {
	return unix.PidfdSendSignal(pidfd, 0, nil, 0) != unix.ESRCH
}

// childrenOf lists the children of pid: every thread's, as
// /proc/PID/task/*/children gives them, or, in a kernel without that file
// (CONFIG_PROC_CHILDREN), every process whose parent is pid.
func childrenOf(pid int) []int {
	var pids []int
	dir := fmt.Sprintf("/proc/%d/task/", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, task := range tasks {
		b, err := os.ReadFile(dir + task.Name() + "/children")
		if errors.Is(err, os.ErrNotExist) && task.Name() == strconv.Itoa(pid) {
			return scanChildren(pid)
		}
		for _, f := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(f); err == nil {
				pids = append(pids, child)
			}
		}
	}
	return pids
}

// scanChildren is childrenOf where the kernel lists no children.
func scanChildren(self int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && procPgid(pid, self) != 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procPgid is the process group of pid, as /proc tells, where its parent
// is parent; 0 otherwise.
func procPgid(pid, parent int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// After the command's name, which may hold anything: state, ppid, pgrp.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 3 || f[1] != strconv.Itoa(parent) {
		return 0
	}
	pgid, _ := strconv.Atoi(f[2])
	return pgid
}

// teardownGrace is how much longer than its deadline reapBy waits for an
// untraced command: see reapBy.
const teardownGrace = 5 * time.Second

// tracerOf is the pid of the process that traces pid, as /proc tells, or 0.
func tracerOf(pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// spliceNow moves what the pipe fd holds, up to len(buf), into buf without
// blocking and without changing fd's flags: through a pipe of its own (own,
// made on first use), with a non-blocking splice.
func spliceNow(fd int, buf []byte, own *[2]int) (int, error) {
	if own[0] < 0 {
		if err := unix.Pipe2(own[:], unix.O_CLOEXEC); err != nil {
			own[0], own[1] = -1, -1
			return 0, err
		}
	}
	n, err := unix.Splice(fd, nil, own[1], nil, len(buf), unix.SPLICE_F_NONBLOCK)
	if n <= 0 || err != nil {
		return int(n), err
	}
	got := 0
	for got < int(n) {
		m, err := unix.Read(own[0], buf[got:n])
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			return got, err
		}
		got += m
	}
	return got, nil
}

// reopensAlike says a new open of fd's file gives the same file again: not
// so for a device such as a pseudo-terminal's master, whose every open makes
// a new terminal. A terminal that is not a master is taken, other devices
// are not.
func reopensAlike(fd int, kind uint32) bool {
	switch kind {
	case unix.S_IFREG, unix.S_IFIFO, unix.S_IFBLK:
		return true
	case unix.S_IFCHR:
		_, notTerminal := unix.IoctlGetTermios(fd, unix.TCGETS)
		return notTerminal == nil && !controlsTerminal(fd, kind)
	}
	return false
}

// controlsTerminal says fd is a pseudo-terminal's master: open for reading
// only, it still signals the terminal's foreground processes (TIOCSIG),
// which may be the host's, and neither Landlock nor the PID namespace sees
// a signal the kernel sends.
func controlsTerminal(fd int, kind uint32) bool {
	if kind != unix.S_IFCHR {
		return false
	}
	_, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	return err == nil
}

// unnamed says the file fd has no path through which a new open of it would
// meet the sandbox's checks: its /proc/self/fd link is no path (a pipe's
// "pipe:[...]", a socket's), or not one that leads to it (a memfd's
// "/memfd:name (deleted)", a deleted file's). Landlock lets any open of a
// file on an internal mount through, so /proc/self/fd/0 of such a file
// would give the command write access to it.
func unnamed(fd int) bool {
	target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil || !strings.HasPrefix(target, "/") {
		return true
	}
	var st, at unix.Stat_t
	if unix.Fstat(fd, &st) != nil || unix.Stat(target, &at) != nil {
		return true
	}
	return st.Dev != at.Dev || st.Ino != at.Ino
}

// splicesPipes: copyFromFD reads a pipe without blocking (see spliceNow).
const splicesPipes = true

// openReadOnlyMount opens the file fd names anew, for reading only, through
// a read-only clone of its mount that no namespace holds: fchmod, fchown,
// futimens and xattrs through it fail with EROFS. It needs CAP_SYS_ADMIN.
// A FIFO is opened without waiting for a writer.
func openReadOnlyMount(fd int, name string) (*os.File, error) {
	tree, err := readOnlyClone(fd)
	if err != nil {
		return nil, err
	}
	defer unix.Close(tree)
	nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(tree), unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	if err := unix.SetNonblock(nfd, false); err != nil {
		unix.Close(nfd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// readOnlyClone returns a detached, read-only clone (O_PATH) of the mount
// of fd's file, with that file as its root.
func readOnlyClone(fd int) (int, error) {
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return -1, os.NewSyscallError("open_tree", err)
	}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		unix.Close(tree)
		return -1, os.NewSyscallError("mount_setattr", err)
	}
	return tree, nil
}

// readOnlyNull is the null device's read-only mount (see openReadOnlyMount),
// kept for later calls; where none can be made for good (no
// CAP_SYS_ADMIN), its error is kept too.
var readOnlyNull struct {
	sync.Mutex
	tree int
	err  error
}

// openNull opens the null device; with readOnlyView, through a read-only
// mount of its own, or else as an empty pipe: the host's /dev/null is on a
// mount the command's read-only view does not reach, and a root command
// could fchmod it for everyone.
func openNull(readOnlyView bool) (*os.File, error) {
	if !readOnlyView {
		return os.Open(os.DevNull)
	}
	if f, ok := takeSpare(&spares.null); ok {
		return f, nil
	}
	return newReadOnlyNull()
}

// newReadOnlyNull is openNull for a read-only view, without the spares.
func newReadOnlyNull() (*os.File, error) {
	n := &readOnlyNull
	n.Lock()
	if n.tree == 0 && n.err == nil {
		f, err := os.OpenFile(os.DevNull, unix.O_PATH, 0)
		if err == nil {
			n.tree, err = readOnlyClone(int(f.Fd()))
			f.Close()
		}
		if err != nil {
			n.tree = 0
			if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
				n.err = err
			}
		}
	}
	tree := n.tree
	n.Unlock()
	if tree > 0 {
		fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(tree), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: os.DevNull, Err: err}
		}
		return os.NewFile(uintptr(fd), os.DevNull), nil
	}
	// Without a read-only mount, the host's null device where the command
	// cannot change it (its owner is not the host's user), else an empty
	// pipe, which reads the same.
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) == nil && int(st.Uid) != os.Geteuid() {
		return f, nil
	}
	f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	w.Close()
	return r, nil
}
