//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/sandboxexec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
	return result{code, stdout.String(), stderr.String(), time.Since(start)}
}

func TestRunCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     string
		stderrHas  string
		stderrNone bool
	}{
		{name: "echo", args: []string{"--", "echo", "hello"}, stdout: "hello\n", stderrNone: true},
		{name: "no --", args: []string{"echo", "-n", "hi"}, stdout: "hi", stderrNone: true},
		{name: "exit code", args: []string{"--", "sh", "-c", "echo out; echo oops >&2; exit 3"},
			code: 3, stdout: "out\n", stderrHas: "oops\n"},
		{name: "killed by a signal", args: []string{"--", "sh", "-c", "kill -TERM $$"}, code: 143},
		{name: "stdin passed through", stdin: "abc", args: []string{"--", "cat"}, stdout: "abc"},
		{name: "timeout", args: []string{"-timeout", "200ms", "--", "sh", "-c", "echo started; sleep 30"},
			code: 124, stdout: "started\n", stderrHas: "timed out"},
		{name: "program not found", args: []string{"--", "sandboxrun-no-such-program"},
			code: exitFailure, stderrHas: "executable file not found"},
		{name: "no command", args: []string{"-sandbox", "none"}, code: exitFailure, stderrHas: "usage:"},
		{name: "bad sandbox", args: []string{"-sandbox", "jail", "--", "true"}, code: exitFailure, stderrHas: `-sandbox "jail"`},
		{name: "bad flag", args: []string{"-nope", "--", "true"}, code: exitFailure, stderrHas: "flag provided but not defined"},
		{name: "negative timeout", args: []string{"-timeout", "-1s", "--", "true"}, code: exitFailure, stderrHas: "negative"},
		{name: "params and command", args: []string{"-params", "-", "--", "true"}, code: exitFailure, stderrHas: "not both"},
		{name: "bad params", stdin: `{"command":["true"],"timeout":"soon"}`, args: []string{"-params", "-"},
			code: exitFailure, stderrHas: `"timeout"`},
		{name: "missing params file", args: []string{"-params", "/nonexistent/params.json"},
			code: exitFailure, stderrHas: "/nonexistent/params.json"},
		{name: "help", args: []string{"-h"}, code: 0, stderrHas: "usage:"},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, tc.stdin, append([]string{"-sandbox", "none"}, tc.args...)...)
			assert.Equal(t, tc.code, r.code, "stderr: %s", r.stderr)
			if tc.stdout != "" || tc.code != exitFailure {
				assert.Equal(t, tc.stdout, r.stdout)
			}
			if tc.stderrHas != "" {
				assert.Contains(t, r.stderr, tc.stderrHas)
			}
			if tc.stderrNone {
				assert.Empty(t, r.stderr)
			}
			assert.Less(t, r.elapsed, 5*time.Second)
		})
	}
}

func TestRunJSON(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "-sandbox", "none", "-json", "--", "sh", "-c", "echo hi; echo err >&2; exit 2")
	require.Equal(t, 2, r.code, "stderr: %s", r.stderr)
	assert.Empty(t, r.stderr, "with -json the output goes into the JSON only")
	assert.Contains(t, r.stdout, `"duration_ms":`)
	assert.Contains(t, r.stdout, `"exit_code":2`)
	var out sandboxexec.ExecToolCallOutput
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, 2, out.ExitCode)
	assert.Equal(t, "hi\n", out.Stdout)
	assert.Equal(t, "err\n", out.Stderr)
	assert.False(t, out.TimedOut)

	r = runCLI(t, "", "-sandbox", "none", "-json", "-timeout", "100ms", "--", "sleep", "30")
	require.Equal(t, 124, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.True(t, out.TimedOut)
	assert.Equal(t, 124, out.ExitCode)
}

func TestRunParams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("from stdin", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, `{"command":["sh","-c","echo from-params; cat"],"timeout":5000,"extra":1}`,
			"-sandbox", "none", "-params", "-")
		require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
		assert.Equal(t, "from-params\n", r.stdout, "the command must not see the tool call on its stdin")
	})
	t.Run("from a file, with its workdir", func(t *testing.T) {
		t.Parallel()
		call, err := json.Marshal(map[string]any{"command": []string{"pwd"}, "workdir": dir})
		require.NoError(t, err)
		file := filepath.Join(t.TempDir(), "call.json")
		require.NoError(t, os.WriteFile(file, call, 0o644))
		r := runCLI(t, "", "-sandbox", "none", "-json", "-params", file)
		require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
		var out sandboxexec.ExecToolCallOutput
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
		assert.Equal(t, dir+"\n", out.Stdout)
	})
	t.Run("the tool call's timeout, and -timeout overriding it", func(t *testing.T) {
		t.Parallel()
		call := `{"command":["sleep","30"],"timeout":100}`
		r := runCLI(t, call, "-sandbox", "none", "-params", "-")
		assert.Equal(t, 124, r.code)
		assert.Less(t, r.elapsed, 2*time.Second)

		call = `{"command":["sh","-c","sleep 0.3; echo done"],"timeout":100}`
		r = runCLI(t, call, "-sandbox", "none", "-timeout", "5s", "-params", "-")
		assert.Equal(t, 0, r.code)
		assert.Equal(t, "done\n", r.stdout)
	})
}

