package sandboxexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// capture keeps at most limit bytes of one stream: the first limit/2 bytes
// and the last limit-limit/2, so that both how a command started and how it
// ended survive a flood. Memory is bounded by limit whatever is written.
type capture struct {
	headLimit int
	tailLimit int
	head      []byte
	ring      []byte // the tail; allocated once the head is full
	ringNext  int    // where the next tail byte goes
	ringUsed  int    // valid bytes in ring
	total     int64  // every byte written
}

func newCapture(limit int) *capture {
	return &capture{headLimit: limit / 2, tailLimit: limit - limit/2}
}

// Write keeps what fits and never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headLimit - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 || c.tailLimit == 0 {
		return n, nil
	}
	if c.ring == nil {
		c.ring = make([]byte, c.tailLimit)
	}
	if len(p) >= c.tailLimit {
		copy(c.ring, p[len(p)-c.tailLimit:])
		c.ringNext, c.ringUsed = 0, c.tailLimit
		return n, nil
	}
	k := copy(c.ring[c.ringNext:], p)
	copy(c.ring, p[k:])
	c.ringNext = (c.ringNext + len(p)) % c.tailLimit
	c.ringUsed = min(c.ringUsed+len(p), c.tailLimit)
	return n, nil
}

// skip counts n bytes that were written and are not kept: a run of bytes
// that comes before at least tailLimit more.
func (c *capture) skip(n int64) { c.total += n }

// headFull says whether every further byte goes to the tail.
func (c *capture) headFull() bool { return len(c.head) == c.headLimit }

// omitted is how many bytes were written but not kept.
func (c *capture) omitted() int64 {
	return c.total - int64(len(c.head)) - int64(c.ringUsed)
}

// String is the kept bytes in stream order, with a one-line marker where
// bytes were left out, and invalid UTF-8 replaced by U+FFFD.
func (c *capture) String() string {
	buf := make([]byte, 0, len(c.head)+c.ringUsed+80)
	buf = append(buf, c.head...)
	if n := c.omitted(); n > 0 {
		buf = fmt.Appendf(buf, "\n[... sandboxexec: %d of %d bytes omitted ...]\n", n, c.total)
	}
	if c.ringUsed < c.tailLimit {
		buf = append(buf, c.ring[:c.ringUsed]...)
	} else {
		buf = append(buf, c.ring[c.ringNext:]...)
		buf = append(buf, c.ring[:c.ringNext]...)
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD")
}

// readBufs holds the buffers streams are read through, so that a call
// allocates none in the steady state.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 64*1024); return &b }}

// stream is one of the command's output pipes, read into its capture and
// copied to its live writer as the bytes arrive. A live writer that fails is
// dropped; the capture goes on.
type stream struct {
	r       *os.File
	capture *capture
	live    io.Writer
	// livePanic is what the live writer panicked with, if it did;
	// liveGoexit says it called runtime.Goexit.
	livePanic  any
	liveGoexit bool
	// graceEnd, once set (Unix nanoseconds, see endLive), is when the
	// drain grace ends; pumpTime later, the live writer gets no more.
	graceEnd atomic.Int64
	// liveMu, where the streams are read on goroutines of their own, is
	// shared by both, so that their live writers are never called at once.
	liveMu   *sync.Mutex
	bufp     *[]byte
	buf      []byte
	backlog  tailPipe
	enlarged bool
	// mu is held while the drain goroutine handles what a read gave, and by
	// abandon: once abandoned is set, that goroutine touches the stream no
	// more, and the caller reads the capture.
	mu        sync.Mutex
	abandoned bool
}

func newStream(r *os.File, live io.Writer) *stream {
	bp := readBufs.Get().(*[]byte)
	return &stream{r: r, capture: newCapture(MaxStreamOutput), live: live, bufp: bp, buf: *bp}
}

// close gives back what the stream borrowed; r stays open. The buffer of an
// abandoned stream stays out of the pool: its read may still fill it.
func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backlog.close()
	if !s.abandoned {
		readBufs.Put(s.bufp)
	}
}

// closeReader closes r, unless the stream was abandoned: abandon's close is
// under way, and a close here that overtook it would be the one that waits
// for the read.
func (s *stream) closeReader() {
	s.mu.Lock()
	abandoned := s.abandoned
	s.mu.Unlock()
	if !abandoned {
		s.r.Close()
	}
}

// abandon gives up on a stream whose read has no deadline (a pipe Go cannot
// poll: Windows' anonymous pipes) once the drain grace is over: a process
// that escaped the kill, and holds the pipe, would otherwise hold the call
// until it exits. The drain goroutine drops whatever its read returns, and
// the call returns with what was read before. Closing r ends the read (on
// Windows, Close cancels a pipe's pending read, then waits for it to
// return); it runs on a goroutine of its own, so that a close that waits
// cannot hold the call.
func (s *stream) abandon() {
	s.mu.Lock()
	s.abandoned = true
	s.mu.Unlock()
	go s.r.Close()
}

// take hands bytes just read to the live writer and the capture.
func (s *stream) take(b []byte) {
	if s.live != nil {
		s.writeLive(b)
	}
	s.capture.Write(b)
}

