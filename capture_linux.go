//go:build linux

package sandboxexec

import (
	"errors"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

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
// from. The read end is non-blocking. Where the engine polls the pipes
// itself (see await), the read end stays out of Go's poller: joining it would
// cost two epoll_ctl calls per stream, and make every write the child does
// wake a reader. Otherwise Go's poller blocks the reads, which their deadline
// needs. The write end, which only the child uses, is blocking and stays out
// of the poller: os.Pipe would register it, and then switch it back to
// blocking mode when it is handed to the child.
func capturePipe() (r, w *os.File, err error) {
	if p, ok := takeSpare(&spares.pipes); ok {
		return p[0], p[1], nil
	}
	return newCapturePipe()
}

// newCapturePipe is capturePipe without the spares.
func newCapturePipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	// os.NewFile puts a descriptor in the poller when it is non-blocking.
	polled := pidfdUsable()
	if polled {
		r = os.NewFile(uintptr(p[0]), "|0")
	}
	// The read end has no other status flag to keep.
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	if !polled {
		r = os.NewFile(uintptr(p[0]), "|0")
	}
	return r, os.NewFile(uintptr(p[1]), "|1"), nil
}

// enlargePipe asks for a 1 MiB pipe buffer, for a stream whose writer is
// ahead of its reader: the writer then blocks far less often. Streams that
// never back up keep the default size, which costs a spawn nothing and none
// of the user's pipe quota. Failure (a user over its quota) leaves the
// default size, which only costs speed.
func enlargePipe(fd uintptr) {
	unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20)
}

// pumpReads and pumpTime bound one pump, so that a stream that never runs
// dry still lets the engine look at the other stream, the command and the
// deadline now and then: pumpTime where a slow live writer, not the reads,
// takes the time.
const pumpReads = 16

// pump reads what the pipe fd (non-blocking) holds into the stream, and
// reports whether the stream goes on: false once it has reached EOF, or its
// read failed. It reads until the pipe is empty, not just once per poll: a
// writer of small blocks (head writes 4 KiB at a time) has often written the
// next one by the time a read returns, and a poll and a read per block kept
// it waiting on the reader.
func (s *stream) pump(fd uintptr) bool {
	start := time.Now()
	for i := range pumpReads {
		if i > 0 && time.Since(start) > pumpTime {
			return true
		}
		n, err := s.read(fd, i == 0)
		switch {
		case err == errBacklog:
			if s.backlog.splice(fd, s.capture, s.buf) {
				return false
			}
		case n > 0:
			s.take(s.buf[:n])
			if n == len(s.buf) {
				s.enlarge(fd)
				if s.filled(fd) {
					return false
				}
			}
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			return true
		default: // EOF, or an error
			return false
		}
	}
	return true
}

// enlarge gives the pipe fd 1 MiB (see enlargePipe), once its backlog is
// spliced from then on: no live writer, and the head full. A read with less
// room than the pipe holds can end inside a packet (a write in O_DIRECT
// mode), and the kernel drops the rest of the packet; the default pipe never
// holds more than one buffer's worth (64 KiB), an enlarged one can, so its
// reads are sized to what it holds (see read).
func (s *stream) enlarge(fd uintptr) {
	if !s.enlarged && s.live == nil && s.capture.headFull() && s.backlog.open(s.capture) {
		s.enlarged = true
		enlargePipe(fd)
	}
}

// errBacklog says an enlarged pipe holds more than the buffer: the backlog
// is to be spliced, not read.
var errBacklog = errors.New("the pipe holds more than the buffer")

// read is one read of the pipe fd (non-blocking) into s.buf. Once the pipe
// is enlarged, it asks how much the pipe holds first, and reads exactly that,
// or returns errBacklog when that is more than the buffer. An empty pipe
// is read only on a pump's first read, where it may be at its end; later,
// read reports EAGAIN without reading (a read and a FIONREAD per block cost
// head's capture a tenth of its speed; this, nothing measurable). Only a
// writer that puts more than the buffer into an empty pipe between the two
// calls can still cut a packet.
func (s *stream) read(fd uintptr, first bool) (int, error) {
	room := s.buf
	if s.enlarged {
		switch held := pipeHolds(fd, math.MaxInt); {
		case held > len(room):
			return 0, errBacklog
		case held == 0 && !first:
			return 0, unix.EAGAIN
		case held > 0:
			room = room[:held]
		}
	}
	return rawRead(fd, room)
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
// writer that never lets the backlog empty still lets the engine look at the
// other stream, the command and the deadline now and then.
const burstPipes = 16

// splice moves the backlog of the pipe src (non-blocking) into c, once c's
// head is full, until src is empty or the tail pipe's slots are (a writer in
// packet mode puts a few bytes in each). It reports whether the stream
// ended: its writers are gone.
func (t *tailPipe) splice(src uintptr, c *capture, buf []byte) (ended bool) {
	if !t.open(c) {
		return false
	}
	ended = t.move(src, c)
	t.discard(c)
	readAvailable(uintptr(t.r), buf, t.held, func(b []byte) { c.Write(b) })
	t.held = 0
	return ended
}

// move splices src into the tail pipe, a burst at most, discarding as it
// goes; it reports whether src's writers are gone.
func (t *tailPipe) move(src uintptr, c *capture) (ended bool) {
	half := t.capacity / 2
	for moved := 0; moved < burstPipes*t.capacity; {
		// Splice in at most half the pipe at once, and discard down to the
		// tail once it holds more than half: the pipe fills up only when its
		// pages are mostly empty.
		n, err := unix.Splice(int(src), nil, t.w, nil, min(half, t.capacity-t.held), unix.SPLICE_F_NONBLOCK)
		switch {
		case n > 0:
			moved += int(n)
			t.held += int(n)
			if t.held > half && !t.discard(c) {
				return false
			}
		case err == nil: // n == 0: the writers are gone
			return true
		case err == unix.EINTR:
		default: // EAGAIN: src or the tail pipe's slots ran out
			return false
		}
	}
	return false
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
		c.skip(int64(n)) // n is an int on 32-bit platforms
		splicedAway.Add(int64(n))
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