func TestRunWorkdirAndRoots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// -w and -net are accepted and, with -sandbox none, change nothing.
	r := runCLI(t, "", "-sandbox", "none", "-C", dir, "-w", dir, "-w", ".", "-net", "--", "pwd")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	assert.Equal(t, dir+"\n", r.stdout)

	// A root that does not exist is skipped, with a word.
	r = runCLI(t, "", "-sandbox", "none", "-w", filepath.Join(dir, "typo"), "--", "true")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stderr, "typo does not exist")

	r = runCLI(t, "", "-sandbox", "none", "-C", filepath.Join(dir, "missing"), "--", "pwd")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "workdir")
}

// A root is taken as written: "dir/.." is not dir's parent, nor "" the
// working directory.
func TestRunRootWithDotDot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for root, msg := range map[string]string{filepath.Join(dir, "sub") + "/..": `without ".."`, "../x": `without ".."`, "": "empty"} {
		r := runCLI(t, "", "-w", root, "--", "true")
		assert.Equal(t, exitFailure, r.code, "-w %q", root)
		assert.Contains(t, r.stderr, msg, "-w %q", root)
	}
}

// SIGINT or SIGTERM kills the command, and sandboxrun exits as a shell
// reports an interrupted command.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	for sig, code := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(200*time.Millisecond, func() { cancel(stoppedBy{sig}) })
		var stdout, stderr bytes.Buffer
		start := time.Now()
		got := run(ctx, []string{"-sandbox", "none", "--", "sh", "-c", "echo started; sleep 30"}, nil, &stdout, &stderr)
		assert.Equal(t, code, got, "%v: %s", sig, stderr.String())
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.Equal(t, "started\n", stdout.String())
		assert.Contains(t, stderr.String(), "the command was killed")
	}

	// With -json, what the command printed before it was killed is still
	// printed.
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(stoppedBy{syscall.SIGTERM}) })
	var stdout, stderr bytes.Buffer
	got := run(ctx, []string{"-sandbox", "none", "-json", "--", "sh", "-c", "echo started; sleep 30"}, nil, &stdout, &stderr)
	assert.Equal(t, 143, got, stderr.String())
	var out sandboxexec.ExecToolCallOutput
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "stdout: %q", stdout.String())
	assert.Equal(t, "started\n", out.Stdout)
}

func TestParseSandbox(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]sandboxexec.SandboxType{
		"auto":     sandboxexec.PlatformSandbox(),
		"none":     sandboxexec.SandboxNone,
		"seatbelt": sandboxexec.SandboxMacosSeatbelt,
		"linux":    sandboxexec.SandboxLinuxSeccomp,
	} {
		got, err := parseSandbox(name)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
	_, err := parseSandbox("")
	assert.Error(t, err)
}

// The demo's denied write, as a test: the command's own error, its exit
// code, and a line that names the sandbox.
func TestRunDeniedWrite(t *testing.T) {
	if s := sandboxexec.ProbeSandbox(); !s.Available {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("no sandbox here: %s", s.Detail)
		}
		t.Skipf("no sandbox here: %s", s.Detail)
	}
	root, outside := t.TempDir(), t.TempDir()
	r := runCLI(t, "", "-sandbox", "auto", "-w", root, "--",
		"sh", "-c", "echo in > "+filepath.Join(root, "f")+" && echo out > "+filepath.Join(outside, "f"))
	assert.Equal(t, 2, r.code, "stderr: %s", r.stderr)
	assert.Regexp(t, "Permission denied|Operation not permitted|Read-only file system", r.stderr) // Landlock, Seatbelt, a read-only mount
	assert.Regexp(t, `the command likely failed because the \S+ sandbox refused it an action`, r.stderr)
	assert.FileExists(t, filepath.Join(root, "f"))
	assert.NoFileExists(t, filepath.Join(outside, "f"))
}

// recordCall is an execFunc that keeps what it was given and returns out.
type recordCall struct {
	roots  []string
	policy sandboxexec.SandboxPolicy
	calls  int
	out    sandboxexec.ExecToolCallOutput
}

func (r *recordCall) exec(_ context.Context, _ sandboxexec.ExecParams, _ sandboxexec.SandboxType, roots []string,
	policy sandboxexec.SandboxPolicy, _ ...sandboxexec.Option) (sandboxexec.ExecToolCallOutput, error) {
	r.calls++
	r.roots, r.policy = roots, policy
	return r.out, nil
}

