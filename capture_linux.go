//go:build linux

package sandboxexec

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// splicedAway counts the bytes spliceMiddle discarded, and spliceFallBacks
// the times it handed back to reading: tests check that each path ran.
var splicedAway, spliceFallBacks atomic.Int64

// devNull is where the middle of a flood goes: splicing to it frees the
// pipe's pages without copying them.
var devNull = sync.OnceValues(func() (int, error) {
	return unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
})

// spliceMiddle drains r once c's head is full, without copying what c will
// not keep. The stream moves by splice(2), page references rather than
// bytes, into a second pipe that holds the newest bytes: once that pipe
// holds well over c's tail, the excess (bytes the tail would overwrite
// anyway, since at least a tail's worth follows them) is spliced to
// /dev/null. At the end the second pipe's bytes, the stream's last ones,
// are read into c. A writer that keeps the reader waking for small writes
// (head -c writes 8 KiB at a time) otherwise costs a copy of every byte.
//
// It reports whether the stream ended (EOF, the read deadline, or an
// error); false means splicing was not possible or stopped being, c is up
// to date, and the caller goes on reading r.
func spliceMiddle(r *os.File, c *capture, buf []byte) (ended bool) {
	null, err := devNull()
	if err != nil || c.tailLimit == 0 {
		return false
	}
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK) != nil {
		return false
	}
	tailR, tailW := p[0], p[1]
	defer unix.Close(tailR)
	capacity, _ := unix.FcntlInt(uintptr(tailW), fSetPipeSize, 1<<20)
	if capacity < 4*c.tailLimit {
		unix.Close(tailW)
		return false
	}
	// Splice in at most half the pipe at once, and discard down to the
	// tail once it holds more than half: the pipe never nears full unless
	// its pages are mostly empty (tiny writes in packet mode), and then
	// splicing in fails and this falls back to reading.
	half := capacity / 2
	held := 0 // bytes in the tail pipe

	discard := func() bool {
		for held > c.tailLimit {
			n, err := unix.Splice(tailR, nil, null, nil, held-c.tailLimit, 0)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				return false
			}
			held -= int(n)
			c.skip(n)
			splicedAway.Add(n)
		}
		return true
	}
	// flush reads the tail pipe into c: the stream's newest bytes.
	flush := func() {
		unix.Close(tailW)
		readAvailable(uintptr(tailR), buf, func(b []byte) { c.Write(b) })
	}

	rc, err := r.SyscallConn()
	if err != nil {
		unix.Close(tailW)
		return false
	}
	var fallBack, eof bool
	readErr := rc.Read(func(fd uintptr) bool {
		for {
			want := min(half, capacity-held)
			n, err := unix.Splice(int(fd), nil, tailW, nil, want, unix.SPLICE_F_NONBLOCK)
			switch {
			case n > 0:
				held += int(n)
				if held > half && !discard() {
					fallBack = true
					return true
				}
			case err == nil: // n == 0: the writers are gone
				eof = true
				return true
			case err == unix.EINTR:
			case err == unix.EAGAIN:
				// Either r is empty (wait for it) or the tail pipe is
				// full (make room, or give up on splicing).
				if avail, ierr := unix.IoctlGetInt(int(fd), unix.TIOCINQ); ierr == nil && avail == 0 {
					return false
				}
				if held <= c.tailLimit || !discard() {
					fallBack = true
					return true
				}
			default:
				fallBack = true
				return true
			}
		}
	})
	flush()
	switch {
	case eof:
		return true
	case fallBack && readErr == nil:
		spliceFallBacks.Add(1)
		return false
	case errors.Is(readErr, os.ErrDeadlineExceeded):
		sweep(r, buf, func(b []byte) { c.Write(b) })
	}
	return true
}
