//go:build unix

package sandboxexec

import (
	"errors"
	"fmt"
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
		// A file found but not runnable is reported, as execvp does; a
		// PATH directory the host cannot search is skipped, as os/exec
		// and the shells do: it hides nothing the child could run.
		if permErr == nil && os.IsPermission(err) {
			if _, statErr := os.Stat(p); statErr == nil {
				permErr = err
			}
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