// The policy each set of flags gives the library.
func TestRunPolicyFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, nil, 0o600))
	cwd, err := os.Getwd()
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		args   []string
		want   sandboxexec.SandboxPolicy
		stderr string
	}{
		{name: "none", want: sandboxexec.SandboxPolicy{}},
		{name: "net", args: []string{"-net"}, want: sandboxexec.SandboxPolicy{NetworkAccess: true}},
		{name: "ro once", args: []string{"-ro", ".git"},
			want: sandboxexec.SandboxPolicy{ReadOnlySubpaths: []string{".git"}}},
		{name: "ro repeated", args: []string{"-ro", ".git", "-ro", ".env"},
			want: sandboxexec.SandboxPolicy{ReadOnlySubpaths: []string{".git", ".env"}}},
		{name: "ro empty means none", args: []string{"-ro", ""},
			want: sandboxexec.SandboxPolicy{ReadOnlySubpaths: []string{}}},
		{name: "deny-read", args: []string{"-deny-read", secret, "-deny-read", dir},
			want: sandboxexec.SandboxPolicy{DenyRead: []string{secret, dir}}},
		{name: "deny-read relative", args: []string{"-deny-read", "main.go"},
			want: sandboxexec.SandboxPolicy{DenyRead: []string{filepath.Join(cwd, "main.go")}}},
		{name: "deny-read missing", args: []string{"-deny-read", filepath.Join(dir, "typo")},
			want:   sandboxexec.SandboxPolicy{DenyRead: []string{filepath.Join(dir, "typo")}},
			stderr: "typo does not exist: nothing to deny"},
		{name: "allow-domain", args: []string{"-allow-domain", "example.com", "-allow-domain", "*.golang.org"},
			want: sandboxexec.SandboxPolicy{AllowedDomains: []string{"example.com", "*.golang.org"}}},
		{name: "all", args: []string{"-ro", ".hg", "-deny-read", secret, "-allow-domain", "proxy.golang.org"},
			want: sandboxexec.SandboxPolicy{ReadOnlySubpaths: []string{".hg"}, DenyRead: []string{secret},
				AllowedDomains: []string{"proxy.golang.org"}}},
	} {
		var rec recordCall
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), rec.exec, append(tc.args, "--", "true"), nil, &stdout, &stderr)
		require.Equal(t, 0, code, "%s: %s", tc.name, stderr.String())
		require.Equal(t, 1, rec.calls, tc.name)
		assert.Equal(t, tc.want, rec.policy, tc.name)
		if tc.stderr != "" {
			assert.Contains(t, stderr.String(), tc.stderr, tc.name)
		} else {
			assert.Empty(t, stderr.String(), tc.name)
		}
	}
}

// Flags that no policy can come from are refused, with nothing run.
func TestRunPolicyFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-ro", "", "-ro", ".git"}, "-ro ''"},
		{[]string{"-ro", ".git", "-ro", ""}, "-ro ''"},
		{[]string{"-deny-read", ""}, "-deny-read: empty path"},
		{[]string{"-deny-read", "a/../b"}, `without ".."`},
	} {
		var rec recordCall
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), rec.exec, append(tc.args, "--", "true"), nil, &stdout, &stderr)
		assert.Equal(t, exitFailure, code, "%q", tc.args)
		assert.Contains(t, stderr.String(), tc.want, "%q", tc.args)
		assert.Equal(t, 0, rec.calls, "%q ran the command", tc.args)
	}
	// The library's own checks reach the user as errors too.
	r := runCLI(t, "", "-sandbox", "none", "-ro", "a/b", "--", "true")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, `"a/b"`)
	r = runCLI(t, "", "-sandbox", "none", "-allow-domain", "example.com", "--", "true")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "AllowedDomains")
}

// Each destination the proxy refused is a line on stderr, in -json mode
// too, and the command's exit code stays sandboxrun's.
func TestRunDeniedHosts(t *testing.T) {
	t.Parallel()
	for _, jsonOut := range []bool{false, true} {
		rec := recordCall{out: sandboxexec.ExecToolCallOutput{ExitCode: 6,
			DeniedHosts: []string{"evil.example:443", "127.0.0.1:80"}}}
		args := []string{"-allow-domain", "example.com", "--", "curl", "https://evil.example"}
		if jsonOut {
			args = append([]string{"-json"}, args...)
		}
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), rec.exec, args, nil, &stdout, &stderr)
		assert.Equal(t, 6, code)
		assert.Equal(t, "sandboxrun: proxy refused evil.example:443\nsandboxrun: proxy refused 127.0.0.1:80\n", stderr.String())
		if jsonOut {
			assert.Contains(t, stdout.String(), `"denied_hosts":["evil.example:443","127.0.0.1:80"]`)
		}
	}
}
