// Command sandboxrun runs one command through sandboxexec, the way an agent's
// tool call would be run, and reports how it ended.
//
//	sandboxrun [-sandbox auto|none|seatbelt|linux] [-w DIR]... [-net] [-timeout 10s]
//	           [-ro NAME]... [-deny-read PATH]... [-allow-domain PATTERN]...
//	           [-C DIR] [-json] [-params FILE|-] -- CMD ARGS...
//
// The command's stdout and stderr are copied to sandboxrun's own as they
// arrive (with -json, the ExecToolCallOutput JSON is printed on stdout
// instead), and sandboxrun exits with the command's exit code: 124 when it
// timed out, 128+N when a signal N killed it. When the sandbox likely denied
// the command something, sandboxrun says so on stderr and still exits with
// the command's code. SIGINT or SIGTERM kills the command, and sandboxrun
// exits 130 or 143. Any other failure (bad usage, program not found,
// sandbox unavailable) is reported on stderr with exit code 125.
//
// With -params, the command comes from an ExecParams JSON tool call, read
// from FILE or, with "-", from stdin:
//
//	echo '{"command":["ls","-l"],"workdir":"/tmp","timeout":500}' | sandboxrun -params -
//
// -C and -timeout, when given, override the tool call's workdir and timeout.
// Unless stdin carries the tool call, the command reads sandboxrun's stdin.
//
// -ro names what stays read-only inside each writable root (by default .git,
// .hg and .svn; -ro "" alone protects nothing), -deny-read a file or
// directory the command may not read, and -allow-domain a host (or
// *.domain) the command may reach through the call's proxy; each may be
// given more than once. Every destination the proxy refused is printed on
// stderr, one line each: "sandboxrun: proxy refused HOST:PORT".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentbox/sandboxexec"
)

// exitFailure is the exit code when sandboxrun itself fails, as for env(1)
// and timeout(1).
const exitFailure = 125

// stoppedBy is the cause of the context's cancellation when sandboxrun
// receives SIGINT or SIGTERM.
type stoppedBy struct{ sig syscall.Signal }

func (s stoppedBy) Error() string { return s.sig.String() + " received" }

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() { cancel(stoppedBy{(<-signals).(syscall.Signal)}) }()
	var stdin io.Reader
	if _, err := os.Stdin.Stat(); err == nil {
		stdin = os.Stdin // only a stdin that is open
	}
	os.Exit(run(ctx, os.Args[1:], stdin, os.Stdout, os.Stderr))
}

// stringList is a flag that may be given more than once.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// run is sandboxrun without the process around it: it parses args, runs the
// command and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(ctx, sandboxexec.ProcessExecToolCall, args, stdin, stdout, stderr)
}

// execFunc is sandboxexec.ProcessExecToolCall's type: tests give run a
// stand-in.
type execFunc func(context.Context, sandboxexec.ExecParams, sandboxexec.SandboxType, []string,
	sandboxexec.SandboxPolicy, ...sandboxexec.Option) (sandboxexec.ExecToolCallOutput, error)

