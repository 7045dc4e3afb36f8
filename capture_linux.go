//go:build linux

package sandboxexec

import (
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// splicedAway counts the bytes tailPipe discarded: tests check that the
// splice path ran.
var splicedAway atomic.Int64

// devNull is where the middle of a flood goes: splicing to it frees the
// pipe's pages without copying them.
var devNull = sync.OnceValues(func() (int, error) {
	return unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
})

// capturePipe returns the pipe one of the child's output streams is read
// from. Only the read end is non-blocking and joins Go's poller, which its
// deadline needs. The write end, which only the child uses, is made blocking
// and stays out of the poller: os.Pipe would register it, and then switch it
// back to blocking mode when it is handed to the child, five system calls per
// stream on every call for nothing.
func capturePipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	// The read end has no other status flag to keep.
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// enlargePipe asks for a 1 MiB pipe buffer, for a stream whose writer is
// ahead of its reader: the writer then blocks far less often. Streams that
// never back up keep the default size, which costs a spawn nothing and none
// of the user's pipe quota. Failure (a user over its quota) leaves the
// default size, which only costs speed.
func enlargePipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20)
		})
	}
}

// tailPipe moves a stream's backlog without copying what its capture will
// not keep. splice(2) moves the stream, page references rather than bytes,
// into a second pipe that holds the newest bytes; once that pipe holds well
// over the capture's tail, the excess (bytes the tail would overwrite anyway,
// since at least a tail's worth follows them) is spliced to /dev/null. When
// the backlog is gone, the second pipe's bytes are read into the capture and
// the stream is read again. The zero value is ready; the pipe is made on
// first use.
type tailPipe struct {
	r, w     int // non-blocking ends; valid when capacity > 0
	capacity int
	held     int  // bytes in the pipe
	failed   bool // no pipe could be made: read instead
}

// burstPipes bounds one splice call, in the tail pipe's capacities, so that a
// writer that never lets the backlog empty still sees drain's read, and its
// deadline, now and then.
const burstPipes = 16

// splice moves the backlog of src (non-blocking) into c, once c's head is
// full, until src is empty or the tail pipe's slots are (a writer in packet
// mode puts a few bytes in each). It reports whether the stream ended: its
// writers are gone.
func (t *tailPipe) splice(src *os.File, c *capture, buf []byte) (ended bool) {
	if !t.open(c) {
		return false
	}
	rc, err := src.SyscallConn()
	if err != nil {
		return false
	}
	half := t.capacity / 2
	rc.Control(func(fd uintptr) {
		for moved := 0; moved < burstPipes*t.capacity; {
			// Splice in at most half the pipe at once, and discard down to
			// the tail once it holds more than half: the pipe fills up only
			// when its pages are mostly empty.
			n, err := unix.Splice(int(fd), nil, t.w, nil, min(half, t.capacity-t.held), unix.SPLICE_F_NONBLOCK)
			switch {
			case n > 0:
				moved += int(n)
				t.held += int(n)
				if t.held > half && !t.discard(c) {
					return
				}
			case err == nil: // n == 0: the writers are gone
				ended = true
				return
			case err == unix.EINTR:
			default: // EAGAIN: src or the tail pipe's slots ran out
				return
			}
		}
	})
	t.discard(c)
	readAvailable(uintptr(t.r), buf, t.held, func(b []byte) { c.Write(b) })
	t.held = 0
	return ended
}

// open makes the tail pipe, once; it reports whether there is one.
func (t *tailPipe) open(c *capture) bool {
	if t.capacity > 0 || t.failed {
		return t.capacity > 0
	}
	t.failed = true
	if _, err := devNull(); err != nil || c.tailLimit == 0 {
		return false
	}
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK) != nil {
		return false
	}
	capacity, _ := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, 1<<20)
	if capacity < 4*c.tailLimit {
		unix.Close(p[0])
		unix.Close(p[1])
		return false
	}
	t.r, t.w, t.capacity, t.failed = p[0], p[1], capacity, false
	return true
}

// discard splices the tail pipe's oldest bytes to /dev/null until it holds
// no more than c's tail, counting them in c. It reports whether it got there.
func (t *tailPipe) discard(c *capture) bool {
	null, _ := devNull()
	for t.held > c.tailLimit {
		n, err := unix.Splice(t.r, nil, null, nil, t.held-c.tailLimit, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		t.held -= int(n)
		c.skip(n)
		splicedAway.Add(n)
	}
	return true
}

func (t *tailPipe) close() {
	if t.capacity > 0 {
		unix.Close(t.r)
		unix.Close(t.w)
	}
}

// pipeHolds is how many bytes the pipe fd holds (FIONREAD), or otherwise
// when it cannot tell.
func pipeHolds(fd uintptr, otherwise int) int {
	n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
	if err != nil {
		return otherwise
	}
	return n
}
