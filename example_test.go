//go:build unix

package sandboxexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/agentbox/sandboxexec"
)

// A basic run: the output and how the command ended.
func ExampleProcessExecToolCall() {
	params := sandboxexec.ExecParams{Command: []string{"sh", "-c", "echo hello; echo oops >&2; exit 3"}}
	out, err := sandboxexec.ProcessExecToolCall(context.Background(), params,
		sandboxexec.SandboxNone, nil, sandboxexec.SandboxPolicy{})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("exit code: %d\n", out.ExitCode)
	fmt.Printf("stdout: %q\n", out.Stdout)
	fmt.Printf("stderr: %q\n", out.Stderr)
	// Output:
	// exit code: 3
	// stdout: "hello\n"
	// stderr: "oops\n"
}

// A command that outlives its timeout is killed with its whole process
// group; the call returns what it printed so far, without an error.
func ExampleProcessExecToolCall_timeout() {
	timeoutMs := uint64(200)
	params := sandboxexec.ExecParams{
		Command:   []string{"sh", "-c", "echo started; sleep 30"},
		TimeoutMs: &timeoutMs,
	}
	out, err := sandboxexec.ProcessExecToolCall(context.Background(), params,
		sandboxexec.SandboxNone, nil, sandboxexec.SandboxPolicy{})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("timed out:", out.TimedOut)
	fmt.Println("exit code:", out.ExitCode)
	fmt.Printf("stdout: %q\n", out.Stdout)
	// Output:
	// timed out: true
	// exit code: 124
	// stdout: "started\n"
}

// Cancelling the context (here as soon as the command has printed, as if
// the user pressed stop) kills the command's process group; the call
// returns the output read so far and an error wrapping ctx.Err().
func ExampleProcessExecToolCall_cancel() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := sandboxexec.ExecParams{Command: []string{"sh", "-c", "echo started; sleep 30"}}
	out, err := sandboxexec.ProcessExecToolCall(ctx, params,
		sandboxexec.SandboxNone, nil, sandboxexec.SandboxPolicy{},
		sandboxexec.WithLiveOutput(cancelOnWrite(cancel), nil))
	fmt.Println("cancelled:", errors.Is(err, context.Canceled))
	fmt.Println("signal:", out.Signal, "exit code:", out.ExitCode)
	fmt.Printf("stdout: %q\n", out.Stdout)
	// Output:
	// cancelled: true
	// signal: SIGKILL exit code: 137
	// stdout: "started\n"
}

// cancelOnWrite is a live-output writer that cancels a context at the first
// byte it is given.
type cancelOnWrite context.CancelFunc

func (c cancelOnWrite) Write(p []byte) (int, error) { c(); return len(p), nil }

// A tool call as a model sends it, decoded and run; the result encodes back
// to JSON for the model.
func ExampleExecParams() {
	call := []byte(`{"command":["echo","hello","agent"],"workdir":"/","timeout":5000,"justification":"ignored"}`)
	var params sandboxexec.ExecParams
	if err := json.Unmarshal(call, &params); err != nil {
		fmt.Println("bad tool call:", err)
		return
	}
	fmt.Println(params.Command, params.Workdir, *params.TimeoutMs)

	out, err := sandboxexec.ProcessExecToolCall(context.Background(), params,
		sandboxexec.SandboxNone, nil, sandboxexec.SandboxPolicy{})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	out.Duration = 0 // wall time varies from run to run
	result, _ := json.Marshal(out)
	fmt.Println(string(result))

	err = json.Unmarshal([]byte(`{"command":"ls -l"}`), &params)
	fmt.Println(err)
	// Output:
	// [echo hello agent] / 5000
	// {"exit_code":0,"stdout":"hello agent\n","stderr":"","timed_out":false,"stdout_truncated":false,"stderr_truncated":false,"stdout_bytes":12,"stderr_bytes":0,"duration_ms":0}
	// sandboxexec: exec params: "command" must be an array of strings: json: cannot unmarshal string into Go value of type []string
}

// A tool call run in this OS's sandbox: writes only below the project, no
// network, and live output as it comes. (Not run as a test: what the sandbox
// allows depends on the machine; ProbeSandbox tells.)
func ExampleProcessExecToolCall_sandboxed() {
	ctx, cancel := context.WithCancel(context.Background()) // cancel: the user pressed stop
	defer cancel()
	params := sandboxexec.ExecParams{
		Command: []string{"sh", "-c", "echo built > out.txt; echo x > $HOME/sandboxexec-example.txt"},
		Workdir: "/work/project",
	}
	out, err := sandboxexec.ProcessExecToolCall(ctx, params,
		sandboxexec.PlatformSandbox(),
		[]string{"/work/project"}, // writable roots
		sandboxexec.SandboxPolicy{},
		sandboxexec.WithLiveOutput(os.Stdout, os.Stderr))
	var denied *sandboxexec.SandboxDeniedError
	switch {
	case errors.Is(err, sandboxexec.ErrSandboxUnavailable):
		fmt.Println("this machine cannot sandbox:", err) // nothing ran
	case errors.As(err, &denied):
		// The command failed, likely because the sandbox refused it
		// something (here, the write to the home directory): out is valid.
		fmt.Println("denied; exit code", out.ExitCode)
	case err != nil:
		fmt.Println("not run, or cancelled:", err)
	default:
		fmt.Println("exit code", out.ExitCode)
	}
}
