//go:build unix

package sandboxexec

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExecStdin(t *testing.T) {
	t.Parallel()
	t.Run("reader", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engCmd("cat"), WithStdin(strings.NewReader("hello from stdin\n")))
		require.NoError(t, err)
		assert.Equal(t, "hello from stdin\n", out.Stdout)
	})
	t.Run("large reader", func(t *testing.T) {
		t.Parallel()
		data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, more than a pipe holds
		out, _, err := engRun(t, engSh("wc -c"), WithStdin(bytes.NewReader(data)))
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(len(data)), strings.TrimSpace(out.Stdout))
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		f, err := os.CreateTemp(t.TempDir(), "stdin")
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteString("from a file\n")
		require.NoError(t, err)
		_, err = f.Seek(0, io.SeekStart)
		require.NoError(t, err)
		out, _, err := engRun(t, engCmd("cat"), WithStdin(f))
		require.NoError(t, err)
		assert.Equal(t, "from a file\n", out.Stdout)
	})
	t.Run("command that does not read a large input", func(t *testing.T) {
		t.Parallel()
		data := bytes.Repeat([]byte("x"), 4<<20)
		out, elapsed, err := engRun(t, engCmd("echo", "done"), WithStdin(bytes.NewReader(data)))
		require.NoError(t, err)
		assert.Equal(t, "done\n", out.Stdout)
		assert.Less(t, elapsed, 2*time.Second)
	})
	t.Run("reader that never returns", func(t *testing.T) {
		t.Parallel()
		pr, pw := io.Pipe()
		defer pw.Close() // ends the copier's read
		out, elapsed, err := engRun(t, engCmd("echo", "done"), WithStdin(pr))
		require.NoError(t, err)
		assert.Equal(t, "done\n", out.Stdout)
		assert.Less(t, elapsed, 2*time.Second)
	})
	t.Run("reader that returns nothing for good", func(t *testing.T) {
		t.Parallel()
		r := &emptyReader{}
		out, _, err := engRun(t, engCmd("echo", "done"), WithStdin(r))
		require.NoError(t, err)
		assert.Equal(t, "done\n", out.Stdout)
		// The copy stops calling Read soon after the call: a spinning
		// goroutine would go on for good.
		deadline := time.Now().Add(5 * time.Second)
		for {
			before := r.reads.Load()
			time.Sleep(20 * time.Millisecond)
			if r.reads.Load() == before {
				break
			}
			require.True(t, time.Now().Before(deadline), "the copy still reads stdin after the call (%d reads)", r.reads.Load())
		}
	})
}

// emptyReader returns (0, nil) from every Read, which io.Reader discourages
// but allows.
type emptyReader struct{ reads atomic.Int64 }

func (r *emptyReader) Read([]byte) (int, error) {
	r.reads.Add(1)
	return 0, nil
}

// TestExecStdinDefault checks that without WithStdin the command reads the
// null device, not the test's own stdin, even when that is a pipe that
// never ends. It swaps os.Stdin, so it does not run in parallel.
func TestExecStdinDefault(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	saved := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = saved }()

	out, elapsed, err := engRun(t, engCmd("cat").withTimeoutMs(5000))
	require.NoError(t, err)
	assert.False(t, out.TimedOut, "cat read a stdin that never ends")
	assert.Equal(t, 0, out.ExitCode)
	assert.Empty(t, out.Stdout)
	assert.Less(t, elapsed, 2*time.Second)

	if runtime.GOOS == "linux" {
		out, _, err = engRun(t, engCmd("readlink", "/proc/self/fd/0"))
		require.NoError(t, err)
		assert.Equal(t, os.DevNull+"\n", out.Stdout)
	}
}
