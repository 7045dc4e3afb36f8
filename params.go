package sandboxexec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxStreamOutput is how many bytes of each stream (stdout, stderr) a call
// keeps. Past it, the beginning and the end are kept, half each.
const MaxStreamOutput = 100 * 1024

// DefaultTimeout applies when ExecParams has no timeout, or a timeout of 0.
const DefaultTimeout = 10 * time.Second

// ExecParams is one tool call as a model sends it:
//
//	{"command":["ls","-l"],"workdir":"/tmp","timeout":500}
//
// Unknown fields are ignored, also by a Decoder told to DisallowUnknownFields,
// and names match without case, as encoding/json matches them. A timeout
// that is not a non-negative whole number of milliseconds, a command that is
// not an array of strings (a null element included), or params that are
// neither an object nor null, are decode errors. An object sets every field,
// absent ones to their zero value (unlike encoding/json, which keeps what
// they held): each tool call is decoded whole, with nothing left from the
// last one. A field that is null counts as absent. A name given twice is
// checked both times, and the last one counts, as in encoding/json. A null
// for the whole, as encoding/json has it, changes nothing.
type ExecParams struct {
	// Command is the program and its arguments. It is run directly, not
	// through a shell. A program name without a slash is looked up in the
	// PATH of the child's environment, or in the host's PATH when that has
	// none.
	Command []string `json:"command"`
	// Workdir is the child's working directory; empty means the host's,
	// and a relative one is taken from the host's. It must exist, and need
	// not be a writable root: it gives the command no right to write there.
	Workdir string `json:"workdir,omitempty"`
	// TimeoutMs is the timeout in milliseconds (wire name "timeout").
	// Nil or 0 means DefaultTimeout; values too large for a time.Duration
	// mean no timeout of the call's own (the context still applies).
	TimeoutMs *uint64 `json:"timeout,omitempty"`
}

// UnmarshalJSON decodes the wire format, with errors that name the field.
func (p *ExecParams) UnmarshalJSON(data []byte) error {
	if string(bytes.Trim(data, jsonSpace)) == "null" {
		return nil
	}
	// The members one at a time, so that a name given twice is checked
	// each time, not only where it is given last.
	d := json.NewDecoder(bytes.NewReader(data))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("sandboxexec: exec params must be a JSON object, got %s", excerpt(data))
	}
	var out ExecParams
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("sandboxexec: exec params: %w", err)
		}
		var value json.RawMessage
		if err := d.Decode(&value); err != nil {
			return fmt.Errorf("sandboxexec: exec params: %w", err)
		}
		if err := out.setMember(tok.(string), value); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return fmt.Errorf("sandboxexec: exec params: %w", err)
	}
	// json.Unmarshal gives one value; a direct call may give more.
	end := d.InputOffset()
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("sandboxexec: exec params: data after the object: %s", excerpt(bytes.Trim(data[end:], jsonSpace)))
	}
	*p = out
	return nil
}

