//go:build windows

package sandboxexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

const windowsHelperEnv = "SANDBOXEXEC_TEST_WINDOWS_HELPER"

// TestWindowsHelperProcess is not a test: the tree tests run the test binary
// as a helper. "tree" starts a "sleep" grandchild that shares its stdout,
// prints both pids, and sleeps; "sleep" only sleeps; "console" prints the
// pids of the processes attached to its console.
func TestWindowsHelperProcess(t *testing.T) {
	switch os.Getenv(windowsHelperEnv) {
	case "tree":
		grandchild := exec.Command(os.Args[0], "-test.run=^TestWindowsHelperProcess$")
		grandchild.Env = append(os.Environ(), windowsHelperEnv+"=sleep")
		grandchild.Stdout = os.Stdout // holds the call's pipe open
		if err := grandchild.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Printf("pids %d %d\n", os.Getpid(), grandchild.Process.Pid)
		time.Sleep(time.Minute)
		os.Exit(0)
	case "sleep":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "console":
		pids := make([]uint32, 1024)
		n, _, err := procGetConsoleProcessList.Call(uintptr(unsafe.Pointer(&pids[0])), uintptr(len(pids)))
		if n == 0 || n > uintptr(len(pids)) {
			fmt.Fprintln(os.Stderr, "GetConsoleProcessList:", n, err)
			os.Exit(3)
		}
		fmt.Print("console")
		for _, pid := range pids[:n] {
			fmt.Print(" ", pid)
		}
		fmt.Println()
		os.Exit(0)
	}
}

var procGetConsoleProcessList = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleProcessList")

// windowsTreeCommand runs the helper tree under cmd /c.
func windowsTreeCommand(t *testing.T) ([]string, []Option) {
	exe, err := os.Executable()
	require.NoError(t, err)
	env := append(os.Environ(), windowsHelperEnv+"=tree")
	// No ^ or $ anchors: ^ is cmd.exe's escape character.
	return []string{"cmd", "/c", exe, "-test.run=TestWindowsHelperProcess"}, []Option{WithEnv(env)}
}

// requireGone checks that the processes whose pids stdout lists are dead.
func requireGone(t *testing.T, stdout string) {
	t.Helper()
	var pids []uint32
	for _, line := range strings.Split(stdout, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 3 && fields[0] == "pids" {
			for _, f := range fields[1:] {
				pid, err := strconv.ParseUint(f, 10, 32)
				require.NoError(t, err)
				pids = append(pids, uint32(pid))
			}
		}
	}
	require.Len(t, pids, 2, "the helper did not report its pids; stdout %q", stdout)
	for _, pid := range pids {
		h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
		if err != nil {
			continue // no such process any more
		}
		ev, err := windows.WaitForSingleObject(h, 5000)
		var code uint32
		windows.GetExitCodeProcess(h, &code)
		windows.CloseHandle(h)
		require.NoError(t, err)
		assert.Equal(t, uint32(windows.WAIT_OBJECT_0), ev, "process %d outlived the call", pid)
		assert.NotEqual(t, uint32(259), code, "process %d is still active", pid) // STILL_ACTIVE
	}
}

func TestWindowsTimeoutKillsTree(t *testing.T) {
	command, opts := windowsTreeCommand(t)
	timeout := uint64(3000)
	start := time.Now()
	out, err := ProcessExecToolCall(context.Background(),
		ExecParams{Command: command, TimeoutMs: &timeout}, SandboxNone, nil, SandboxPolicy{}, opts...)
	require.NoError(t, err, "stderr: %s", out.Stderr)
	assert.True(t, out.TimedOut)
	assert.Equal(t, TimeoutExitCode, out.ExitCode)
	// The grandchild holds stdout; only its death lets the call return
	// before the minute it sleeps.
	assert.Less(t, time.Since(start), 30*time.Second)
	requireGone(t, out.Stdout)
}

func TestWindowsCancelKillsTree(t *testing.T) {
	command, opts := windowsTreeCommand(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := ProcessExecToolCall(ctx, ExecParams{Command: command}, SandboxNone, nil, SandboxPolicy{}, opts...)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, out.TimedOut)
	requireGone(t, out.Stdout)
}

func TestWindowsExitCode(t *testing.T) {
	out, err := ProcessExecToolCall(context.Background(),
		ExecParams{Command: []string{"cmd", "/c", "echo out& echo err 1>&2& exit 3"}}, SandboxNone, nil, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, 3, out.ExitCode)
	assert.Equal(t, "out\r\n", out.Stdout)
	assert.Equal(t, "err \r\n", out.Stderr)
}

func TestWindowsStdinIsNullDevice(t *testing.T) {
	// findstr reading an empty stdin finds nothing and exits 1 at once.
	timeout := uint64(10_000)
	out, err := ProcessExecToolCall(context.Background(),
		ExecParams{Command: []string{"findstr", "x"}, TimeoutMs: &timeout}, SandboxNone, nil, SandboxPolicy{})
	require.NoError(t, err)
	assert.False(t, out.TimedOut)
	assert.Equal(t, 1, out.ExitCode)
}

