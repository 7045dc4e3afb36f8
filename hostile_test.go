//go:build linux

package sandboxexec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runHostile is engRun that fails the test when the call hung: every
// hostile input must come back well within the engine tests' call limit.
func runHostile(t *testing.T, p ExecParams, opts ...Option) (ExecToolCallOutput, time.Duration, error) {
	t.Helper()
	out, elapsed, err := engRun(t, p, opts...)
	require.Less(t, elapsed, engCallLimit/2, "the call must not hang")
	return out, elapsed, err
}

func sh(script string, args ...string) []string { return engSh(script, args...).Command }

// TestHostileInputs feeds ProcessExecToolCall inputs that are malformed or
// meant to break the engine. Each must end in a clear error or a documented
// result, promptly.
func TestHostileInputs(t *testing.T) {
	fileAsDir := filepath.Join(t.TempDir(), "plain-file")
	require.NoError(t, os.WriteFile(fileAsDir, []byte("x"), 0o644))

	manyArgs := make([]string, 200_001)
	manyArgs[0] = "true"
	for i := 1; i < len(manyArgs); i++ {
		manyArgs[i] = "argument-" + strconv.Itoa(i)
	}

	tests := []struct {
		name   string
		params ExecParams
		opts   []Option
		// errIs, when set, is what the error must wrap; errHas is text the
		// message must contain. With neither, the call must succeed.
		errIs  error
		errHas []string
		check  func(t *testing.T, out ExecToolCallOutput)
	}{
		{
			name:   "NUL in program name",
			params: ExecParams{Command: []string{"tr\x00ue"}},
			errHas: []string{"argument 0", "NUL"},
		},
		{
			name:   "NUL in argument",
			params: ExecParams{Command: []string{"echo", "ok", "a\x00b"}},
			errHas: []string{"argument 2", "NUL"},
		},
		{
			name:   "NUL in workdir",
			params: ExecParams{Command: []string{"true"}, Workdir: "/tmp\x00/x"},
			errHas: []string{"workdir", "NUL"},
		},
		{
			name:   "NUL in environment value",
			params: ExecParams{Command: []string{"true"}},
			opts:   []Option{WithEnv([]string{"PATH=/usr/bin:/bin", "API_CREDENTIAL=hunter2\x00tail"})},
			errHas: []string{"environment", "API_CREDENTIAL", "NUL"},
			check:  nil,
		},
		{
			name:   "NUL in environment name",
			params: ExecParams{Command: []string{"true"}},
			opts:   []Option{WithEnv([]string{"BAD\x00NAME=1"})},
			errHas: []string{"environment", "NUL"},
		},
		{
			name:   "empty program name",
			params: ExecParams{Command: []string{"", "arg"}},
			errIs:  ErrEmptyCommand,
		},
		{
			name:   "one 3 MiB argument",
			params: ExecParams{Command: []string{"true", strings.Repeat("a", 3<<20)}},
			errIs:  syscall.E2BIG,
			errHas: []string{"argument list too long", "too large", "args: 2,", "longest string 3145728 bytes"},
		},
		{
			name:   "200k arguments",
			params: ExecParams{Command: manyArgs},
			errIs:  syscall.E2BIG,
			errHas: []string{"argument list too long", "too large", "args: 200001,"},
		},
		{
			name:   "3 MiB environment",
			params: ExecParams{Command: []string{"true"}},
			opts:   []Option{WithEnv([]string{"PATH=/usr/bin:/bin", "BIG=" + strings.Repeat("b", 3<<20)})},
			errIs:  syscall.E2BIG,
			errHas: []string{"environment", "too large"},
		},
		{
			name:   "workdir is a file",
			params: ExecParams{Command: []string{"true"}, Workdir: fileAsDir},
			errIs:  syscall.ENOTDIR,
			errHas: []string{"workdir", fileAsDir},
		},
		{
			name:   "workdir does not exist",
			params: ExecParams{Command: []string{"true"}, Workdir: filepath.Join(t.TempDir(), "missing")},
			errIs:  fs.ErrNotExist,
			errHas: []string{"workdir", "missing"},
		},
		{
			name:   "stdout closed early, command runs on",
			params: ExecParams{Command: sh(`exec >&-; sleep 0.3; echo done >&2`)},
			check: func(t *testing.T, out ExecToolCallOutput) {
				assert.Equal(t, 0, out.ExitCode)
				assert.Empty(t, out.Stdout)
				assert.Equal(t, "done\n", out.Stderr)
				assert.GreaterOrEqual(t, out.Duration, 300*time.Millisecond, "the call waits for the exit, not the EOF")
			},
		},
		{
			name:   "both streams closed early, command runs on",
			params: ExecParams{Command: sh(`echo out; echo err >&2; exec >&- 2>&-; sleep 0.3; exit 5`)},
			check: func(t *testing.T, out ExecToolCallOutput) {
				assert.Equal(t, 5, out.ExitCode)
				assert.Equal(t, "out\n", out.Stdout)
				assert.Equal(t, "err\n", out.Stderr)
				assert.GreaterOrEqual(t, out.Duration, 300*time.Millisecond, "the call waits for the exit, not the EOFs")
			},
		},
		{
			name:   "both streams flooded at once",
			params: ExecParams{Command: sh(`head -c 5000000 /dev/zero & head -c 5000000 /dev/zero >&2; wait`)},
			check: func(t *testing.T, out ExecToolCallOutput) {
				assert.Equal(t, 0, out.ExitCode)
				requireZeroFloods(t, out, 5_000_000)
			},
		},
		{
			name:   "binary output",
			params: ExecParams{Command: []string{"head", "-c", "300000", "/dev/urandom"}},
			check: func(t *testing.T, out ExecToolCallOutput) {
				assert.Equal(t, 0, out.ExitCode)
				assert.Equal(t, int64(300_000), out.StdoutBytes)
				assert.True(t, out.StdoutTruncated)
				assert.True(t, utf8.ValidString(out.Stdout), "stdout is valid UTF-8")
				_, err := json.Marshal(out)
				assert.NoError(t, err)
			},
		},
		{
			name:   "output without a trailing newline",
			params: ExecParams{Command: []string{"printf", "no newline"}},
			check: func(t *testing.T, out ExecToolCallOutput) {
				assert.Equal(t, "no newline", out.Stdout)
				assert.Equal(t, int64(len("no newline")), out.StdoutBytes)
				assert.False(t, out.StdoutTruncated)
			},
		},
		{
			name:   "no output at all",
			params: ExecParams{Command: []string{"true"}},
			check: func(t *testing.T, out ExecToolCallOutput) {
				assert.Equal(t, ExecToolCallOutput{Duration: out.Duration}, out)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runHostile(t, tc.params, tc.opts...)
			if tc.errIs == nil && tc.errHas == nil {
				require.NoError(t, err)
				tc.check(t, out)
				return
			}
			require.Error(t, err)
			t.Logf("error: %v", err)
			if tc.errIs != nil {
				assert.ErrorIs(t, err, tc.errIs)
			}
			for _, s := range tc.errHas {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, err.Error(), "hunter2", "an error must not echo an environment value")
			assert.Less(t, len(err.Error()), 1000, "the error stays short whatever the input size")
			assert.Equal(t, ExecToolCallOutput{}, out, "nothing ran")
		})
	}
}