// setMember sets the field that the member name: value names, if any.
// encoding/json matches the name, so that names match as they would
// without UnmarshalJSON.
func (p *ExecParams) setMember(name string, value json.RawMessage) error {
	var wire struct {
		Command json.RawMessage `json:"command"`
		Workdir json.RawMessage `json:"workdir"`
		Timeout json.RawMessage `json:"timeout"`
	}
	quoted, err := json.Marshal(name)
	if err != nil {
		return fmt.Errorf("sandboxexec: exec params: %w", err)
	}
	member := append(append(append(append([]byte("{"), quoted...), ':'), value...), '}')
	if err := json.Unmarshal(member, &wire); err != nil {
		return fmt.Errorf("sandboxexec: exec params: %w", err)
	}
	switch {
	case wire.Command != nil:
		p.Command = nil
		if !isPresent(wire.Command) {
			return nil
		}
		if err := json.Unmarshal(wire.Command, &p.Command); err != nil {
			return fmt.Errorf("sandboxexec: exec params: \"command\" must be an array of strings: %w", err)
		}
		// A null argument decodes as "" above: a mistake to name, not run.
		var args []json.RawMessage
		json.Unmarshal(wire.Command, &args)
		for i, arg := range args {
			if !isPresent(arg) {
				return fmt.Errorf("sandboxexec: exec params: \"command\" must be an array of strings: element %d is null", i)
			}
		}
	case wire.Workdir != nil:
		p.Workdir = ""
		if !isPresent(wire.Workdir) {
			return nil
		}
		if err := json.Unmarshal(wire.Workdir, &p.Workdir); err != nil {
			return fmt.Errorf("sandboxexec: exec params: \"workdir\" must be a string: %w", err)
		}
	case wire.Timeout != nil:
		p.TimeoutMs = nil
		if !isPresent(wire.Timeout) {
			return nil
		}
		d := json.NewDecoder(bytes.NewReader(wire.Timeout))
		d.UseNumber()
		// Decoding into any, not json.Number: a json.Number would also
		// take a string such as "500".
		var v any
		err := d.Decode(&v)
		n, isNumber := v.(json.Number)
		if err != nil || !isNumber {
			return fmt.Errorf("sandboxexec: exec params: \"timeout\" must be a whole number of milliseconds, got %s", excerpt(wire.Timeout))
		}
		ms, err := strconv.ParseUint(n.String(), 10, 64)
		if err != nil {
			return fmt.Errorf("sandboxexec: exec params: \"timeout\" must be a non-negative whole number of milliseconds, got %s", excerpt([]byte(n)))
		}
		p.TimeoutMs = &ms
	}
	return nil
}

// excerpt is the start of raw, short enough to quote in an error.
// jsonSpace is what JSON counts as white space (bytes.TrimSpace counts
// more: a form feed before null is no JSON).
const jsonSpace = " \t\r\n"

