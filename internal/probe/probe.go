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
	"sync"
	"sync/atomic"
	"syscall"
)

// Result is the answer of a check that is made once it has succeeded, or
// failed for a reason that lasts. Its zero value is ready to use.
type Result[T any] struct {
	mu   sync.Mutex
	done atomic.Bool
	v    T
	err  error
}

// Get returns the kept answer, or runs check and keeps its answer unless
// the error is Temporary. Concurrent callers wait for one check.
func (r *Result[T]) Get(check func() (T, error)) (T, error) {
	if r.done.Load() {
		return r.v, r.err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done.Load() {
		return r.v, r.err
	}
	v, err := check()
	if err != nil && Temporary(err) {
		return v, err
	}
	r.v, r.err = v, err
	r.done.Store(true)
	return v, err
}

// Temporary reports whether err says only that the process or the machine
// lacked something at the moment (descriptors, memory, processes, time), not
// what the system can do.
func Temporary(err error) bool {
	for _, e := range []error{
		syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOBUFS,
		syscall.EAGAIN, syscall.EINTR, context.DeadlineExceeded,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
