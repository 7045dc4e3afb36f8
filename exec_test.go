//go:build unix

package sandboxexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engCallLimit bounds every call made through engRun, so that a regression
// fails the test instead of hanging the binary.
const engCallLimit = 60 * time.Second

// engRun runs params unsandboxed and reports how long the call took.
func engRun(t *testing.T, params ExecParams, opts ...Option) (ExecToolCallOutput, time.Duration, error) {
	t.Helper()
	return engRunCtx(t, context.Background(), params, opts...)
}

func engRunCtx(t *testing.T, ctx context.Context, params ExecParams, opts ...Option) (ExecToolCallOutput, time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, engCallLimit)
	defer cancel()
	start := time.Now()
	out, err := ProcessExecToolCall(ctx, params, SandboxNone, nil, SandboxPolicy{}, opts...)
	return out, time.Since(start), err
}

func engSh(script string, args ...string) ExecParams {
	return ExecParams{Command: append([]string{"sh", "-c", script, "sh"}, args...)}
}

func engCmd(argv ...string) ExecParams { return ExecParams{Command: argv} }

// repeatUntilStopped runs step again and again on a goroutine of its own
// (a racing rename, a reaper) until stop is called, which waits for the
// step in progress to end.
func repeatUntilStopped(step func()) (stop func()) {
	stopping, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stopping:
				return
			default:
				step()
			}
		}
	}()
	return func() { close(stopping); <-done }
}

func (p ExecParams) withTimeoutMs(ms uint64) ExecParams {
	p.TimeoutMs = &ms
	return p
}

