package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

func TestResultAsksAgainAfterATemporaryFailure(t *testing.T) {
	var r Result[int]
	calls := 0
	answers := []error{
		&os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE},
		fmt.Errorf("export: %w", syscall.ENOMEM),
		nil,
	}
	for i, want := range answers {
		v, err := r.Get(bg, func() (int, error) { calls++; return calls, answers[calls-1] })
		assert.Equal(t, i+1, v)
		assert.Equal(t, want, err)
	}
	v, err := r.Get(bg, func() (int, error) { t.Error("asked again after a success"); return 0, nil })
	assert.Equal(t, 3, v)
	require.NoError(t, err)
}

func TestResultKeepsALastingFailure(t *testing.T) {
	var r Result[string]
	lasting := fmt.Errorf("seccomp: %w", syscall.ENOSYS)
	_, err := r.Get(bg, func() (string, error) { return "", lasting })
	require.Equal(t, lasting, err)
	_, err = r.Get(bg, func() (string, error) { t.Error("asked again after a lasting failure"); return "", nil })
	require.Equal(t, lasting, err)
}

func TestResultChecksOnceForConcurrentCallers(t *testing.T) {
	var r Result[int]
	var calls int
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.Get(bg, func() (int, error) { calls++; return 7, nil })
			assert.Equal(t, 7, v)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, calls)
}

func TestTemporary(t *testing.T) {
	assert.True(t, Temporary(&os.PathError{Op: "open", Path: "/proc/self/cgroup", Err: syscall.EMFILE}))
	assert.True(t, Temporary(fmt.Errorf("fork: %w", syscall.EAGAIN)))
	assert.False(t, Temporary(syscall.ENOSYS))
	assert.False(t, Temporary(errors.New("no pids cgroup controller this process can use")))
	assert.False(t, Temporary(os.ErrNotExist))
}

// Callers that come while a check runs wait for it and share its answer,
// a temporary failure too: a slow check is not run again for each of them
// in turn (found in review: ten callers of a 100 ms check that failed for
// now waited up to a second).
func TestResultSharesACheckUnderWay(t *testing.T) {
	var r Result[int]
	var calls atomic.Int32
	release := make(chan struct{})
	check := func() (int, error) {
		calls.Add(1)
		<-release
		return 0, syscall.EAGAIN
	}
	var wg, calling sync.WaitGroup
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		calling.Add(1)
		go func() {
			defer wg.Done()
			calling.Done()
			_, err := r.Get(bg, check)
			errs <- err
		}()
	}
	calling.Wait()
	time.Sleep(100 * time.Millisecond) // from calling.Done to the wait in Get
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.ErrorIs(t, err, syscall.EAGAIN)
	}
	assert.Equal(t, int32(1), calls.Load(), "the check ran again for callers that waited for it")
	// A later caller asks again: the failure was not kept.
	v, err := r.Get(bg, func() (int, error) { calls.Add(1); return 5, nil })
	require.NoError(t, err)
	assert.Equal(t, 5, v)
}

// A check that panics fails, for each caller that waits for it, with an
// error that says so, Temporary; it is not kept.
func TestResultCheckPanics(t *testing.T) {
	var r Result[int]
	started := make(chan struct{})
	release := make(chan struct{})
	errs := make(chan error, 2)
	go func() {
		_, err := r.Get(bg, func() (int, error) { close(started); <-release; panic("boom") })
		errs <- err
	}()
	<-started
	go func() { _, err := r.Get(bg, func() (int, error) { return 1, nil }); errs <- err }()
	time.Sleep(50 * time.Millisecond) // the second caller waits for the first check
	close(release)
	for i := 0; i < 2; i++ {
		select {
		case err := <-errs:
			assert.ErrorContains(t, err, "the check panicked: boom")
			assert.True(t, Temporary(err), "a caller would go without what the check looks for")
		case <-time.After(5 * time.Second):
			t.Fatal("a caller still waits for a check that panicked")
		}
	}
	v, err := r.Get(bg, func() (int, error) { return 7, nil })
	require.NoError(t, err)
	assert.Equal(t, 7, v)
}

// A caller waits for a check no longer than its context allows (found in
// review: a call with a 100 ms deadline waited out a sandbox-exec check of
// up to ten seconds); the check's answer is kept for the callers after.
func TestResultWaitBoundedByContext(t *testing.T) {
	var r Result[int]
	release := make(chan struct{})
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Get(ctx, func() (int, error) { <-release; return 9, nil })
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
	close(release)
	v, err := r.Get(bg, func() (int, error) { t.Error("asked again: the check under way was dropped"); return 0, nil })
	require.NoError(t, err)
	assert.Equal(t, 9, v)
}
