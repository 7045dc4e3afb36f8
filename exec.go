// Package sandboxexec runs a command for an AI agent inside an OS sandbox,
// with a timeout, cancellation and bounded output capture.
//
// The one entry point is ProcessExecToolCall. It starts the command in its own
// process group with stdin on the null device by default (see WithStdin),
// drains stdout and stderr concurrently through capped captures, and
// returns when the command has exited (or was killed for its timeout or its
// context) and every process left in its group has been killed.
//
// The sandbox is chosen by SandboxType (PlatformSandbox gives this OS's) and
// shaped by the writable roots and a SandboxPolicy, whose zero value allows
// no network and writes only below the roots, with .git, .hg and .svn kept
// read-only inside them. AllowedDomains opens the network to named hosts
// through a proxy the call runs in-process; DenyRead hides paths. A sandbox
// that cannot be applied is an error wrapping ErrSandboxUnavailable, and
// nothing runs; a failure the sandbox likely caused is a SandboxDeniedError.
//
// The repository's docs/ pages hold the detail: semantics.md (every field
// and edge case), filesystem-policy.md, network-policy.md, linux.md,
// macos.md, windows.md and performance.md; SECURITY.md lists what each
// platform guarantees and the tests that prove it.
package sandboxexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrEmptyCommand is returned, perhaps wrapped (test with errors.Is), when
// ExecParams.Command is empty or its program name is.
var ErrEmptyCommand = errors.New("sandboxexec: empty command")

// ErrSandboxUnavailable is returned, wrapped with the reason, when the
// sandbox asked for cannot be applied on this OS or kernel. Nothing is run.
var ErrSandboxUnavailable = errors.New("sandboxexec: sandbox unavailable")

// SandboxDeniedError is returned when a sandboxed command failed in a way the
// sandbox likely caused (see ProcessExecToolCall). Output is the whole result,
// which ProcessExecToolCall also returns beside the error.
type SandboxDeniedError struct {
	Output ExecToolCallOutput

	offline bool // the policy gave no network: see denialReason
}

// Error says how the command ended and what made it look denied, such as
// `sandboxexec: command exited with code 1, likely denied by the sandbox:
// its stderr says "read-only file system"`.
func (e *SandboxDeniedError) Error() string {
	how := fmt.Sprintf("exited with code %d", e.Output.ExitCode)
	if e.Output.Signal != "" {
		how = "killed by " + e.Output.Signal
	}
	msg := "sandboxexec: command " + how + ", likely denied by the sandbox"
	if why := denialReason(e.Output, e.offline); why != "" {
		msg += ": " + why
	}
	return msg
}

// TimeoutExitCode is the ExitCode of a call that hit its timeout, as GNU
// timeout(1) reports it.
const TimeoutExitCode = 124

// drainGrace bounds how long a call waits, after the command has exited and
// its process group has been killed, for the output pipes to reach EOF: a
// process that left the group (setsid) may still hold one, or a UNIX socket
// in flight (see docs/semantics.md). The bytes read until then are kept.
const drainGrace = 500 * time.Millisecond

// ExecToolCallOutput is what a call observed. Its JSON form uses snake_case
// names and gives Duration in milliseconds as "duration_ms".
type ExecToolCallOutput struct {
	// ExitCode is the command's exit status; 128+N when it was killed by
	// signal N (on Unix); TimeoutExitCode when the call timed out; -1,
	// beside an error, when the call could not reap the command. Where the
	// command is its PID namespace's init (SandboxLinuxSeccomp), signals
	// without a handler that it or its own processes send it, abort()'s
	// SIGABRT included, are ignored: see "As pid 1" in docs/linux.md.
	ExitCode int `json:"exit_code"`
	// Stdout and Stderr are the kept bytes of each stream (see
	// MaxStreamOutput), invalid UTF-8 replaced by U+FFFD.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Duration is wall time from spawn to the end of the call.
	Duration time.Duration `json:"-"`
	// TimedOut says the call's timeout killed the command.
	TimedOut bool `json:"timed_out"`
	// StdoutTruncated and StderrTruncated say bytes were left out of the
	// middle of the stream; a marker line in the text says how many.
	StdoutTruncated bool `json:"stdout_truncated"`
	StderrTruncated bool `json:"stderr_truncated"`
	// Signal names the signal that ended the command ("SIGSEGV"), if one
	// did: on Unix, "SIGKILL" after the call killed it for its timeout or
	// context. Always empty on Windows, which has no signals.
	Signal string `json:"signal,omitempty"`
	// StdoutBytes and StderrBytes count every byte the streams carried.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	// DeniedHosts lists the "host:port" destinations the proxy refused, once
	// each, in order of first attempt; nil when none was refused (see
	// SandboxPolicy.AllowedDomains). Names are listed as they are matched
	// (lower case, no trailing dot), so EXAMPLE.com:80 and example.com.:80
	// are one entry. At most the first 1,000 distinct destinations are
	// listed: later refusals are still refused, but not listed.
	DeniedHosts []string `json:"denied_hosts,omitempty"`
}

