//go:build !linux

package sandboxexec

import (
	"fmt"
	"os"
)

// newChild wraps the command just started as pid.
func newChild(pid int) (*child, error) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil, fmt.Errorf("sandboxexec: %w", err)
	}
	return &child{pid: pid, process: p}, nil
}

// await drains the streams and waits for the command (see awaitDraining).
func await(ch *child, streams [2]*stream, ended func()) (exitCode int, signal string, err error) {
	return awaitDraining(ch, streams, ended)
}
