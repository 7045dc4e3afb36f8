package sandboxexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

// stdinCopier feeds the child's stdin pipe from a reader (src), or from a
// file of the host's (srcFD, a duplicate, read while it is readable and
// until abort, so that nothing is read from it once the call is over).
type stdinCopier struct {
	src   io.Reader
	srcFD int // -1 for src
	w     *os.File

	begun     bool
	abortOnce sync.Once
	aborted   *os.File // readable once abort was called; with srcFD only
	abortW    *os.File
	copied    chan struct{} // closed when the copy from srcFD has ended
	mayBlock  bool          // srcFD's read can block (see readMayBlock)

	mu       sync.Mutex
	callOver bool
	panicked any // what src panicked with while the call was on
}

// openStdin returns the file the child reads as stdin; when src must be
// copied into a pipe, the copier that will do it; and what to do once the
// command has ended, if anything. Each call opens the null device anew: a
// command may lock the file it gets (flock) or change its status flags, and
// neither may outlast the call. A sandbox checks a file when it is opened,
// not when it is written to or sent on, so a confined command gets an
// *os.File of the host's only where it can only read it: see confinedStdin.
// With readOnlyView, no file of the host's mounts (see readOnlyViewer).
func openStdin(src io.Reader, unconfined, readOnlyView bool) (*os.File, *stdinCopier, func(), error) {
	if src == nil {
		f, err := openNull(readOnlyView)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("sandboxexec: stdin: %w", err)
		}
		return f, nil, nil, nil
	}
	if f, ok := src.(*os.File); ok {
		if f.Fd() == ^uintptr(0) { // nil or closed: the child would start without a stdin
			return nil, nil, nil, errors.New("sandboxexec: stdin: the *os.File is nil or closed")
		}
		if unconfined {
			return f, nil, nil, nil
		}
		return confinedStdin(f, readOnlyView)
	}
	return copiedStdin(src, -1)
}

// copiedStdin is a pipe for the child to read, and the copier that will
// feed it from src or, when fd is not -1, from the descriptor fd, which it
// then owns.
func copiedStdin(src io.Reader, fd int) (*os.File, *stdinCopier, func(), error) {
	c := &stdinCopier{src: src, srcFD: fd}
	fail := func(err error) (*os.File, *stdinCopier, func(), error) {
		c.closeSource()
		return nil, nil, nil, fmt.Errorf("sandboxexec: stdin pipe: %w", err)
	}
	if fd != -1 {
		var err error
		if c.aborted, c.abortW, err = os.Pipe(); err != nil {
			return fail(err)
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	c.w = pw
	return pr, c, nil, nil
}

// dropUnbegun closes the copier's source where the call ended before the
// copy began.
func (c *stdinCopier) dropUnbegun() {
	if !c.begun {
		c.closeSource()
	}
}

// closeSource closes what the copier reads from, and its abort pipe.
func (c *stdinCopier) closeSource() {
	if c.srcFD != -1 {
		closeFD(c.srcFD)
	}
	if c.aborted != nil {
		c.aborted.Close()
		c.abortW.Close()
	}
}

// begin starts the copy. A reader that panics gives the child EOF, and its
// panic is kept for the engine to raise in the caller once the call is over,
// as a live writer's is; it is raised here, on its own goroutine, only where
// the call is already over (it no longer waits for a reader that blocks).
func (c *stdinCopier) begin() {
	c.begun = true
	c.copied = make(chan struct{})
	go func() {
		defer close(c.copied)
		defer c.closeSource()
		defer c.w.Close()
		var p any
		panicked := true
		func() {
			defer func() {
				if panicked {
					p = recover()
				}
			}()
			if c.srcFD != -1 {
				copyFromFD(c.w, c.srcFD, c.aborted)
			} else {
				io.Copy(c.w, untilCallOver{c})
			}
			panicked = false
		}()
		// Here the copy returned, or src panicked; runtime.Goexit in src
		// ends the goroutine before, and the copy with it.
		if !panicked {
			return
		}
		if p == nil { // panic(nil) under GODEBUG=panicnil=1
			p = new(runtime.PanicNilError)
		}
		c.mu.Lock()
		over := c.callOver
		if !over {
			c.panicked = p
		}
		c.mu.Unlock()
		if over {
			panic(p)
		}
	}()
}

// untilCallOver reads the copier's src, and ends the copy once the call is
// over at a read that gave nothing: a reader that returns (0, nil) for good
// would otherwise keep the copy's goroutine spinning after the call, since
// only a write sees that the pipe is closed.
type untilCallOver struct{ c *stdinCopier }

func (u untilCallOver) Read(p []byte) (int, error) {
	n, err := u.c.src.Read(p)
	if n == 0 && err == nil {
		u.c.mu.Lock()
		over := u.c.callOver
		u.c.mu.Unlock()
		if over {
			return 0, io.ErrClosedPipe
		}
	}
	return n, err
}

// blockedCopyWait bounds finish's wait for a copy from a file whose read
// blocked: another reader took what poll saw, and the read returns only when
// the file gives more.
const blockedCopyWait = 100 * time.Millisecond

// finish says the call is over, and returns what the reader panicked with
// until then, if anything. It waits for a copy from a file, which abort
// ends at once, so that the copy reads nothing of the file after the call:
// a poll that saw input just before the abort would otherwise read what the
// host writes next. Where that read can block (a terminal's, an eventfd's:
// see readMayBlock), it waits blockedCopyWait at most: a call comes back on
// time.
func (c *stdinCopier) finish() any {
	if c.srcFD != -1 && c.begun {
		c.abort()
		if c.mayBlock {
			t := time.NewTimer(blockedCopyWait)
			select {
			case <-c.copied:
			case <-t.C:
			}
			t.Stop()
		} else {
			<-c.copied
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callOver = true
	return c.panicked
}

// abort closes the pipe so that a copy blocked on the child ends, and tells
// a copy from a file to stop reading it; a copy blocked in src.Read ends
// when src returns.
func (c *stdinCopier) abort() {
	c.w.Close()
	if c.abortW != nil {
		c.abortOnce.Do(func() { c.abortW.Write([]byte{0}) })
	}
}