type outputJSON ExecToolCallOutput

// MarshalJSON adds "duration_ms" to the encoded fields.
func (o ExecToolCallOutput) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		outputJSON
		DurationMs int64 `json:"duration_ms"`
	}{outputJSON(o), o.Duration.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes, Duration to the millisecond.
// An object sets every field, absent ones to their zero value; a null
// changes nothing, as encoding/json has it.
func (o *ExecToolCallOutput) UnmarshalJSON(data []byte) error {
	if string(bytes.Trim(data, jsonSpace)) == "null" {
		return nil
	}
	var v struct {
		outputJSON
		DurationMs int64 `json:"duration_ms"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return fmt.Errorf("sandboxexec: output: %w", err)
		}
		// The message would name the types above.
		if typeErr.Field == "" {
			return fmt.Errorf("sandboxexec: output must be a JSON object, got %s", excerpt(data))
		}
		field := typeErr.Field[strings.LastIndexByte(typeErr.Field, '.')+1:]
		return fmt.Errorf("sandboxexec: output: %q cannot be a JSON %s", field, typeErr.Value)
	}
	if v.DurationMs < 0 || v.DurationMs > math.MaxInt64/int64(time.Millisecond) {
		return fmt.Errorf("sandboxexec: output: \"duration_ms\" %d is out of range", v.DurationMs)
	}
	*o = ExecToolCallOutput(v.outputJSON)
	o.Duration = time.Duration(v.DurationMs) * time.Millisecond
	return nil
}

// ProcessExecToolCall runs params.Command under sandboxType and returns what
// it printed and how it ended.
//
//   - An empty command returns ErrEmptyCommand. A program that is not found
//     or not executable, or a Workdir that is missing, returns an error that
//     says which and wraps exec.ErrNotFound, fs.ErrNotExist or
//     fs.ErrPermission. A nil ctx, or a nil or closed *os.File given to
//     WithStdin, returns an error too. So does, on Windows, a batch file
//     (.bat, .cmd: npm and npx are such shims) given an argument with a
//     character that cmd.exe, which runs it, could read as a command (&, |,
//     %, a double quote...), or found at a path with % or !: see "Batch
//     files" in docs/windows.md. Nothing is run in these cases.
//   - A sandbox this OS or kernel cannot apply returns an error wrapping
//     ErrSandboxUnavailable; nothing is run.
//   - The command's exit code, whatever it is, is not an error, except
//     under a sandbox where the output reads like a refusal (below).
//   - On timeout the command's process group is killed and the call returns
//     TimedOut, ExitCode 124, the output read so far, and a nil error (but
//     see the next to last item).
//   - When ctx is done the group is killed, and the call returns the output
//     so far and an error wrapping ctx.Err(), unless the command had exited
//     by itself (its status shows no kill), as with a timeout.
//   - Under a sandbox, a failure that the sandbox likely caused returns the
//     output and a *SandboxDeniedError holding it: a non-zero exit whose
//     output mentions a denial ("operation not permitted", "permission
//     denied", "read-only file system", ...), or death by SIGSYS. A timeout
//     or an exit code alone never counts. Without NetworkAccess, a failed
//     name lookup ("Could not resolve host") counts too.
//   - A command that cannot be reaped once it has ended or been killed (a
//     process outside the call traces it, or, as the init of its PID
//     namespace, it waits more than 5 s for the namespace's processes to
//     die) returns what was read and an error that says so, after a timeout
//     too: its exit status is unknown and it may be alive yet.
//
// writableRoots and policy apply to sandboxed runs only. A relative root,
// one with a ".." component, a file or a symlink loop is an error; a root
// that does not exist is skipped. An unknown SandboxType is an error.
// SandboxNone (the only type on Windows) ignores the roots, ReadOnlySubpaths
// and DenyRead, but still refuses a policy with a bad name or path, and
// refuses AllowedDomains with ErrSandboxUnavailable, since nothing would
// hold the command to the proxy.
func ProcessExecToolCall(ctx context.Context, params ExecParams, sandboxType SandboxType,
	writableRoots []string, policy SandboxPolicy, opts ...Option) (ExecToolCallOutput, error) {
	if ctx == nil {
		return ExecToolCallOutput{}, errors.New("sandboxexec: nil Context")
	}
	if len(params.Command) == 0 {
		return ExecToolCallOutput{}, ErrEmptyCommand
	}
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := policy.check(); err != nil {
		return ExecToolCallOutput{}, err
	}
	req, err := prepare(params, &cfg)
	if err != nil {
		return ExecToolCallOutput{}, err
	}
	r, err := selectRunner(ctx, sandboxType, writableRoots, policy)
	if err != nil {
		if ctx.Err() != nil { // a check of the sandbox outlasted ctx
			return ExecToolCallOutput{}, contextError("not started", ctx)
		}
		return ExecToolCallOutput{}, err
	}
	out, err := execute(ctx, r, req, params, &cfg)
	offline := !policy.NetworkAccess
	if err == nil && sandboxType != SandboxNone && likelySandboxDenial(out, offline) {
		return out, &SandboxDeniedError{Output: out, offline: offline}
	}
	return out, err
}

func selectRunner(ctx context.Context, t SandboxType, writableRoots []string, policy SandboxPolicy) (runner, error) {
	switch t {
	case SandboxNone:
		if len(policy.AllowedDomains) > 0 {
			// The plain runner has no way to hold the command to the
			// proxy: never a silent run with the whole network.
			return nil, fmt.Errorf("%w: AllowedDomains needs a sandbox that confines the network; SandboxNone confines nothing: use PlatformSandbox() on Linux or macOS", ErrSandboxUnavailable)
		}
		return plainRunner{}, nil
	case SandboxMacosSeatbelt, SandboxLinuxSeccomp:
		return platformRunner(ctx, t, writableRoots, policy)
	}
	return nil, fmt.Errorf("sandboxexec: unknown sandbox type %d", int(t))
}

// runner starts a prepared command. The engine gives every runner the same
// request and drives what it returns the same way; a sandbox differs only in
// how its runner starts the child.
type runner interface {
	start(req *spawnRequest) (*child, error)
}

// readOnlyViewer is a runner whose command may see the host's files through
// a read-only view (Linux's mount namespace). A file the host opened is on
// the host's mount, outside that view, and a command given it could change
// its metadata (fchmod, fchown): stdin is then opened anew through a
// read-only mount of its own, or copied through a pipe.
type readOnlyViewer interface {
	readOnlyView() bool
}

// spawnRequest is a command ready to start: the program resolved, the
// environment chosen, the stdio files open.
type spawnRequest struct {
	path  string   // the program, as found by lookPath
	argv  []string // argv[0] is the command's first word, as given
	dir   string   // "" for the host's working directory
	env   []string
	stdio [3]*os.File
}

// child is a started command.
type child struct {
	pid int
	// pidfd (Linux) refers to the command: the engine polls it to learn that
	// the command has exited. Where it is nil, the engine waits for pid.
	// With it comes killed, an eventfd that the call's kill (timeout,
	// cancellation) makes readable: the engine polls that too.
	pidfd  *os.File
	killed *os.File
	reaped atomic.Bool // the pid may be another's now
	// process is the command on Windows, which has no pid to wait for.
	process *os.Process
	// killAll sends SIGKILL to every process of the call the runner can
	// reach. It may be called at any time, more than once, also after the
	// command has been reaped.
	killAll func()
	// release, if set, frees what start acquired, once the command is reaped.
	release func()
	// deniedHosts, if set, gives what the call's proxy refused; the engine
	// asks once the command has ended, before release.
	deniedHosts func() []string
	// killsGroup says killAll kills the command's process group, whose
	// processes a host that adopts orphans must then reap (see
	// reapAdopted); escaped holds pidfds of processes killAll killed
	// outside the group (through the call's cgroup), for the same reason.
	killsGroup bool
	// namespaceInit says the command is the init of a PID namespace, which
	// is reaped only once every other process in it is gone (see reapBy).
	namespaceInit bool
	escapedMu     sync.Mutex
	escaped       []escapedProcess
}

// escapedProcess is a process of the call's that left its process group.
type escapedProcess struct{ pid, pidfd int }

// plainRunner starts the command unconfined, as the leader of a new session
// (Unix) or job (Windows).
type plainRunner struct{}

func (plainRunner) start(req *spawnRequest) (*child, error) {
	req.env = withSandboxEnv(req.env, "", false)
	c, err := startPlain(req)
	if c != nil {
		release := c.release // Windows': the job's handle
		c.release = func() {
			if release != nil {
				release()
			}
			plainCallOver()
		}
	}
	return c, err
}

// prepare checks what can be checked before anything is spawned, so that the
// common mistakes get an error that names them.
func prepare(params ExecParams, cfg *config) (*spawnRequest, error) {
	for i, arg := range params.Command {
		if strings.IndexByte(arg, 0) >= 0 {
			return nil, fmt.Errorf("sandboxexec: command argument %d contains a NUL byte", i)
		}
	}
	req := &spawnRequest{argv: params.Command, env: cfg.environ()}
	if params.Command[0] == "" {
		return nil, fmt.Errorf("%w: the program name, command[0], is empty", ErrEmptyCommand)
	}
	if err := checkHostWaits(); err != nil {
		return nil, err
	}
	for _, kv := range req.env {
		if strings.IndexByte(kv, 0) >= 0 {
			// Name the variable, never its value: it may hold a secret.
			name, _, _ := strings.Cut(kv, "=")
			name, _, _ = strings.Cut(name, "\x00")
			return nil, fmt.Errorf("sandboxexec: environment variable %q contains a NUL byte", name)
		}
	}
	req.env = dedupEnv(req.env)
	if params.Workdir != "" {
		if strings.IndexByte(params.Workdir, 0) >= 0 {
			return nil, errors.New("sandboxexec: workdir contains a NUL byte")
		}
		fi, err := os.Stat(params.Workdir)
		if err != nil {
			return nil, fmt.Errorf("sandboxexec: workdir: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("sandboxexec: workdir %s: %w", params.Workdir, errNotDir)
		}
		req.dir = params.Workdir
	}
	path, err := lookPath(params.Command[0], req.dir, req.env)
	if err != nil {
		return nil, err
	}
	if err := checkProgramArgs(path, req.argv); err != nil {
		return nil, err
	}
	req.path = path
	return req, nil
}

// execute is the engine every runner shares: spawn, drain, wait, kill, reap.
func execute(ctx context.Context, r runner, req *spawnRequest, params ExecParams, cfg *config) (ExecToolCallOutput, error) {
	if ctx.Err() != nil {
		return ExecToolCallOutput{}, contextError("not started", ctx)
	}
	callsInFlight.Add(1)
	defer callsInFlight.Add(-1)
	var closeAfterStart, closeAtEnd []*os.File
	defer func() {
		for _, f := range closeAfterStart {
			f.Close()
		}
		for _, f := range closeAtEnd {
			f.Close()
		}
	}()

	_, unconfined := r.(plainRunner)
	viewer, ok := r.(readOnlyViewer)
	stdin, stdinCopy, stdinDone, err := openStdin(cfg.stdin, unconfined, ok && viewer.readOnlyView())
	if err != nil {
		return ExecToolCallOutput{}, err
	}
	if stdinDone != nil {
		defer stdinDone()
	} else if stdin != cfg.stdin {
		closeAfterStart = append(closeAfterStart, stdin)
	}
	if stdinCopy != nil {
		// abort closes it once the command has ended; this closes it also
		// when the call fails before that.
		closeAtEnd = append(closeAtEnd, stdinCopy.w)
		defer stdinCopy.dropUnbegun()
	}
	var streams [2]*stream
	for i, live := range [2]io.Writer{cfg.liveStdout, cfg.liveStderr} {
		pr, pw, err := capturePipe()
		if err != nil {
			return ExecToolCallOutput{}, fmt.Errorf("sandboxexec: pipe: %w", err)
		}
		s := newStream(pr, live)
		streams[i] = s
		defer s.close()
		defer s.closeReader()
		closeAfterStart = append(closeAfterStart, pw)
		req.stdio[i+1] = pw
	}
	req.stdio[0] = stdin

	start := time.Now()
	ch, err := r.start(req)
	for _, f := range closeAfterStart {
		f.Close()
	}
	closeAfterStart = nil
	if err != nil {
		if errors.Is(err, syscall.E2BIG) {
			err = fmt.Errorf("sandboxexec: the command's arguments and environment are too large "+
				"for the kernel (%s): %w", argSizes(req), syscall.E2BIG)
		}
		return ExecToolCallOutput{}, err
	}
	if ch.release != nil {
		defer ch.release()
	}

	if ch.pidfd != nil {
		defer ch.pidfd.Close()
		defer ch.killed.Close()
	}
	if stdinCopy != nil {
		stdinCopy.begin()
	}

	// Timeout and cancellation kill the group from a timer's goroutine;
	// the reason is recorded before the kill so that the end of the command
	// reads it. Once the command has ended, a late timer does nothing, and
	// one that is killing is waited for: the group kill must not reach the
	// cgroup once it is released for another call, nor a pid that is free
	// again.
	const (
		reasonNone = iota
		reasonTimeout
		reasonCancel
		reasonExited
	)
	var (
		killMu sync.Mutex
		reason = reasonNone
	)
	killFor := func(why int) func() {
		return func() {
			killMu.Lock()
			defer killMu.Unlock()
			if reason == reasonNone {
				reason = why
				// The drain grace starts now, not once the kill is done:
				// a cgroup's kill can take a while, nor once the engine
				// sees it: a live writer's write can.
				for _, s := range streams {
					s.endLive(time.Now().Add(drainGrace))
				}
				if ch.killed != nil {
					ch.killed.Write([]byte{1, 0, 0, 0, 0, 0, 0, 0}) // eventfd: add 1 (or 1<<56)
				}
				ch.killAll()
			}
		}
	}
	var timer *time.Timer
	if d, ok := params.timeout(); ok {
		timer = time.AfterFunc(d, killFor(reasonTimeout))
	}
	stopCancel := context.AfterFunc(ctx, killFor(reasonCancel))
	ended := func() {
		killMu.Lock()
		if reason == reasonNone {
			reason = reasonExited
		}
		killMu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		stopCancel()
		// Whatever is left of the group (background jobs, grandchildren
		// holding the pipes) dies with the command.
		ch.killAll()
		if stdinCopy != nil {
			stdinCopy.abort()
		}
	}
	exitCode, signal, waitErr := await(ch, streams, ended)
	if stdinCopy != nil {
		if p := stdinCopy.finish(); p != nil {
			panic(p)
		}
	}
	for _, s := range streams {
		// The command has ended and been reaped: what the live writer
		// did is the caller's now.
		if s.liveGoexit {
			runtime.Goexit()
		}
		if s.livePanic != nil {
			panic(s.livePanic)
		}
	}

	stdout, stderr := streams[0].capture, streams[1].capture
	out := ExecToolCallOutput{
		Stdout:          stdout.String(),
		Stderr:          stderr.String(),
		StdoutTruncated: stdout.omitted() > 0,
		StderrTruncated: stderr.omitted() > 0,
		StdoutBytes:     stdout.total,
		StderrBytes:     stderr.total,
		ExitCode:        exitCode,
		Signal:          signal,
	}
	if ch.deniedHosts != nil {
		out.DeniedHosts = ch.deniedHosts()
	}
	out.Duration = time.Since(start)
	switch {
	case reason == reasonTimeout && !exitedBeforeKill(signal, waitErr):
		out.TimedOut = true
		out.ExitCode = TimeoutExitCode
		if waitErr != nil { // what the command left may be alive yet
			return out, fmt.Errorf("sandboxexec: wait: %w", waitErr)
		}
		return out, nil
	case waitErr != nil: // what the command left may be alive yet
		out.ExitCode = -1
		werr := fmt.Errorf("sandboxexec: wait: %w", waitErr)
		if reason == reasonCancel {
			return out, errors.Join(contextError("command cancelled", ctx), werr)
		}
		return out, werr
	case reason == reasonCancel && !exitedBeforeKill(signal, waitErr):
		return out, contextError("command cancelled", ctx)
	}
	return out, nil
}

// contextError wraps ctx.Err() as documented, and the cause when one was
// given.
func contextError(what string, ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return fmt.Errorf("sandboxexec: %s: %w: %w", what, ctx.Err(), cause)
	}
	return fmt.Errorf("sandboxexec: %s: %w", what, ctx.Err())
}

// argSizes describes what execve counts against its limits: the total size
// of the argument and environment strings, and the longest one (Linux also
// caps each string, at 128 KiB with 4 KiB pages).
func argSizes(req *spawnRequest) string {
	total, longest := 0, 0
	for _, list := range [][]string{req.argv, req.env} {
		for _, s := range list {
			total += len(s) + 1
			longest = max(longest, len(s))
		}
	}
	return fmt.Sprintf("args: %d, env entries: %d, %d bytes in all, longest string %d bytes",
		len(req.argv), len(req.env), total, longest)
}

// awaitDraining is the engine's wait where it does not poll the pipes
// itself: a goroutine drains each stream while this one waits for the
// command. Once the command has exited it calls ended (before the reap
// where the kernel can tell of the exit without reaping: see waitCommand),
// and then gives the streams drainGrace to reach EOF: only a process that
// left the group (setsid) and still holds a pipe makes the wait that long;
// the bytes read until then are kept. A stream whose pipe takes no read
// deadline (Windows) is abandoned when the grace is over (see abandon).
func awaitDraining(ch *child, streams [2]*stream, ended func()) (exitCode int, signal string, err error) {
	var liveMu sync.Mutex
	var drained [2]chan struct{}
	for i, s := range streams {
		s.liveMu = &liveMu
		drained[i] = make(chan struct{})
		go func() {
			defer close(drained[i])
			returned := false
			defer func() {
				if !returned {
					// The live writer called runtime.Goexit, which ends
					// this goroutine whatever it does: the stream is read
					// on without the writer (took dropped it), and the
					// caller exits the same way once the command has ended.
					s.drain()
				}
			}()
			s.drain()
			returned = true
		}()
	}
	exitCode, signal, err = waitCommand(ch, ended)
	deadline := time.Now().Add(drainGrace)
	for _, s := range streams {
		deadline = minTime(deadline, s.endLive(deadline))
	}
	var noDeadline [2]bool
	for i, s := range streams {
		// A pipe Go cannot poll (Windows' anonymous pipes) takes no
		// deadline: its read blocks until EOF, which a process that
		// escaped the kill can put off for ever.
		noDeadline[i] = s.r.SetReadDeadline(deadline) != nil
	}
	grace, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for i, s := range streams {
		if !noDeadline[i] {
			<-drained[i]
			continue
		}
		select {
		case <-drained[i]:
		case <-grace.Done():
			select {
			case <-drained[i]: // it ended as the grace did
			default:
				s.abandon()
			}
		}
	}
	return exitCode, signal, err
}

// callsInFlight counts the calls that execute is running: where they
// outnumber the CPUs, a hand-off to a standby sleeps rather than spins (see
// startFromStandby).
var callsInFlight atomic.Int32
