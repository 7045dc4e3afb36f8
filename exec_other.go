//go:build !linux

package sandboxexec

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// askPidfd asks for no pidfd: only Linux has them.
func askPidfd(*syscall.SysProcAttr) *int {
	fd := -1
	return &fd
}

// pidfdUsable is false: only Linux has pidfds.
func pidfdUsable() bool { return false }

// kernelReapsChildren is left to os/signal here (see checkHostWaits).
func kernelReapsChildren() bool { return false }

// newEventfd is never called: only Linux has pidfds.
func newEventfd() (*os.File, error) { return nil, errors.ErrUnsupported }

// waitExited cannot wait for an exit without reaping here: Darwin's waitid
// also returns for a stopped process (Go issue 19314), and Windows waits
// otherwise (see waitCommand).
func waitExited(int) bool { return false }

// await drains the streams and waits for the command (see awaitDraining).
func await(ch *child, streams [2]*stream, ended func()) (exitCode int, signal string, err error) {
	return awaitDraining(ch, streams, ended)
}

// reapAdopted is Linux's: no other system has child subreapers, and a
// host is not the pid 1 of macOS or Windows.
func reapAdopted(*child, time.Time) {}

// spliceNow is Linux's.
func spliceNow(int, []byte, *[2]int) (int, error) { return 0, errors.ErrUnsupported }

// reopensAlike is false where /dev/fd/N is no new open (macOS): the file is
// copied.
func reopensAlike(int, uint32) bool { return false }

// unnamed is Linux's question: elsewhere /dev/fd/N is no new open.
func unnamed(int) bool { return false }

// controlsTerminal is true for every character device: Seatbelt lets a
// pseudo-terminal master's ioctls through (as /dev/ptmx's), TIOCSIG's
// included, and no one request tells a master from other devices on every
// system.
func controlsTerminal(_ int, kind uint32) bool { return kind == syscall.S_IFCHR }

// splicesPipes is false: spliceNow is Linux's.
const splicesPipes = false

// openReadOnlyMount is Linux's.
func openReadOnlyMount(int, string) (*os.File, error) { return nil, errors.ErrUnsupported }

// openNull is os.Open of the null device: a read-only view is Linux's.
func openNull(bool) (*os.File, error) { return os.Open(os.DevNull) }