func TestHostileTimeoutBounds(t *testing.T) {
	zero, maxMs := uint64(0), uint64(math.MaxUint64)
	justFits := uint64(math.MaxInt64 / int64(time.Millisecond))
	tooBig := justFits + 1

	d, ok := ExecParams{}.timeout()
	assert.True(t, ok)
	assert.Equal(t, DefaultTimeout, d, "no timeout means the default")

	d, ok = ExecParams{TimeoutMs: &zero}.timeout()
	assert.True(t, ok)
	assert.Equal(t, DefaultTimeout, d, "0 means the default")

	d, ok = ExecParams{TimeoutMs: &justFits}.timeout()
	assert.True(t, ok)
	assert.Equal(t, time.Duration(justFits)*time.Millisecond, d)
	assert.Positive(t, d, "no overflow at the edge")

	for _, ms := range []uint64{tooBig, maxMs} {
		ms := ms
		_, ok = ExecParams{TimeoutMs: &ms}.timeout()
		assert.False(t, ok, "%d ms is no timeout, not an overflowed one", ms)
	}

	out, elapsed, err := runHostile(t, ExecParams{Command: []string{"echo", "hi"}, TimeoutMs: &maxMs})
	require.NoError(t, err)
	assert.Equal(t, "hi\n", out.Stdout)
	assert.False(t, out.TimedOut)
	assert.Equal(t, 0, out.ExitCode)
	assert.Less(t, elapsed, 5*time.Second)
}