// runWith is run with execToolCall in place of ProcessExecToolCall.
func runWith(ctx context.Context, execToolCall execFunc, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sandboxrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sandboxName := fs.String("sandbox", "auto", "sandbox: auto (this OS's own), none, seatbelt or linux")
	var roots stringList
	fs.Var(&roots, "w", "a writable root `DIR` (repeatable)")
	network := fs.Bool("net", false, "allow network access")
	timeout := fs.Duration("timeout", sandboxexec.DefaultTimeout, "kill the command after this long (0: the default)")
	workdir := fs.String("C", "", "run the command in `DIR`")
	jsonOut := fs.Bool("json", false, "print the result as ExecToolCallOutput JSON")
	paramsFile := fs.String("params", "", "read an ExecParams JSON tool call from `FILE` (- for stdin) instead of CMD")
	var readOnly, denyRead, allowDomains stringList
	fs.Var(&readOnly, "ro", "a `NAME` that stays read-only in each writable root (repeatable; default .git, .hg, .svn; '' alone: none)")
	fs.Var(&denyRead, "deny-read", "a file or directory `PATH` the command may not read (repeatable)")
	fs.Var(&allowDomains, "allow-domain", "a host `PATTERN` (example.com, *.example.com) the command may reach through a proxy (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: sandboxrun [-sandbox auto|none|seatbelt|linux] [-w DIR]... [-net] [-timeout 10s] "+
			"[-ro NAME]... [-deny-read PATH]... [-allow-domain PATTERN]... [-C DIR] [-json] [-params FILE|-] -- CMD ARGS...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitFailure // flag has printed the error and the usage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sandboxrun: "+format+"\n", a...)
		return exitFailure
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	sandboxType, err := parseSandbox(*sandboxName)
	if err != nil {
		return fail("%v", err)
	}
	if *timeout < 0 {
		return fail("-timeout must not be negative")
	}

	var params sandboxexec.ExecParams
	if *paramsFile != "" {
		if fs.NArg() > 0 {
			return fail("give either -params or a command, not both")
		}
		var data []byte
		if *paramsFile == "-" {
			if stdin == nil {
				return fail("-params -: no stdin")
			}
			data, err = io.ReadAll(stdin)
			stdin = nil // consumed: the command gets the null device
		} else {
			data, err = os.ReadFile(*paramsFile)
		}
		if err != nil {
			return fail("reading the tool call: %v", err)
		}
		if err := json.Unmarshal(data, &params); err != nil {
			return fail("%v", err)
		}
	} else {
		if fs.NArg() == 0 {
			fs.Usage()
			return exitFailure
		}
		params.Command = fs.Args()
	}
	if *paramsFile == "" || set["C"] {
		params.Workdir = *workdir
	}
	if *paramsFile == "" || set["timeout"] {
		ms := uint64(*timeout / time.Millisecond)
		if ms == 0 && *timeout > 0 {
			ms = 1
		}
		params.TimeoutMs = &ms
	}

	writable := make([]string, 0, len(roots))
	for _, r := range roots {
		// Abs would clean "dir/.." into dir's parent, and "" into the
		// working directory: a root is meant as written.
		if r == "" {
			return fail("-w: empty directory")
		}
		if slices.Contains(strings.Split(filepath.ToSlash(r), "/"), "..") {
			return fail("-w %q: give a directory without \"..\"", r)
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			return fail("-w %s: %v", r, err)
		}
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			// The library skips it; a typo should not go unseen.
			fmt.Fprintf(stderr, "sandboxrun: -w %s does not exist: not writable\n", r)
		}
		writable = append(writable, abs)
	}
	policy, err := parsePolicy(*network, set["ro"], readOnly, denyRead, allowDomains, stderr)
	if err != nil {
		return fail("%v", err)
	}

	var opts []sandboxexec.Option
	if stdin != nil {
		opts = append(opts, sandboxexec.WithStdin(stdin))
	}
	if !*jsonOut {
		opts = append(opts, sandboxexec.WithLiveOutput(stdout, stderr))
	}
	out, err := execToolCall(ctx, params, sandboxType, writable, policy, opts...)
	for _, host := range out.DeniedHosts {
		fmt.Fprintf(stderr, "sandboxrun: proxy refused %s\n", host)
	}
	var denied *sandboxexec.SandboxDeniedError
	var stopped stoppedBy
	interrupted := errors.As(err, &stopped)
	// A timeout may come with an error (the command could not be reaped):
	// it is still a timeout, 124, with its output.
	if err != nil && !interrupted && !errors.As(err, &denied) && !out.TimedOut {
		return fail("%v", err)
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return fail("writing the result: %v", err)
		}
	}
	switch {
	case interrupted:
		// As a shell reports it: 128 + the signal.
		fmt.Fprintf(stderr, "sandboxrun: %v, the command was killed\n", stopped.sig)
		return 128 + int(stopped.sig)
	case denied != nil:
		fmt.Fprintf(stderr, "sandboxrun: the command likely failed because the %v sandbox refused it an action (%v)\n", sandboxType, err)
	case out.TimedOut && err != nil:
		fmt.Fprintf(stderr, "sandboxrun: timed out, the command was killed (%v)\n", err)
	case out.TimedOut:
		fmt.Fprintf(stderr, "sandboxrun: timed out, the command was killed\n")
	}
	return out.ExitCode
}

// parsePolicy is the policy the flags ask for. roGiven says -ro was given:
// without it ReadOnlySubpaths stays nil, the library's defaults; -ro ""
// alone is an empty list, which protects nothing. A relative -deny-read
// path is taken from the working directory, under the rule of -w; one that
// does not exist is denied nothing, with a word.
func parsePolicy(network, roGiven bool, readOnly, denyRead, allowDomains []string, stderr io.Writer) (sandboxexec.SandboxPolicy, error) {
	policy := sandboxexec.SandboxPolicy{NetworkAccess: network, AllowedDomains: allowDomains}
	if roGiven {
		policy.ReadOnlySubpaths = []string{}
		if !(len(readOnly) == 1 && readOnly[0] == "") {
			for _, name := range readOnly {
				if name == "" {
					return sandboxexec.SandboxPolicy{}, errors.New("-ro '': give it alone to protect nothing, or give names only")
				}
				policy.ReadOnlySubpaths = append(policy.ReadOnlySubpaths, name)
			}
		}
	}
	for _, p := range denyRead {
		if p == "" {
			return sandboxexec.SandboxPolicy{}, errors.New("-deny-read: empty path")
		}
		if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
			return sandboxexec.SandboxPolicy{}, fmt.Errorf("-deny-read %q: give a path without \"..\"", p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return sandboxexec.SandboxPolicy{}, fmt.Errorf("-deny-read %s: %v", p, err)
		}
		if _, err := os.Lstat(abs); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "sandboxrun: -deny-read %s does not exist: nothing to deny\n", p)
		}
		policy.DenyRead = append(policy.DenyRead, abs)
	}
	return policy, nil
}

func parseSandbox(name string) (sandboxexec.SandboxType, error) {
	switch name {
	case "auto":
		return sandboxexec.PlatformSandbox(), nil
	case "none":
		return sandboxexec.SandboxNone, nil
	case "seatbelt":
		return sandboxexec.SandboxMacosSeatbelt, nil
	case "linux":
		return sandboxexec.SandboxLinuxSeccomp, nil
	}
	return 0, fmt.Errorf("-sandbox %q: want auto, none, seatbelt or linux", name)
}
