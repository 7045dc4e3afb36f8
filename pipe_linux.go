package sandboxexec

import (
	"os"

	"golang.org/x/sys/unix"
)

// enlargePipe asks for a 1 MiB pipe buffer: a writer then blocks far less
// often, and large captures run steadier and faster. Failure (a user over
// its pipe quota) leaves the default size, which only costs speed.
func enlargePipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20)
		})
	}
}
