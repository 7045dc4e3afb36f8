package sandboxexec

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

var errNotDir error = syscall.ENOTDIR

func startPlain(req *spawnRequest) (*child, error) {
	p, err := os.StartProcess(req.path, req.argv, &os.ProcAttr{
		Dir:   req.dir,
		Env:   req.env,
		Files: req.stdio[:],
		Sys:   &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP},
	})
	if err != nil {
		return nil, fmt.Errorf("sandboxexec: %w", err)
	}
	return &child{process: p, killAll: func() { p.Kill() }}, nil
}

func exitStatus(state *os.ProcessState) (int, string) { return state.ExitCode(), "" }

func lookPath(name, dir string, env []string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("sandboxexec: %w", err)
	}
	return p, nil
}