// engAlive reports whether pid is a process that has not died. A zombie
// (dead, waiting for a parent that is not ours to reap it) counts as dead.
func engAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// The state is the first field after the command name's ")".
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := strings.Fields(string(rest))
		return len(f) > 0 && f[0] != "Z" && f[0] != "X"
	}
	if runtime.GOOS == "linux" {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// engRequireGone waits a little for pid to die (SIGKILL is delivered
// asynchronously) and fails if it does not.
func engRequireGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for engAlive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived the call", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// engPids parses the lines of s that are process ids.
func engPids(t *testing.T, s string) []int {
	t.Helper()
	var pids []int
	for _, line := range strings.Split(s, "\n") {
		if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && n > 1 {
			pids = append(pids, n)
		}
	}
	return pids
}

// engMarker is a file that a command which must not run would create.
func engMarker(t *testing.T) string {
	return filepath.Join(t.TempDir(), "ran")
}

// wantCaptured is what a call returns for a stream that was full.
func wantCaptured(full string) string {
	if len(full) <= MaxStreamOutput {
		return full
	}
	half := MaxStreamOutput / 2
	return full[:half] +
		fmt.Sprintf("\n[... sandboxexec: %d of %d bytes omitted ...]\n", len(full)-MaxStreamOutput, len(full)) +
		full[len(full)-(MaxStreamOutput-half):]
}

// requireZeroFloods asserts that each of out's streams carried n zero bytes
// (head -c n /dev/zero) and kept what the head and tail of such a stream
// are.
func requireZeroFloods(t *testing.T, out ExecToolCallOutput, n int) {
	t.Helper()
	want := wantCaptured(strings.Repeat("\x00", n))
	for _, s := range []struct {
		name      string
		text      string
		bytes     int64
		truncated bool
	}{
		{"stdout", out.Stdout, out.StdoutBytes, out.StdoutTruncated},
		{"stderr", out.Stderr, out.StderrBytes, out.StderrTruncated},
	} {
		assert.Equal(t, int64(n), s.bytes, s.name)
		assert.Equal(t, n > MaxStreamOutput, s.truncated, s.name)
		assert.True(t, want == s.text, "%s: %d bytes kept, want %d", s.name, len(s.text), len(want))
	}
}

func engSeq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestExecErrors covers the mistakes that must be reported before anything
// is spawned. It runs alone (not parallel) because it writes executables:
// a concurrent fork could hold them open and make exec fail with ETXTBSY.
func TestExecErrors(t *testing.T) {
	dir := t.TempDir()
	marker := engMarker(t)
	script := "#!/bin/sh\ntouch " + marker + "\n"

	notExec := filepath.Join(dir, "not-executable")
	require.NoError(t, os.WriteFile(notExec, []byte(script), 0o644))
	plainFile := filepath.Join(dir, "plain-file")
	require.NoError(t, os.WriteFile(plainFile, []byte("x"), 0o644))
	runnable := filepath.Join(dir, "runnable")
	require.NoError(t, os.WriteFile(runnable, []byte("#!/bin/sh\necho ran in \"$PWD\"\n"), 0o755))

	t.Run("empty command", func(t *testing.T) {
		for _, cmd := range [][]string{nil, {}} {
			out, _, err := engRun(t, ExecParams{Command: cmd})
			require.ErrorIs(t, err, ErrEmptyCommand)
			assert.Equal(t, ExecToolCallOutput{}, out)
		}
	})
	t.Run("program not found", func(t *testing.T) {
		out, _, err := engRun(t, engCmd("sandboxexec-no-such-program-7f3a", "arg"))
		require.ErrorIs(t, err, exec.ErrNotFound)
		assert.Contains(t, err.Error(), "sandboxexec-no-such-program-7f3a")
		assert.Equal(t, ExecToolCallOutput{}, out)
	})
	t.Run("program not found in the child's PATH", func(t *testing.T) {
		_, _, err := engRun(t, engCmd("true"), WithEnv([]string{"PATH=" + dir}))
		require.ErrorIs(t, err, exec.ErrNotFound)
	})
	t.Run("path that does not exist", func(t *testing.T) {
		missing := filepath.Join(dir, "missing", "prog")
		_, _, err := engRun(t, engCmd(missing))
		require.ErrorIs(t, err, fs.ErrNotExist)
		assert.Contains(t, err.Error(), missing)
	})
	t.Run("file that is not executable", func(t *testing.T) {
		_, _, err := engRun(t, engCmd(notExec))
		require.ErrorIs(t, err, fs.ErrPermission)
		assert.Contains(t, err.Error(), notExec)
		assert.NoFileExists(t, marker)
	})
	t.Run("directory as program", func(t *testing.T) {
		_, _, err := engRun(t, engCmd(dir))
		require.ErrorIs(t, err, fs.ErrPermission)
	})
	t.Run("missing workdir", func(t *testing.T) {
		wd := filepath.Join(dir, "no-such-workdir")
		p := engSh("touch " + marker)
		p.Workdir = wd
		_, _, err := engRun(t, p)
		require.ErrorIs(t, err, fs.ErrNotExist)
		assert.Contains(t, err.Error(), wd)
		assert.Contains(t, err.Error(), "workdir")
		assert.NoFileExists(t, marker)
	})
	t.Run("workdir that is a file", func(t *testing.T) {
		p := engSh("touch " + marker)
		p.Workdir = plainFile
		_, _, err := engRun(t, p)
		require.Error(t, err)
		require.ErrorIs(t, err, syscall.ENOTDIR)
		assert.Contains(t, err.Error(), plainFile)
		assert.Contains(t, err.Error(), "not a directory")
		assert.NoFileExists(t, marker)
	})
	t.Run("NUL in an argument", func(t *testing.T) {
		_, _, err := engRun(t, engCmd("echo", "a\x00b"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "NUL")
	})
	t.Run("unknown sandbox type", func(t *testing.T) {
		_, err := ProcessExecToolCall(context.Background(), engSh("touch "+marker), SandboxType(99), nil, SandboxPolicy{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "unknown sandbox type")
		assert.NoFileExists(t, marker)
	})
	t.Run("negative limit under any sandbox type", func(t *testing.T) {
		for _, policy := range []SandboxPolicy{{MaxProcesses: -1}, {MaxCPUTime: -time.Second}} {
			_, err := ProcessExecToolCall(context.Background(), engSh("touch "+marker), SandboxNone, nil, policy)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "must not be negative")
			assert.NoFileExists(t, marker)
		}
	})
	t.Run("nil context", func(t *testing.T) {
		_, err := ProcessExecToolCall(nil, engSh("touch "+marker), SandboxNone, nil, SandboxPolicy{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "nil Context")
		assert.NoFileExists(t, marker)
	})
	t.Run("stdin file that is nil or closed", func(t *testing.T) {
		closed, err := os.Open(os.DevNull)
		require.NoError(t, err)
		closed.Close()
		for _, f := range []*os.File{nil, closed} {
			_, _, err := engRun(t, engSh("touch "+marker), WithStdin(f))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "stdin")
			assert.NoFileExists(t, marker)
		}
	})
	t.Run("nil option is ignored", func(t *testing.T) {
		out, _, err := engRun(t, engSh("echo ok"), nil, WithEnv(nil), nil)
		require.NoError(t, err)
		assert.Equal(t, "ok\n", out.Stdout)
	})
	t.Run("already cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out, _, err := engRunCtx(t, ctx, engSh("touch "+marker))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, ExecToolCallOutput{}, out)
		time.Sleep(50 * time.Millisecond)
		assert.NoFileExists(t, marker)
	})
	t.Run("already cancelled context with a cause", func(t *testing.T) {
		cause := errors.New("the agent gave up")
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		out, _, err := engRunCtx(t, ctx, engSh("touch "+marker))
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, cause)
		assert.Equal(t, ExecToolCallOutput{}, out)
		assert.NoFileExists(t, marker)
	})
	t.Run("relative program resolved in the workdir", func(t *testing.T) {
		p := engCmd("./runnable")
		p.Workdir = dir
		out, _, err := engRun(t, p)
		require.NoError(t, err)
		assert.Equal(t, "ran in "+dir+"\n", out.Stdout)
	})
	t.Run("absolute program", func(t *testing.T) {
		out, _, err := engRun(t, engCmd(runnable))
		require.NoError(t, err)
		assert.Equal(t, 0, out.ExitCode)
		assert.Contains(t, out.Stdout, "ran in ")
	})
}

