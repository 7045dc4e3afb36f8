package probe

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResultAsksAgainAfterATemporaryFailure(t *testing.T) {
	var r Result[int]
	calls := 0
	answers := []error{
		&os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE},
		fmt.Errorf("export: %w", syscall.ENOMEM),
		nil,
	}
	for i, want := range answers {
		v, err := r.Get(func() (int, error) { calls++; return calls, answers[calls-1] })
		assert.Equal(t, i+1, v)
		assert.Equal(t, want, err)
	}
	v, err := r.Get(func() (int, error) { t.Fatal("asked again after a success"); return 0, nil })
	assert.Equal(t, 3, v)
	require.NoError(t, err)
}

func TestResultKeepsALastingFailure(t *testing.T) {
	var r Result[string]
	lasting := fmt.Errorf("seccomp: %w", syscall.ENOSYS)
	_, err := r.Get(func() (string, error) { return "", lasting })
	require.Equal(t, lasting, err)
	_, err = r.Get(func() (string, error) { t.Fatal("asked again after a lasting failure"); return "", nil })
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
			v, err := r.Get(func() (int, error) { calls++; return 7, nil })
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