func TestHostileParamsJSON(t *testing.T) {
	bad := []struct {
		name, json, field string
	}{
		{"float timeout", `{"command":["true"],"timeout":1.5}`, "timeout"},
		{"whole float timeout", `{"command":["true"],"timeout":500.0}`, "timeout"},
		{"string timeout", `{"command":["true"],"timeout":"500"}`, "timeout"},
		{"empty string timeout", `{"command":["true"],"timeout":""}`, "timeout"},
		{"negative timeout", `{"command":["true"],"timeout":-1}`, "timeout"},
		{"exponent timeout", `{"command":["true"],"timeout":1e3}`, "timeout"},
		{"huge timeout", `{"command":["true"],"timeout":18446744073709551616}`, "timeout"},
		{"very huge timeout", `{"command":["true"],"timeout":1` + strings.Repeat("0", 100_000) + `}`, "timeout"},
		{"very long string timeout", `{"command":["true"],"timeout":"` + strings.Repeat("9", 100_000) + `"}`, "timeout"},
		{"bool timeout", `{"command":["true"],"timeout":true}`, "timeout"},
		{"object timeout", `{"command":["true"],"timeout":{}}`, "timeout"},
		{"string command", `{"command":"ls -l"}`, "command"},
		{"number in command", `{"command":["ls",1]}`, "command"},
		{"nested command", `{"command":[["ls"]]}`, "command"},
		{"object command", `{"command":{"0":"ls"}}`, "command"},
		{"number workdir", `{"command":["ls"],"workdir":5}`, "workdir"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			var p ExecParams
			err := json.Unmarshal([]byte(tc.json), &p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"`+tc.field+`"`)
			assert.Less(t, len(err.Error()), 300, "the error quotes at most a short excerpt")
		})
	}

	t.Run("null command", func(t *testing.T) {
		var p ExecParams
		require.NoError(t, json.Unmarshal([]byte(`{"command":null,"timeout":null}`), &p))
		assert.Nil(t, p.Command)
		assert.Nil(t, p.TimeoutMs)
		_, _, err := runHostile(t, p)
		assert.ErrorIs(t, err, ErrEmptyCommand)
	})
	t.Run("missing command", func(t *testing.T) {
		var p ExecParams
		require.NoError(t, json.Unmarshal([]byte(`{}`), &p))
		_, _, err := runHostile(t, p)
		assert.ErrorIs(t, err, ErrEmptyCommand)
	})
	t.Run("null program name", func(t *testing.T) {
		var p ExecParams
		err := json.Unmarshal([]byte(`{"command":[null,"x"]}`), &p)
		assert.ErrorContains(t, err, "element 0 is null")
	})
	t.Run("largest timeout", func(t *testing.T) {
		var p ExecParams
		require.NoError(t, json.Unmarshal([]byte(`{"command":["true"],"timeout":18446744073709551615}`), &p))
		require.NotNil(t, p.TimeoutMs)
		assert.Equal(t, uint64(math.MaxUint64), *p.TimeoutMs)
		_, ok := p.timeout()
		assert.False(t, ok)
	})
	t.Run("NUL escapes decode and are refused at run time", func(t *testing.T) {
		var p ExecParams
		require.NoError(t, json.Unmarshal([]byte(`{"command":["echo","a\u0000b"]}`), &p))
		_, _, err := runHostile(t, p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "NUL")
	})
}

// TestHostileEscapedProcessGroup: a command that puts a process outside its
// process group (setsid, setpgid) escapes the plain runner's kill. That is a
// documented limit; what the engine must still do is return promptly, once
// the drain grace is over, with the output read so far.
func TestHostileEscapedProcessGroup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
	}{
		// Each escapes, then creates the flag file $2; the command waits
		// for the flag so that its exit cannot kill the group before the
		// escape. $1 tags the escaped process for the cleanup.
		{"setsid", `setsid sh -c ': >"$1"; exec sleep "$0"' "$1" "$2" &`},
		{"setpgid", `perl -e 'setpgrp(0, 0); open(F, ">", $ARGV[1]) && close(F); sleep 60' "$1" "$2" &`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tag := fmt.Sprintf("61.%d%03d", os.Getpid(), time.Now().Nanosecond()%1000)
			t.Cleanup(func() { killByArg(t, tag) })

			flag := filepath.Join(t.TempDir(), "escaped")
			script := tc.script + ` while [ ! -e "$2" ]; do sleep 0.01; done; echo started`
			out, elapsed, err := runHostile(t, ExecParams{Command: sh(script, tag, flag)})
			require.NoError(t, err)
			assert.Equal(t, "started\n", out.Stdout)
			assert.Equal(t, 0, out.ExitCode)
			assert.GreaterOrEqual(t, elapsed, drainGrace, "the escaped process holds the pipes until the grace is over")
			assert.Less(t, elapsed, drainGrace+2*time.Second, "returns within the drain grace and some slack")
			assert.Eventually(t, func() bool { return len(pidsWithArg(tag)) > 0 }, 2*time.Second, 20*time.Millisecond,
				"the escaped process is still running (else this test tests nothing)")
		})
	}
}

// pidsWithArg lists the processes that have arg among their arguments.
func pidsWithArg(arg string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(cmdline, []byte{0}) {
			if string(a) == arg {
				pid, _ := strconv.Atoi(filepath.Base(d))
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func killByArg(t *testing.T, arg string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := pidsWithArg(arg)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes %v with argument %s survive SIGKILL", pids, arg)
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// engReaped waits a little for pid to be reaped (gone from /proc, not even
// a zombie) and fails if it is not.
func engReaped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d was not reaped", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hostilePython is the system's python3, not a version manager's shim (a
// shell script, slow to start, that would itself run under a sandbox), or
// skips the test.
func hostilePython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return p
}

// engReadPid reads the pid a command wrote to file.
func engReadPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// A command that has its parent, the host, trace it (PTRACE_TRACEME) and
// then stops is not taken for ended: it is waited for until its timeout
// kills it, and reaped.
func TestHostileSelfTracedCommand(t *testing.T) {
	t.Parallel()
	python := hostilePython(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `import ctypes, os, signal, sys
open(sys.argv[1], "w").write(str(os.getpid()))
ctypes.CDLL(None, use_errno=True).ptrace(0, 0, None, None)  # PTRACE_TRACEME
os.kill(os.getpid(), signal.SIGSTOP)
print("resumed")`
	// Long enough for python to start on a loaded machine (the race
	// detector, other tests): 700 ms was not (it timed out before it wrote
	// its pid).
	out, elapsed, err := runHostile(t, ExecParams{Command: []string{python, "-c", script, pidFile}}.withTimeoutMs(3000))
	require.NoError(t, err)
	assert.True(t, out.TimedOut, "exit %d, stdout %q, after %v", out.ExitCode, out.Stdout, elapsed)
	assert.GreaterOrEqual(t, elapsed, 3000*time.Millisecond)
	engReaped(t, engReadPid(t, pidFile))
}

type panickingWriter struct{}

func (panickingWriter) Write([]byte) (int, error) { panic("live writer panicked") }

// A live writer that panics is dropped, and its panic raised again once the
// command has ended and been reaped: a caller that recovers (as an HTTP
// server does) is left with neither the command nor its zombie.
func TestHostileLiveWriterPanics(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	func() {
		defer func() {
			assert.Equal(t, "live writer panicked", recover())
		}()
		engRun(t, engSh(`echo $$ >"$1"; echo out; sleep 0.3; echo more`, pidFile), WithLiveOutput(panickingWriter{}, nil))
		t.Error("the call returned")
	}()
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the command ran on")
	engReaped(t, engReadPid(t, pidFile))
}

type panickingReader struct{}

func (panickingReader) Read([]byte) (int, error) { panic("stdin reader panicked") }

// A stdin reader that panics (a typed nil, say) ends the command's input,
// and its panic is raised in the caller once the command has ended and been
// reaped, not on the library's goroutine, where no caller could recover it.
func TestHostileStdinReaderPanics(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]io.Reader{
		"panics":    panickingReader{},
		"typed nil": (*strings.Reader)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			var recovered any
			func() {
				defer func() { recovered = recover() }()
				engRun(t, engSh(`echo $$ >"$1"; cat; echo "read EOF"`, pidFile), WithStdin(r))
				t.Error("the call returned")
			}()
			require.NotNil(t, recovered)
			if name == "panics" {
				assert.Equal(t, "stdin reader panicked", recovered)
			} else {
				assert.Implements(t, (*runtime.Error)(nil), recovered)
			}
			engReaped(t, engReadPid(t, pidFile))
		})
	}
}

type nilPanickingReader struct{}

func (nilPanickingReader) Read([]byte) (int, error) { panic(nil) }

// panic(nil) in a stdin reader is raised in the caller too, also where
// GODEBUG=panicnil=1 makes recover return nil for it (the default for a main
// module whose go line is older than 1.21): the test runs itself again so.
func TestHostileStdinReaderPanicsNil(t *testing.T) {
	if os.Getenv("GODEBUG") != "panicnil=1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHostileStdinReaderPanicsNil$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "GODEBUG=panicnil=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestHostileStdinReaderPanicsNil", "%s", out)
		return
	}
	returned := false
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		engRun(t, engSh(`cat; echo "read EOF"`), WithStdin(nilPanickingReader{}))
		returned = true
	}()
	assert.False(t, returned, "the call returned")
	assert.IsType(t, new(runtime.PanicNilError), recovered)
}

// A lock the command takes on its stdin, the null device, ends with the
// call: the host and the next call can take it.
func TestHostileStdinLockEndsWithCall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) (util-linux) not installed")
	}
	out, _, err := runHostile(t, engSh(`flock -x 0 && echo locked`))
	require.NoError(t, err)
	require.Equal(t, "locked\n", out.Stdout)
	require.NoError(t, exec.Command("flock", "-n", "-x", os.DevNull, "true").Run(), "the host takes the lock")
	out, _, err = runHostile(t, engSh(`flock -n -x 0 && echo locked again`))
	require.NoError(t, err)
	assert.Equal(t, "locked again\n", out.Stdout)
}

type goexitWriter struct{}

func (goexitWriter) Write([]byte) (int, error) { runtime.Goexit(); return 0, nil }

// A live writer that calls runtime.Goexit (a test's t.FailNow) ends the
// calling goroutine, as it would have without the library, but only once
// the command has ended and been reaped: where the engine polls, the
// command is killed on the way out; elsewhere the stream is read on without
// the writer until the command ends.
func TestHostileLiveWriterGoexits(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	returned := make(chan bool, 1)
	start := time.Now()
	go func() {
		ok := false
		defer func() { returned <- ok }()
		engRun(t, engSh(`echo $$ >"$1"; head -c 300000 /dev/zero; sleep 0.2`, pidFile), WithLiveOutput(goexitWriter{}, nil))
		ok = true
	}()
	select {
	case ok := <-returned:
		assert.False(t, ok, "the call returned")
	case <-time.After(engCallLimit):
		t.Fatal("the call hung")
	}
	assert.Less(t, time.Since(start), 5*time.Second, "the stream was read on")
	engReaped(t, engReadPid(t, pidFile))
}

// runEscapedTracer runs a command that has a process of its own, escaped
// from its group (setsid), trace it with the given PTRACE_SEIZE options and
// sleep, and then exits. It returns the call's result, the command's pid and
// the tracer's; it skips where ptrace is refused, and kills the tracer when
// the test ends.
func runEscapedTracer(t *testing.T, options int, timeoutMs uint64) (out ExecToolCallOutput, elapsed time.Duration, err error, pid, tracer int) {
	t.Helper()
	if !pidfdUsable() {
		t.Skip("without pidfds the engine waits in wait4, which a tracer holds (see SECURITY.md)")
	}
	python := hostilePython(t)
	dir := t.TempDir()
	script := `import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
parent = os.getpid()
open(sys.argv[1] + "/pid", "w").write(str(parent))
if os.fork() == 0:
    os.setsid()
    ok = libc.ptrace(0x4206, parent, None, int(sys.argv[2])) == 0  # PTRACE_SEIZE
    open(sys.argv[1] + "/tracer", "w").write("%d %s" % (os.getpid(), ok))
    time.sleep(30)
    os._exit(0)
while not os.path.exists(sys.argv[1] + "/tracer"):
    time.sleep(0.01)
time.sleep(0.1)
print("exiting")`
	p := ExecParams{Command: []string{python, "-c", script, dir, strconv.Itoa(options)}}.withTimeoutMs(timeoutMs)
	out, elapsed, err = runHostile(t, p)
	b, rerr := os.ReadFile(filepath.Join(dir, "tracer"))
	require.NoError(t, rerr)
	var attached bool
	_, serr := fmt.Sscanf(string(b), "%d %t", &tracer, &attached)
	require.NoError(t, serr)
	t.Cleanup(func() { syscall.Kill(tracer, syscall.SIGKILL) })
	if !attached {
		t.Skip("ptrace refused here (Yama?)")
	}
	return out, elapsed, err, engReadPid(t, filepath.Join(dir, "pid")), tracer
}

// A command's zombie that a process outside the call traces is not the
// host's to reap until the tracer lets go: the call waits the drain grace
// for that, not the tracer's pleasure, and says why it has no exit status.
// The zombie is reaped once the tracer is gone.
func TestHostileEscapedTracerHoldsZombie(t *testing.T) {
	t.Parallel()
	out, elapsed, err, pid, tracer := runEscapedTracer(t, 0, 20_000)
	assert.Equal(t, "exiting\n", out.Stdout)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("process %d traces it", tracer))
	assert.Less(t, elapsed, 5*time.Second, "the call waits the grace, not the tracer")
	require.NoError(t, syscall.Kill(tracer, syscall.SIGKILL))
	engReaped(t, pid)
}

// A tracer that traces the command's exit (PTRACE_O_TRACEEXIT) holds it in
// that exit, where SIGKILL no longer reaches it. The timeout's kill still
// ends the call, a drain grace later, with TimedOut and an error that says
// the command, alive, is not reaped.
func TestHostileTracerHoldsExitPastTimeout(t *testing.T) {
	t.Parallel()
	const traceExit = 0x40 // PTRACE_O_TRACEEXIT
	out, elapsed, err, pid, tracer := runEscapedTracer(t, traceExit, 1000)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("process %d traces it", tracer))
	assert.True(t, out.TimedOut)
	assert.Less(t, elapsed, 3*time.Second, "the call waits a grace past the kill, not the tracer")
	require.NoError(t, syscall.Kill(tracer, syscall.SIGKILL))
	engReaped(t, pid)
}