func TestExecWorkdir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := engCmd("pwd")
	p.Workdir = dir
	out, _, err := engRun(t, p)
	require.NoError(t, err)
	assert.Equal(t, dir+"\n", out.Stdout)
}

func TestExecExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params ExecParams
		code   int
		signal string
	}{
		{"true", engCmd("true"), 0, ""},
		{"false", engCmd("false"), 1, ""},
		{"exit 3", engSh("exit 3"), 3, ""},
		{"exit 255", engSh("exit 255"), 255, ""},
		{"killed by SIGTERM", engSh("kill -TERM $$"), 128 + 15, "SIGTERM"},
		{"killed by SIGKILL", engSh("kill -KILL $$"), 128 + 9, "SIGKILL"},
		{"killed by SIGSEGV", engSh("kill -SEGV $$"), 128 + 11, "SIGSEGV"},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := engRun(t, tc.params)
			require.NoError(t, err, "an exit code is not an error")
			assert.Equal(t, tc.code, out.ExitCode)
			assert.Equal(t, tc.signal, out.Signal)
			assert.False(t, out.TimedOut)
			assert.NotEqual(t, -1, out.ExitCode)
		})
	}
}

func TestExecStdoutStderr(t *testing.T) {
	t.Parallel()
	out, _, err := engRun(t, engSh(`echo out; echo err >&2; printf 'no newline'`))
	require.NoError(t, err)
	assert.Equal(t, "out\nno newline", out.Stdout)
	assert.Equal(t, "err\n", out.Stderr)
	assert.Equal(t, int64(len(out.Stdout)), out.StdoutBytes)
	assert.Equal(t, int64(4), out.StderrBytes)
	assert.False(t, out.StdoutTruncated)
	assert.False(t, out.StderrTruncated)
}

func TestExecTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	t.Run("exit as the timeout hits", func(t *testing.T) {
		t.Parallel()
		// The timer can fire after the command has exited by itself and
		// before the engine has seen it: the command's own exit is reported
		// then, not a timeout. Which one wins each race is chance; a timeout
		// is only ever reported for a command the kill ended.
		timedOut, exited := 0, 0
		const calls = 500
		for i := range calls {
			out, _, err := engRun(t, engCmd("sh", "-c", "exit 0").withTimeoutMs(uint64(1+i%4)))
			require.NoError(t, err)
			if out.TimedOut {
				timedOut++
				require.Equal(t, "SIGKILL", out.Signal, "a timeout reported for a command that exited by itself: %+v", out)
			} else {
				exited++
				require.Equal(t, 0, out.ExitCode, "%+v", out)
				require.Empty(t, out.Signal, "%+v", out)
			}
		}
		t.Logf("of %d calls of sh with a 1-4 ms timeout, %d timed out and %d exited", calls, timedOut, exited)
	})
	t.Run("sleep 30", func(t *testing.T) {
		t.Parallel()
		out, elapsed, err := engRun(t, engCmd("sleep", "30").withTimeoutMs(300))
		require.NoError(t, err, "a timeout is a result, not an error")
		assert.True(t, out.TimedOut)
		assert.Equal(t, TimeoutExitCode, out.ExitCode)
		assert.Equal(t, 124, out.ExitCode)
		assert.GreaterOrEqual(t, elapsed, timeout)
		assert.Less(t, elapsed, timeout+time.Second)
		assert.GreaterOrEqual(t, out.Duration, timeout)
	})
	t.Run("output so far kept, group killed", func(t *testing.T) {
		t.Parallel()
		p := engSh(`echo started; echo "$$"; sleep 30 & echo "$!"; echo err >&2; wait`).withTimeoutMs(300)
		out, elapsed, err := engRun(t, p)
		require.NoError(t, err)
		assert.True(t, out.TimedOut)
		assert.Equal(t, 124, out.ExitCode)
		assert.Less(t, elapsed, timeout+time.Second)
		assert.True(t, strings.HasPrefix(out.Stdout, "started\n"), "stdout %q", out.Stdout)
		assert.Equal(t, "err\n", out.Stderr)
		pids := engPids(t, out.Stdout)
		require.Len(t, pids, 2, "stdout %q", out.Stdout)
		for _, pid := range pids {
			engRequireGone(t, pid)
		}
	})
	t.Run("command that ignores SIGTERM", func(t *testing.T) {
		t.Parallel()
		p := engSh(`trap '' TERM INT HUP; echo ready; while :; do sleep 1; done`).withTimeoutMs(300)
		out, elapsed, err := engRun(t, p)
		require.NoError(t, err)
		assert.True(t, out.TimedOut)
		assert.Equal(t, "ready\n", out.Stdout)
		assert.Less(t, elapsed, timeout+time.Second)
	})
	t.Run("fast command does not time out", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engCmd("echo", "ok").withTimeoutMs(5000))
		require.NoError(t, err)
		assert.False(t, out.TimedOut)
		assert.Equal(t, 0, out.ExitCode)
		assert.Equal(t, "ok\n", out.Stdout)
	})
	t.Run("timeout 0 is the default, not immediate", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engSh("sleep 0.2; echo ok").withTimeoutMs(0))
		require.NoError(t, err)
		assert.False(t, out.TimedOut)
		assert.Equal(t, "ok\n", out.Stdout)
	})
	t.Run("huge timeout does not overflow", func(t *testing.T) {
		t.Parallel()
		for _, ms := range []uint64{math.MaxUint64, math.MaxInt64, uint64(math.MaxInt64/int64(time.Millisecond)) + 1} {
			out, _, err := engRun(t, engSh("sleep 0.1; echo ok").withTimeoutMs(ms))
			require.NoError(t, err)
			assert.False(t, out.TimedOut, "timeout %d", ms)
			assert.Equal(t, "ok\n", out.Stdout)
		}
	})
}

