//go:build linux && cgo

package sandboxexec

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// proxyPort is where the call's proxy listens in the command's network
// namespace, which has nothing else: any port is free there.
const proxyPort = 3128

var proxyAddr = "127.0.0.1:" + strconv.Itoa(proxyPort)

// serveProxy serves the listener fd (made in the command's namespace) with
// p, from this process's goroutines, which dial out from the host's.
func serveProxy(p callProxy, fd int) error {
	f := os.NewFile(uintptr(fd), "proxy listener")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("sandboxexec: the proxy's listener: %w", err)
	}
	go p.Serve(l)
	return nil
}

// abandon kills and reaps a command that started but cannot be run as
// asked.
func abandon(pid, pidfd int) {
	unix.Kill(-pid, unix.SIGKILL) // its process group, without a PID namespace
	unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
}