func TestWindowsLookPathUsesEnvPath(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "mytool.exe")
	require.NoError(t, os.WriteFile(tool, nil, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir.exe"), 0o755))

	// The variable's name is matched without regard to case.
	for _, name := range []string{"PATH", "Path", "path"} {
		p, err := lookPath("mytool", "", []string{name + "=" + dir})
		require.NoError(t, err, name)
		assert.True(t, strings.EqualFold(tool, p), "%s: got %s", name, p)
	}
	p, err := lookPath("mytool.exe", "", []string{"Path=" + dir})
	require.NoError(t, err)
	assert.True(t, strings.EqualFold(tool, p), "got %s", p)

	// Only the env's PATH is searched, not the host's.
	_, err = lookPath("cmd", "", []string{"Path=" + dir})
	assert.ErrorIs(t, err, exec.ErrNotFound)
	// Relative PATH entries are skipped.
	_, err = lookPath("mytool", "", []string{"Path=.", "PATHEXT=.EXE"})
	assert.ErrorIs(t, err, exec.ErrNotFound)
	// PATHEXT comes from the env too.
	_, err = lookPath("mytool", "", []string{"Path=" + dir, "PATHEXT=.COM"})
	assert.ErrorIs(t, err, exec.ErrNotFound)
	// A directory is not a program.
	_, err = lookPath(filepath.Join(dir, "adir.exe"), "", nil)
	assert.ErrorIs(t, err, os.ErrPermission)
	// A relative name with a separator is resolved against dir and kept.
	p, err = lookPath(`.\mytool`, dir, nil)
	require.NoError(t, err)
	assert.Equal(t, `.\mytool.exe`, p)

	// Without PATH in env, the host's is used.
	p, err = lookPath("cmd", "", []string{"FOO=bar"})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(strings.ToLower(p), `\cmd.exe`), p)
}

func TestWindowsSandboxUnavailable(t *testing.T) {
	assert.Equal(t, SandboxNone, PlatformSandbox())
	marker := filepath.Join(t.TempDir(), "ran")
	for _, st := range []SandboxType{SandboxMacosSeatbelt, SandboxLinuxSeccomp} {
		out, err := ProcessExecToolCall(context.Background(),
			ExecParams{Command: []string{"cmd", "/c", "echo x> " + marker}}, st, nil, SandboxPolicy{})
		assert.True(t, errors.Is(err, ErrSandboxUnavailable), "%v: %v", st, err)
		assert.Equal(t, ExecToolCallOutput{}, out)
		_, statErr := os.Stat(marker)
		assert.ErrorIs(t, statErr, os.ErrNotExist, "%v ran the command", st)
	}
}

// cmd.exe runs a batch file, and parses its command line otherwise than the
// rules Go quotes arguments for: an argument it could read as a command is
// refused, and nothing runs.
func TestWindowsBatchFileArgumentRefused(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "tool.cmd")
	require.NoError(t, os.WriteFile(script, []byte("@echo arg %1\r\n"), 0o755))
	marker := filepath.Join(dir, "ran")

	for _, command := range [][]string{
		{script, "x&echo INJECTED"},
		{script + ".", "x&echo INJECTED"}, // Windows strips the trailing dot
		{script, "x&echo INJECTED> " + marker},
		{"tool", "x&echo INJECTED"}, // found with PATHEXT
	} {
		out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: command}, SandboxNone, nil,
			SandboxPolicy{}, WithEnv(append(os.Environ(), "PATH="+dir)))
		require.Error(t, err, "%q", command)
		assert.Contains(t, err.Error(), "cmd.exe", "%q", command)
		assert.Contains(t, err.Error(), "command argument 1", "%q", command)
		assert.Equal(t, ExecToolCallOutput{}, out, "%q: nothing ran", command)
	}
	_, statErr := os.Stat(marker)
	assert.ErrorIs(t, statErr, os.ErrNotExist, "the injected command ran")

	// Plain arguments still reach the batch file.
	out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{script, "hello"}},
		SandboxNone, nil, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, "arg hello\r\n", out.Stdout)
}

// cmd.exe runs a batch file's command line, whose first word it would look
// up itself, the working directory first: the call names the file it found
// instead. A quoted path with a quoted argument runs too (golang/go#17149).
func TestWindowsBatchFileRunsTheFileFound(t *testing.T) {
	tools := filepath.Join(t.TempDir(), "has space")
	require.NoError(t, os.Mkdir(tools, 0o755))
	script := filepath.Join(tools, "tool.cmd")
	require.NoError(t, os.WriteFile(script, []byte("@echo found [%~1] [%~2]\r\n"), 0o755))
	// What cmd.exe would find first for "tool", from the working directory.
	workdir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(workdir, "tool.bat"), []byte("@echo HIJACKED\r\n"), 0o755))
	env := WithEnv(append(os.Environ(), "PATH="+tools))

	for _, command := range [][]string{
		{"tool", "a b", "c"},
		{script, "a b", "c"},
		{script + ". ", "a b", "c"},
	} {
		out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: command, Workdir: workdir},
			SandboxNone, nil, SandboxPolicy{}, env)
		require.NoError(t, err, "%q", command)
		assert.Equal(t, "found [a b] [c]\r\n", out.Stdout, "%q: stderr %q", command, out.Stderr)
		assert.Equal(t, 0, out.ExitCode, "%q", command)
	}
}

// The command gets a console of its own: on the host's, it could read what
// is typed to the host (CONIN$), and send Ctrl+C to every process attached,
// the host included. (Where the test binary has no console, the check
// holds trivially.)
func TestWindowsConsoleNotShared(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	timeout := uint64(30_000)
	out, err := ProcessExecToolCall(context.Background(),
		ExecParams{Command: []string{exe, "-test.run=^TestWindowsHelperProcess$"}, TimeoutMs: &timeout},
		SandboxNone, nil, SandboxPolicy{}, WithEnv(append(os.Environ(), windowsHelperEnv+"=console")))
	require.NoError(t, err)
	require.Equal(t, 0, out.ExitCode, "stderr: %s", out.Stderr)
	fields := strings.Fields(out.Stdout)
	require.NotEmpty(t, fields)
	require.Equal(t, "console", fields[0], "stdout %q", out.Stdout)
	host := strconv.Itoa(os.Getpid())
	assert.NotContains(t, fields[1:], host, "the command shares the host's console")
	assert.NotEmpty(t, fields[1:], "the command has no console")
}