func TestExecCancel(t *testing.T) {
	t.Parallel()
	t.Run("cancel after 200ms", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(200*time.Millisecond, cancel)
		p := engSh(`echo started; echo "$$"; sleep 30 & echo "$!"; wait`)
		out, elapsed, err := engRunCtx(t, ctx, p)
		require.ErrorIs(t, err, context.Canceled)
		assert.Less(t, elapsed, 200*time.Millisecond+time.Second)
		assert.False(t, out.TimedOut)
		assert.True(t, strings.HasPrefix(out.Stdout, "started\n"), "stdout %q", out.Stdout)
		pids := engPids(t, out.Stdout)
		require.Len(t, pids, 2, "stdout %q", out.Stdout)
		for _, pid := range pids {
			engRequireGone(t, pid)
		}
	})
	// As os/exec, and as a timeout: a command that exited by itself as ctx
	// was done reports its own exit, with no error; one the kill reached
	// reports the kill and ctx's error (found in review: an exit of its own
	// came with the cancellation error about half the time).
	t.Run("cancel as the command exits", func(t *testing.T) {
		t.Parallel()
		own, killed := 0, 0
		for i := 0; i < 40; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			live := writerFunc(func(b []byte) (int, error) {
				if bytes.Contains(b, []byte("bye")) {
					cancel()
				}
				return len(b), nil
			})
			out, _, err := engRunCtx(t, ctx, engSh("echo bye; exit 7"), WithLiveOutput(live, nil))
			cancel()
			if err != nil {
				require.ErrorIs(t, err, context.Canceled)
				assert.Equal(t, "SIGKILL", out.Signal, "a cancellation error for a command that exited by itself: %+v", out)
				killed++
				continue
			}
			assert.Equal(t, 7, out.ExitCode, "%+v", out)
			assert.Empty(t, out.Signal)
			own++
		}
		t.Logf("%d own exits, %d killed", own, killed)
	})
	t.Run("cancel with a cause", func(t *testing.T) {
		t.Parallel()
		cause := errors.New("the agent gave up")
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
		out, _, err := engRunCtx(t, ctx, engSh("echo started; sleep 30"))
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, cause)
		assert.Equal(t, "started\n", out.Stdout)
	})
	t.Run("context deadline", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		out, elapsed, err := engRunCtx(t, ctx, engSh("echo started; sleep 30"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.False(t, out.TimedOut, "the context's deadline is not the call's timeout")
		assert.Equal(t, "started\n", out.Stdout)
		assert.Less(t, elapsed, 200*time.Millisecond+time.Second)
	})
}

// TestExecGrandchildHoldsPipe: the shell exits at once, leaving a background
// job that holds stdout. The call must not wait for it, and must kill it.
func TestExecGrandchildHoldsPipe(t *testing.T) {
	t.Parallel()
	out, elapsed, err := engRun(t, engSh(`sleep 60 & echo "$!"; echo hi`))
	require.NoError(t, err)
	assert.Less(t, elapsed, 2*time.Second, "hang check")
	assert.Equal(t, 0, out.ExitCode)
	assert.True(t, strings.HasSuffix(out.Stdout, "\nhi\n"), "stdout %q", out.Stdout)
	pids := engPids(t, out.Stdout)
	require.Len(t, pids, 1)
	engRequireGone(t, pids[0])
}

// TestExecEscapedProcessHoldsPipe: a process that left the group (setsid)
// is out of the kill's reach; it holds stdout, and the call still returns
// after the drain grace period with what was read.
func TestExecEscapedProcessHoldsPipe(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) not installed")
	}
	out, elapsed, err := engRun(t, engSh(`setsid sh -c 'echo "$$"; exec sleep 30' & sleep 0.2; echo hi`))
	pids := engPids(t, out.Stdout)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	require.NoError(t, err)
	assert.Less(t, elapsed, 2*time.Second, "hang check")
	assert.GreaterOrEqual(t, elapsed, drainGrace)
	assert.Contains(t, out.Stdout, "hi\n")
	assert.Len(t, pids, 1, "stdout %q", out.Stdout)
}

func TestExecLargeOutput(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	full := engSeq(200000)[:size] // seq 1 200000 | head -c 1MiB
	half := MaxStreamOutput / 2
	want := full[:half] +
		fmt.Sprintf("\n[... sandboxexec: %d of %d bytes omitted ...]\n", size-MaxStreamOutput, size) +
		full[size-(MaxStreamOutput-half):]
	cmd := "seq 1 200000 | head -c 1048576"

	check := func(t *testing.T, text string, truncated bool, n int64) {
		t.Helper()
		assert.True(t, truncated)
		assert.Equal(t, int64(size), n)
		assert.Equal(t, len(want), len(text))
		require.True(t, strings.HasPrefix(text, full[:half]), "head differs")
		require.True(t, strings.HasSuffix(text, full[size-(MaxStreamOutput-half):]), "tail differs")
		assert.Equal(t, want, text)
	}
	t.Run("stdout", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engSh(cmd))
		require.NoError(t, err)
		check(t, out.Stdout, out.StdoutTruncated, out.StdoutBytes)
		assert.Empty(t, out.Stderr)
		assert.False(t, out.StderrTruncated)
	})
	t.Run("stderr", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engSh(cmd+" >&2"))
		require.NoError(t, err)
		check(t, out.Stderr, out.StderrTruncated, out.StderrBytes)
		assert.Empty(t, out.Stdout)
		assert.False(t, out.StdoutTruncated)
	})
	t.Run("both at once", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engSh(cmd+" & "+cmd+" >&2; wait"))
		require.NoError(t, err)
		check(t, out.Stdout, out.StdoutTruncated, out.StdoutBytes)
		check(t, out.Stderr, out.StderrTruncated, out.StderrBytes)
	})
	t.Run("exactly the limit is not truncated", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engSh(fmt.Sprintf("seq 1 200000 | head -c %d", MaxStreamOutput)))
		require.NoError(t, err)
		assert.False(t, out.StdoutTruncated)
		assert.Equal(t, full[:MaxStreamOutput], out.Stdout)
	})
	t.Run("limit+1 is truncated by one byte", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engSh(fmt.Sprintf("seq 1 200000 | head -c %d", MaxStreamOutput+1)))
		require.NoError(t, err)
		assert.True(t, out.StdoutTruncated)
		assert.Contains(t, out.Stdout, fmt.Sprintf("[... sandboxexec: 1 of %d bytes omitted ...]", MaxStreamOutput+1))
	})
}