func excerpt(raw []byte) string {
	const keep = 40
	if len(raw) <= keep {
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	return strings.ToValidUTF8(string(raw[:keep]), "\uFFFD") + "..."
}

func isPresent(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// timeout is the call's own time limit; ok is false when there is none.
func (p ExecParams) timeout() (d time.Duration, ok bool) {
	if p.TimeoutMs == nil || *p.TimeoutMs == 0 {
		return DefaultTimeout, true
	}
	if *p.TimeoutMs > uint64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, false
	}
	return time.Duration(*p.TimeoutMs) * time.Millisecond, true
}

// SandboxType says how a command is confined.
type SandboxType int

const (
	// SandboxNone runs the command as the host's user, unconfined.
	SandboxNone SandboxType = iota
	// SandboxMacosSeatbelt runs it under /usr/bin/sandbox-exec. macOS only.
	SandboxMacosSeatbelt
	// SandboxLinuxSeccomp runs it under Landlock and seccomp. Linux only.
	SandboxLinuxSeccomp
)

// PlatformSandbox is the sandbox this OS offers: SandboxLinuxSeccomp on
// Linux, SandboxMacosSeatbelt on macOS, SandboxNone elsewhere. It does not
// say the sandbox works here (ProbeSandbox does): a call under a sandbox
// this machine cannot apply fails with ErrSandboxUnavailable and runs
// nothing. So does every call under SandboxLinuxSeccomp in a Linux build
// without cgo, which cannot apply it, rather than running unconfined.
func PlatformSandbox() SandboxType { return platformSandbox() }

// String returns the type's name, as error messages give it: "none",
// "macos-seatbelt" or "linux-seccomp" (EnvSandbox has shorter values), and
// "SandboxType(N)" for any other value, which ProcessExecToolCall refuses.
func (t SandboxType) String() string {
	switch t {
	case SandboxNone:
		return "none"
	case SandboxMacosSeatbelt:
		return "macos-seatbelt"
	case SandboxLinuxSeccomp:
		return "linux-seccomp"
	}
	return fmt.Sprintf("SandboxType(%d)", int(t))
}

// SandboxPolicy says what a sandboxed command may do beyond reading files and
// running programs. The zero value is the most restrictive policy: no
// network, and writes only below the writable roots.
type SandboxPolicy struct {
	// NetworkAccess allows sockets of every family. On Linux that takes in
	// the host's pathname UNIX sockets (Docker's, a session bus's), where
	// Landlock is older than ABI 9; the host's abstract ones stay out of
	// reach (ABI 6).
	NetworkAccess bool
	// FullDiskWriteAccess allows writing anywhere the host user can.
	FullDiskWriteAccess bool
	// BestEffort runs the command with whatever part of the sandbox this
	// kernel offers (Landlock below MinLandlockABI, or only one of Landlock
	// and seccomp) instead of failing with ErrSandboxUnavailable. A kernel
	// that offers neither still fails. ProbeSandbox tells what is enforced.
	BestEffort bool

	// Resource limits on the command and everything it starts, enforced by
	// SandboxLinuxSeccomp (the other runners ignore them). Zero means the
	// library's default: DefaultMaxProcesses for MaxProcesses, and no limit
	// of the library's own for the others (the host's limits apply). A
	// limit only lowers the host's: a value above the host's own hard
	// limit (RLIMIT_NPROC for DefaultMaxProcesses too) means the host's.
	// Negative values are an error, under every sandbox type.
	//
	// MaxProcesses caps the processes and threads alive at once: with a
	// pids cgroup where the host may create one (root, or a delegated
	// cgroup), else with RLIMIT_NPROC, which counts every process of the
	// user and does not bind root. A value above the most processes Linux
	// allows at all (4,194,304 on 64-bit systems) means that many.
	MaxProcesses int
	// MaxFileSize caps the size of any file the command writes, in bytes
	// (RLIMIT_FSIZE; a write or truncate past it fails with EFBIG), and
	// the blocks it allocates to one: fallocate with FALLOC_FL_KEEP_SIZE
	// (but to punch a hole) or FALLOC_FL_INSERT_RANGE, and the ioctls
	// that allocate so, fail with EOPNOTSUPP, where there is seccomp.
	MaxFileSize int64
	// MaxCPUTime caps each process's CPU time (RLIMIT_CPU, rounded up to
	// whole seconds; the process is then killed by SIGXCPU or SIGKILL).
	MaxCPUTime time.Duration
	// MaxAddressSpace caps each process's virtual memory in bytes
	// (RLIMIT_AS; an allocation past it fails).
	MaxAddressSpace int64

	// ReadOnlySubpaths are names, relative to each writable root, that stay
	// read-only: nil means DefaultReadOnlySubpaths(); an empty non-nil slice
	// protects nothing (so that, say, `git commit` can work). Only the top
	// of each root is looked at, and a name that does not exist there is
	// neither protected nor created. A ".git" file (a worktree's, a
	// submodule's) protects the git directory it names too. A name that is
	// empty, ".", "..", or holds a path separator is an error.
	ReadOnlySubpaths []string
	// DenyRead are absolute paths, files or directories, that the command can
	// neither read, list, execute nor write, whatever the other fields say.
	// On Linux a directory reads as empty, a file as empty, and writes to
	// either fail with EROFS; on macOS every access fails with EPERM.
	// Symlinks are resolved, and paths that do not exist are ignored; a
	// relative or empty path, or "/", is an error. SandboxNone ignores this
	// field and ReadOnlySubpaths, as it ignores the writable roots.
	DenyRead []string

	// AllowedDomains, when non-empty and NetworkAccess is false, lets the
	// command reach these hosts, and no others, through a proxy that the call
	// runs in-process. "example.com" matches that name only; "*.example.com"
	// matches its subdomains at any depth, not example.com itself. Matching
	// ignores case and a trailing dot; names are IDNA-normalized. An IP
	// literal, a port, a scheme, a path or an empty pattern is an error, and
	// so is NetworkAccess set as well.
	AllowedDomains []string
}

// check refuses a policy no runner could apply; every sandbox type checks,
// so that a caller learns of the mistake whichever type it runs under.
func (p SandboxPolicy) check() error {
	for _, limit := range []struct {
		name  string
		value int64
	}{
		{"MaxProcesses", int64(p.MaxProcesses)},
		{"MaxFileSize", p.MaxFileSize},
		{"MaxCPUTime", int64(p.MaxCPUTime)},
		{"MaxAddressSpace", p.MaxAddressSpace},
	} {
		if limit.value < 0 {
			return fmt.Errorf("sandboxexec: policy: %s must not be negative, got %d", limit.name, limit.value)
		}
	}
	if err := p.checkFilesystemPolicy(); err != nil {
		return err
	}
	return p.checkNetworkPolicy()
}

// DefaultMaxProcesses is the process limit of a sandboxed call whose policy
// leaves MaxProcesses at zero: room for parallel builds, not for a fork bomb.
const DefaultMaxProcesses = 1024

// Option configures one call to ProcessExecToolCall. A nil Option is
// ignored.
type Option func(*config)

type config struct {
	stdin      io.Reader
	liveStdout io.Writer
	liveStderr io.Writer
	env        []string
	envSet     bool
}

// WithStdin gives the command r as its standard input. Without it, stdin is
// the null device, never the host's stdin.
//
// An *os.File is handed over as it is without a sandbox, as os/exec does.
// In one, the command gets the host's file only where it can only read it
// and change nothing of it: on Linux it is opened anew for reading only
// (through a read-only mount of its own where the host's other mounts are
// read-only to the command, so /proc/self/fd/0 then reads "/"), at the same
// offset, which the file takes back once the command has ended; a socket, a
// pipe, a pseudo-terminal's master or a file open for writing only is
// copied through a pipe while the call lasts. Any other reader is copied by
// a goroutine that the call does not wait for: close r where a blocked Read
// matters. A Read that panics ends the input, and the panic is raised again
// in the caller once the command has ended. See docs/semantics.md.
func WithStdin(r io.Reader) Option {
	return func(c *config) { c.stdin = r }
}

// WithLiveOutput makes every byte the command writes to stdout and stderr go
// to the given writers as it arrives, uncapped, in addition to the capture.
// A nil writer is skipped. The two writers are never called at once, so one
// writer may be given for both. A writer that blocks holds up the reading of
// both streams, and so the call. Once the drain grace is over (500 ms after
// the command's exit, or after the call killed it on timeout or
// cancellation), a writer gets what is left in its pipe only for about 5 ms
// more, and the write it is in; the capture gets all of it. A writer that returns an error, or panics, gets nothing
// more, and the capture goes on; a panic is raised again in the caller once
// the command has ended.
func WithLiveOutput(stdout, stderr io.Writer) Option {
	return func(c *config) { c.liveStdout, c.liveStderr = stdout, stderr }
}

// WithEnv sets the command's environment to env ("KEY=value" entries); where
// a variable has several, the last one counts, as with os/exec. Without it
// the command gets the host's environment minus every variable whose name
// contains KEY, SECRET, TOKEN or PASSWORD, in any case. WithEnv(nil) is an
// empty environment, unlike a nil Cmd.Env in os/exec, which inherits the
// host's: a forgotten environment then runs the command with none (its
// program still found in the host's PATH) rather than with the host's.
//
// With or without WithEnv, a sandboxed runner sets these over what the
// environment holds, so that the command can tell where it runs and reaches
// what the policy allows:
//   - EnvSandbox ("linux" or "seatbelt"), and EnvNetworkDisabled ("1")
//     unless the policy has NetworkAccess; a given value that would claim
//     otherwise is removed.
//   - TMPDIR, a new directory of the call's own, where the call has
//     writable roots, no FullDiskWriteAccess, and a temporary directory
//     (TMPDIR, else /tmp) below none of its roots.
//   - With AllowedDomains, HTTP_PROXY, HTTPS_PROXY and ALL_PROXY and their
//     lower-case twins, pointing at the call's proxy; NO_PROXY, no_proxy
//     and every other variable whose name ends in _proxy, in any letter
//     case, and whose value names a proxy (FTP_PROXY, WSS_PROXY,
//     npm_config_proxy; not a flag like NODE_USE_ENV_PROXY=1), are removed.
//
// SandboxNone sets none of them (see EnvSandbox for a host that is itself
// sandboxed).
func WithEnv(env []string) Option {
	return func(c *config) { c.env, c.envSet = append([]string(nil), env...), true }
}

// dedupEnv keeps the last entry of each variable, where the kept entries
// were, as os/exec does: append(os.Environ(), "K=v") then sets K for every
// program, where getenv(3) would find the first entry and a shell the last.
// Names compare as the OS compares them (without case on Windows). An entry
// without a name ("=" only at its start, or nowhere) is kept as it is, and
// an empty one dropped.
func dedupEnv(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		if name, ok := envName(kv); ok {
			last[name] = i
		}
	}
	out := make([]string, 0, len(env))
	for i, kv := range env {
		name, ok := envName(kv)
		if ok && last[name] != i || !ok && kv == "" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// envName is the name of the variable kv sets. A leading "=" is part of it:
// Windows keeps each drive's directory as "=C:=C:\dir".
func envName(kv string) (string, bool) {
	if kv == "" {
		return "", false
	}
	i := strings.IndexByte(kv[1:], '=')
	if i < 0 {
		return "", false
	}
	name := kv[:i+1]
	if runtime.GOOS == "windows" {
		name = strings.ToUpper(name)
	}
	return name, true
}

func (c *config) environ() []string {
	if c.envSet {
		// Never nil: os.StartProcess gives a nil Env the host's environment.
		return append([]string{}, c.env...)
	}
	return filterSecrets(os.Environ())
}

// filterSecrets drops variables whose names look like they hold credentials.
func filterSecrets(env []string) []string {
	kept := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if containsSecretWord(name) {
			continue
		}
		kept = append(kept, kv)
	}
	return kept
}

// secretWords are what a credential's variable name contains.
var secretWords = [...]string{"KEY", "SECRET", "TOKEN", "PASSWORD"}

// containsSecretWord says whether name contains KEY, SECRET, TOKEN or
// PASSWORD under Unicode case folding, so that the Kelvin sign (U+212A)
// counts as K and the long s (U+017F) as S; strings.ToUpper misses the first.
// Names are nearly always ASCII, and are then matched a byte at a time
// against secretStarts: filtering the host's environment is on every call's
// path.
func containsSecretWord(name string) bool {
	for i := 0; i < len(name); i++ {
		m := secretStarts[name[i]]
		if m == 0 {
			continue
		}
		if m == nonASCII {
			return containsSecretWordFolded(name)
		}
		for j, w := range secretWords {
			if m&(1<<j) != 0 && hasASCIIFoldPrefix(name[i:], w) {
				return true
			}
		}
	}
	return false
}

// secretStarts gives, for each byte, the set of secretWords (bit i for
// word i) that start with it in either case, or nonASCII.
var secretStarts = func() (t [256]uint8) {
	for i, w := range secretWords {
		t[w[0]] |= 1 << i
		t[w[0]|0x20] |= 1 << i
	}
	for b := utf8.RuneSelf; b < len(t); b++ {
		t[b] = nonASCII
	}
	return t
}()

const nonASCII = 0x80

// hasASCIIFoldPrefix says whether the ASCII s starts with the upper-case
// word w, ignoring case.
func hasASCIIFoldPrefix(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for j := 1; j < len(w); j++ {
		if s[j]&^0x20 != w[j] {
			return false
		}
	}
	return true
}

// containsSecretWordFolded is containsSecretWord for any UTF-8.
func containsSecretWordFolded(name string) bool {
	for i := range name {
		for _, w := range secretWords {
			if hasFoldPrefix(name[i:], w) {
				return true
			}
		}
	}
	return false
}

// hasFoldPrefix says whether s starts with the ASCII word w, case folded.
func hasFoldPrefix(s, w string) bool {
	for i := 0; i < len(w); i++ {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || !foldsTo(r, rune(w[i])) {
			return false
		}
		s = s[size:]
	}
	return true
}

// foldsTo says whether r and the rune want are equal under simple folding.
func foldsTo(r, want rune) bool {
	for f := r; ; {
		if f == want {
			return true
		}
		if f = unicode.SimpleFold(f); f == r {
			return false
		}
	}
}
