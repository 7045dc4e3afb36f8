//go:build unix

package sandboxexec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

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
	pid, err := syscall.ForkExec(req.path, req.argv, &syscall.ProcAttr{
		Dir:   req.dir,
		Env:   req.env,
		Files: files[:],
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("sandboxexec: %w", &os.PathError{Op: "fork/exec", Path: req.path, Err: err})
	}
	c, err := newChild(pid)
	if err != nil {
		return nil, err
	}
	c.killAll = func() { killGroup(pid) }
	return c, nil
}

// rawRead is one read(2) on a non-blocking descriptor.
func rawRead(fd uintptr, buf []byte) (int, error) { return syscall.Read(int(fd), buf) }

// killGroup kills the process group led by pid. A process that left the
// group (setsid, setpgid) is out of its reach.
func killGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
}

// exitStatus turns a wait status into an exit code (see waitStatus).
func exitStatus(state *os.ProcessState) (int, string) {
	return waitStatus(state.Sys().(syscall.WaitStatus))
}

// waitStatus turns a wait status into an exit code: the status itself, or
// 128+N and the signal's name for a command killed by signal N.
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