// TestExecHugeOutput floods a GiB through stdout and checks that the host's
// heap does not grow with it. It runs alone so that other tests' allocations
// do not count.
func TestExecHugeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("1 GiB of output: skipped under -short")
	}
	// Warm up: a first call allocates what every later call reuses.
	_, _, err := engRun(t, engCmd("true"))
	require.NoError(t, err)

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond) // allocates once, not per sample
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	const size = 1 << 30
	// A loaded host may need more than the default timeout for a GiB.
	out, elapsed, err := engRun(t, engCmd("head", "-c", strconv.Itoa(size), "/dev/zero").withTimeoutMs(50_000))
	close(stop)
	<-sampled
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	require.NoError(t, err)
	assert.Equal(t, 0, out.ExitCode)
	assert.False(t, out.TimedOut)
	assert.True(t, out.StdoutTruncated)
	assert.Equal(t, int64(size), out.StdoutBytes)
	assert.False(t, out.StderrTruncated)
	marker := fmt.Sprintf("\n[... sandboxexec: %d of %d bytes omitted ...]\n", size-MaxStreamOutput, size)
	assert.Equal(t, MaxStreamOutput+len(marker), len(out.Stdout))
	assert.Contains(t, out.Stdout, marker)

	peak = max(peak, after.HeapAlloc)
	growth := int64(peak) - int64(before.HeapAlloc)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("1 GiB in %v: peak heap growth %d KiB, allocated %d KiB", elapsed, growth>>10, allocated>>10)
	assert.Less(t, growth, int64(1<<20), "peak heap growth")
	assert.Less(t, allocated, uint64(4<<20), "bytes allocated must not grow with the output")
}

func TestExecInvalidUTF8(t *testing.T) {
	t.Parallel()
	out, _, err := engRun(t, engCmd("printf", `\377\376ok`))
	require.NoError(t, err)
	assert.Equal(t, "\uFFFDok", out.Stdout)
	assert.True(t, utf8.ValidString(out.Stdout))
	assert.Equal(t, int64(4), out.StdoutBytes, "the count is of bytes the command wrote")
}

// One writer may take both streams, as with os/exec: it is never called
// from two goroutines at once (the race detector would say so; without
// pidfds each stream is read on a goroutine of its own).
func TestExecLiveOutputOneWriterForBoth(t *testing.T) {
	t.Parallel()
	var both bytes.Buffer
	out, _, err := engRun(t, engSh("head -c 3000000 /dev/zero & head -c 3000000 /dev/zero >&2; wait"),
		WithLiveOutput(&both, &both))
	require.NoError(t, err)
	assert.Equal(t, 0, out.ExitCode)
	assert.EqualValues(t, 3000000, out.StdoutBytes)
	assert.EqualValues(t, 3000000, out.StderrBytes)
	assert.Equal(t, 6000000, both.Len())
}