// endLive says the drain grace ends at deadline, unless an earlier call
// said so already (the call's kill, which starts the grace, may come while
// the engine is in a slow live write), and returns when it ends. From
// pumpTime past it, no new write to the live writer is begun: a slow writer
// holds the call for the write it is in, not for one more per stream and
// read (found in review: a writer taking 1 s a write held a call with a
// 200 ms timeout for 3 s).
func (s *stream) endLive(deadline time.Time) time.Time {
	s.graceEnd.CompareAndSwap(0, deadline.UnixNano())
	return time.Unix(0, s.graceEnd.Load())
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// liveOpen says the live writer may be given more (see endLive).
func (s *stream) liveOpen() bool {
	end := s.graceEnd.Load()
	return end == 0 || time.Now().UnixNano() < end+int64(pumpTime)
}

// writeLive copies b to the live writer, and drops the writer when it fails
// or panics. A panic is kept for the engine to raise again once the call is
// over: unwinding from here would leave the command running, or unreaped.
// (A writer that calls runtime.Goexit cannot be stopped here; see await.)
func (s *stream) writeLive(b []byte) {
	if s.liveMu != nil {
		s.liveMu.Lock()
		defer s.liveMu.Unlock()
	}
	if !s.liveOpen() { // looked at once the other stream's write is over
		return
	}
	returned := false
	defer func() {
		if !returned {
			p := recover()
			if p == nil { // panic(nil) under GODEBUG=panicnil=1, or Goexit
				p = new(runtime.PanicNilError)
			}
			s.live, s.livePanic = nil, p
		}
	}()
	_, err := s.live.Write(b)
	returned = true
	if err != nil {
		s.live = nil
	}
}

// filled is called after a read that filled the buffer: it says the writer
// is ahead and the pipe (fd) holds more. While the reader keeps up, the
// kernel recycles the pipe's pages and the copy is cheap; once the pipe
// backs up, its pages are new anyway, and what the capture will not keep
// need not be copied at all. It reports whether the stream ended.
func (s *stream) filled(fd uintptr) (ended bool) {
	return s.live == nil && s.capture.headFull() && s.backlog.splice(fd, s.capture, s.buf)
}

// drain reads the stream to EOF, until its read deadline passes, or until it
// is abandoned (see abandon), with Go's poller blocking between reads: the
// engine's way where it does not poll the pipes itself (see await).
func (s *stream) drain() {
	rc, err := s.r.SyscallConn()
	if err != nil {
		return
	}
	for {
		n, err := s.r.Read(s.buf)
		if !s.took(rc, n, err) {
			return
		}
	}
}

// took handles what one read gave, and says whether to read on: not at EOF,
// at the deadline, or once the stream is abandoned. It holds mu, also while
// a live writer that calls runtime.Goexit unwinds (see awaitDraining), so
// that what that leaves is recorded before an abandon, or not at all.
func (s *stream) took(rc syscall.RawConn, n int, err error) (more bool) {
	s.mu.Lock()
	returned := false
	defer func() {
		if !returned {
			s.live, s.liveGoexit = nil, true
		}
		s.mu.Unlock()
	}()
	more = !s.abandoned && s.handle(rc, n, err)
	returned = true
	return more
}

// handle is took's work: the read's bytes to the live writer and the
// capture, and a look at the pipe after a full read.
func (s *stream) handle(rc syscall.RawConn, n int, err error) (more bool) {
	if n > 0 {
		s.take(s.buf[:n])
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The drain grace is over, but this goroutine may not have
			// run for a while, and a past deadline fails a read before
			// it looks: take what the pipe holds now, without waiting.
			rc.Control(s.sweep)
		}
		// EOF, the deadline, or a closed pipe: the stream ends here and
		// what was read is kept.
		return false
	}
	if n == len(s.buf) {
		ended := false
		rc.Control(func(fd uintptr) { ended = s.filled(fd) })
		return !ended
	}
	return true
}

// sweep reads what the pipe fd (non-blocking) holds right now, past any
// deadline. Only what it holds when the sweep starts: a writer that escaped
// the kill may refill the pipe as fast as it is read. The capture gets all of
// it, the live writer what it gives until pumpTime past the drain grace (see
// endLive): a pipe can hold a MiB or more, in 64 KiB reads or in one-byte
// packets, and a slow writer would hold the call past its deadline for each.
func (s *stream) sweep(fd uintptr) {
	if s.enlarged {
		// Reads could end inside a packet (see enlarge); the splice takes
		// whole ones.
		s.backlog.splice(fd, s.capture, s.buf)
		return
	}
	s.endLive(time.Now())
	readAvailable(fd, s.buf, pipeHolds(fd, len(s.buf)), s.take)
}

// pumpTime bounds how long the reading of one stream feeds a live writer
// before the engine looks at the command and the deadline again (see pump),
// and how long it feeds one once the deadline has passed.
const pumpTime = 5 * time.Millisecond

// readAvailable reads up to limit bytes of the non-blocking descriptor fd,
// stopping early when it has nothing more to give (or fails), and hands each
// read to feed.
func readAvailable(fd uintptr, buf []byte, limit int, feed func([]byte)) {
	for limit > 0 {
		n, err := rawRead(fd, buf[:min(len(buf), limit)])
		if n <= 0 || err != nil {
			return
		}
		feed(buf[:n])
		limit -= n
	}
}
