// Package probe keeps what a check of the system answered, once the answer
// is final.
//
// sync.Once keeps the first answer whatever it is: a check that failed
// because the process had run out of descriptors at that moment (a pipe to
// export a seccomp program, a file of /proc) would then say for the rest of
// the process's life that the sandbox cannot be had, or, under best effort,
// leave it out. A Result asks again instead.
package probe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
)

// Result is the answer of a check that is made once it has succeeded, or
// failed for a reason that lasts. Its zero value is ready to use.
type Result[T any] struct {
	mu     sync.Mutex
	done   atomic.Bool // v and err are set, and stay so; read first without mu
	v      T
	err    error
	flight *flight[T] // the check under way, if one is
}

type flight[T any] struct {
	over chan struct{}
	v    T
	err  error
}

// Get returns the kept answer, or has check run and keeps its answer
// unless the error is Temporary. Callers that come while a check runs share
// its answer, a temporary failure included, rather than each running the
// check again in turn (a check that takes seconds would make the last of
// many callers wait that many times over). A caller waits until ctx is
// done at most, and then gets ctx.Err(): the check runs on, on a goroutine
// of its own, and its answer is kept for the callers after. A check that
// panics fails with an error that says so, and is asked again next time.
func (r *Result[T]) Get(ctx context.Context, check func() (T, error)) (T, error) {
	if r.done.Load() { // each call of the sandbox asks: no lock then
		return r.v, r.err
	}
	r.mu.Lock()
	if r.done.Load() {
		r.mu.Unlock()
		return r.v, r.err
	}
	f := r.flight
	if f == nil {
		f = &flight[T]{over: make(chan struct{})}
		r.flight = f
		go r.run(f, check)
	}
	r.mu.Unlock()
	select {
	case <-f.over:
		return f.v, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Peek gives the check's value where it is done, without starting it.
func (r *Result[T]) Peek() (T, bool) {
	if r.done.Load() {
		return r.v, true
	}
	var zero T
	return zero, false
}

func (r *Result[T]) run(f *flight[T], check func() (T, error)) {
	panicked := true
	defer func() {
		if panicked {
			var zero T
			f.v, f.err = zero, fmt.Errorf("%w: %v", errCheckPanicked, recover())
		}
		r.mu.Lock()
		if !panicked && (f.err == nil || !Temporary(f.err)) {
			r.v, r.err = f.v, f.err
			r.done.Store(true)
		}
		r.flight = nil
		r.mu.Unlock()
		close(f.over)
	}()
	f.v, f.err = check()
	panicked = false
}

// errCheckPanicked is Temporary: the answer is not one the system gave, so
// a caller fails for now rather than go without what the check looks for.
var errCheckPanicked = errors.New("the check panicked")

// Temporary reports whether err says only that the process or the machine
// lacked something at the moment (descriptors, memory, processes, time), not
// what the system can do.
func Temporary(err error) bool {
	for _, e := range []error{
		syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOBUFS,
		syscall.EAGAIN, syscall.EINTR, context.DeadlineExceeded, errCheckPanicked,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