func TestExecLiveOutput(t *testing.T) {
	t.Parallel()
	const n = 100000 // seq 1 100000 is 588895 bytes
	full := engSeq(n)
	var liveOut, liveErr bytes.Buffer
	out, _, err := engRun(t, engSh(fmt.Sprintf("seq 1 %d & seq 1 %d >&2; wait", n, n)),
		WithLiveOutput(&liveOut, &liveErr))
	require.NoError(t, err)
	assert.Equal(t, full, liveOut.String(), "live stdout must see every byte")
	assert.Equal(t, full, liveErr.String(), "live stderr must see every byte")
	assert.True(t, out.StdoutTruncated)
	assert.True(t, out.StderrTruncated)
	assert.Equal(t, int64(len(full)), out.StdoutBytes)
	want, _ := captureModel([]byte(full), MaxStreamOutput)
	assert.Equal(t, want, out.Stdout)
	assert.Equal(t, want, out.Stderr)

	t.Run("only stdout", func(t *testing.T) {
		t.Parallel()
		var live bytes.Buffer
		out, _, err := engRun(t, engSh("echo a; echo b >&2"), WithLiveOutput(&live, nil))
		require.NoError(t, err)
		assert.Equal(t, "a\n", live.String())
		assert.Equal(t, "b\n", out.Stderr)
	})
	t.Run("failing writer does not break the capture", func(t *testing.T) {
		t.Parallel()
		out, _, err := engRun(t, engSh("echo a; echo b"), WithLiveOutput(&failingWriter{}, &failingWriter{}))
		require.NoError(t, err)
		assert.Equal(t, "a\nb\n", out.Stdout)
	})
}

// A slow live writer holds the call for the write it is in when the drain
// grace ends, not for a new write per stream begun after it (found in
// review: with writes of 1.5 s, a call with a 200 ms timeout took 4.5 s,
// three writes, the last two begun once the grace was over). The capture
// still gets every byte read.
func TestExecSlowLiveWriterAfterGrace(t *testing.T) {
	t.Parallel()
	const write = 1500 * time.Millisecond
	var mu sync.Mutex
	var begun []time.Duration
	start := time.Now()
	slow := writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		begun = append(begun, time.Since(start))
		mu.Unlock()
		time.Sleep(write)
		return len(b), nil
	})
	out, elapsed, err := engRun(t, engSh("yes & yes >&2; wait").withTimeoutMs(200), WithLiveOutput(slow, slow))
	require.NoError(t, err)
	assert.True(t, out.TimedOut)
	assert.Positive(t, out.StdoutBytes)
	assert.Positive(t, out.StderrBytes)
	mu.Lock()
	defer mu.Unlock()
	// The first write, begun at once, ends past the grace (200 ms + 500 ms);
	// each further one would add a whole write.
	assert.Less(t, elapsed, 2*write, "writes begun at %v", begun)
	assert.LessOrEqual(t, len(begun), 1, "writes begun at %v", begun)
}

func TestExecWithEnv(t *testing.T) {
	t.Parallel()
	out, _, err := engRun(t, engCmd("env"), WithEnv([]string{"A=1", "B=two words", "GH_TOKEN=kept when explicit"}))
	require.NoError(t, err)
	assert.Equal(t, "A=1\nB=two words\nGH_TOKEN=kept when explicit\n", out.Stdout)

	// An empty environment is empty, not the host's (os.StartProcess would
	// give a nil Env the host's).
	for _, env := range [][]string{nil, {}} {
		out, _, err = engRun(t, engCmd("env"), WithEnv(env))
		require.NoError(t, err)
		assert.Empty(t, out.Stdout)
	}
}

// A variable given twice is set by its last entry, for the program lookup
// and for the command, as with os/exec.
func TestExecWithEnvDuplicates(t *testing.T) {
	t.Parallel()
	env := []string{"A=old", "PATH=/nonexistent", "B=1", "A=new", "PATH=/usr/bin:/bin", "NOEQUALS", ""}
	out, _, err := engRun(t, ExecParams{Command: []string{"env"}}, WithEnv(env))
	require.NoError(t, err)
	assert.Equal(t, "B=1\nA=new\nPATH=/usr/bin:/bin\nNOEQUALS\n", out.Stdout)
}

func TestDedupEnv(t *testing.T) {
	in := []string{"=C:=C:\\x", "a=1", "A=2", "a=3", "=odd", "", "K=v=w", "=C:=C:\\y", "K=", "bare"}
	want := []string{"A=2", "a=3", "=odd", "=C:=C:\\y", "K=", "bare"}
	if runtime.GOOS == "windows" {
		want = []string{"a=3", "=odd", "=C:=C:\\y", "K=", "bare"}
	}
	assert.Equal(t, want, dedupEnv(in))
	assert.Empty(t, dedupEnv(nil))
}

// TestExecDefaultEnv uses t.Setenv, so it does not run in parallel.
func TestExecDefaultEnv(t *testing.T) {
	secrets := []string{"FOO_API_KEY", "MY_SECRET", "GH_TOKEN", "db_password"}
	for _, name := range secrets {
		t.Setenv(name, "hunter2")
	}
	t.Setenv("SANDBOXEXEC_PLAIN_VAR", "visible")
	out, _, err := engRun(t, engCmd("env"))
	require.NoError(t, err)
	lines := strings.Split(out.Stdout, "\n")
	assert.Contains(t, lines, "SANDBOXEXEC_PLAIN_VAR=visible")
	assert.Contains(t, lines, "PATH="+os.Getenv("PATH"))
	for _, name := range secrets {
		assert.NotContains(t, out.Stdout, name+"=")
	}
	assert.NotContains(t, out.Stdout, "hunter2")
}

func TestExecDuration(t *testing.T) {
	t.Parallel()
	out, elapsed, err := engRun(t, engCmd("sleep", "0.2"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, out.Duration, 200*time.Millisecond)
	assert.LessOrEqual(t, out.Duration, elapsed)
	assert.Less(t, out.Duration, 5*time.Second)

	out, _, err = engRun(t, engCmd("true"))
	require.NoError(t, err)
	assert.Positive(t, out.Duration)
	assert.Less(t, out.Duration, 5*time.Second)

	data, err := json.Marshal(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), fmt.Sprintf(`"duration_ms":%d`, out.Duration.Milliseconds()))
}

func engOpenFDs(t *testing.T) int {
	t.Helper()
	dir := "/proc/self/fd"
	if runtime.GOOS != "linux" {
		dir = "/dev/fd"
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(entries)
}

// TestExecConcurrentNoLeaks runs 100 calls at once and checks that they all
// succeed and leave no goroutine and no file descriptor behind. It runs
// alone so that other tests' goroutines and files do not count.
func TestExecConcurrentNoLeaks(t *testing.T) {
	// Warm up what the runtime opens once (netpoller, pidfd probe, ...).
	_, _, err := engRun(t, engSh("echo warm; echo up >&2"), WithStdin(strings.NewReader("x")))
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)
	baseGoroutines := runtime.NumGoroutine()
	baseFDs := engOpenFDs(t)

	const calls = 100
	var wg sync.WaitGroup
	outs := make([]ExecToolCallOutput, calls)
	errs := make([]error, calls)
	for i := 0; i < calls; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var opts []Option
			if i%2 == 0 {
				opts = append(opts, WithStdin(strings.NewReader(strconv.Itoa(i))))
			}
			outs[i], _, errs[i] = engRun(t, engSh(`echo "$1"; echo "err $1" >&2; cat`, strconv.Itoa(i)), opts...)
		}(i)
	}
	wg.Wait()
	for i := 0; i < calls; i++ {
		require.NoError(t, errs[i], "call %d", i)
		want := strconv.Itoa(i) + "\n"
		if i%2 == 0 {
			want += strconv.Itoa(i)
		}
		assert.Equal(t, want, outs[i].Stdout, "call %d: %+v", i, outs[i])
		assert.Equal(t, "err "+strconv.Itoa(i)+"\n", outs[i].Stderr, "call %d: %+v", i, outs[i])
		assert.Equal(t, 0, outs[i].ExitCode, "call %d: %+v", i, outs[i])
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		g, fds := runtime.NumGoroutine(), engOpenFDs(t)
		if g <= baseGoroutines && fds <= baseFDs {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("leak: %d goroutines (baseline %d), %d fds (baseline %d)\n%s", g, baseGoroutines, fds, baseFDs, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A workdir that goes away between the call's check and the start is named
// in the error, not taken for a missing program.
func TestStartPlainWorkdirGone(t *testing.T) {
	t.Parallel()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	gone := filepath.Join(t.TempDir(), "gone")
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	_, err = startPlain(&spawnRequest{path: sh, argv: []string{"sh", "-c", "true"}, dir: gone, stdio: [3]*os.File{null, null, null}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workdir")
	assert.Contains(t, err.Error(), gone)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
