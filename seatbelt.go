package sandboxexec

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// seatbeltExecutable is the macOS sandbox launcher. It is always run by this
// absolute path, never looked up on PATH, so that nothing earlier on the
// child's PATH can stand in for it.
const seatbeltExecutable = "/usr/bin/sandbox-exec"

// seatbeltBasePolicy is the read-only profile every Seatbelt run starts
// from; see the file for what it allows.
//
//go:embed seatbelt_readonly_policy.sbpl
var seatbeltBasePolicy string

// seatbeltRootParam is the name of the profile parameter that carries the
// i-th writable root.
func seatbeltRootParam(i int) string { return "WRITABLE_ROOT_" + strconv.Itoa(i) }

// seatbeltFullDiskWritePolicy is appended when the policy allows writing
// anywhere the user can.
const seatbeltFullDiskWritePolicy = `
; FullDiskWriteAccess: writing anywhere the user may.
(allow file-write*)
`

// seatbeltNetworkPolicy is appended when the policy allows the network.
const seatbeltNetworkPolicy = `
; NetworkAccess: sockets in and out, and the services that name resolution,
; proxy settings and TLS certificate checks talk to.
(allow network-outbound)
(allow network-inbound)
(allow network-bind)
(allow system-socket
  (require-all
    (socket-domain AF_SYSTEM)
    (socket-protocol 2)))
(allow sysctl-read (sysctl-name-prefix "net.routetable."))
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.networkd")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.trustd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.ocspd"))
`

// seatbeltPolicy is the profile text for nRoots writable roots under
// policy. It depends on nothing else: the roots' paths reach sandbox-exec
// only as -D parameter values, so no path can change what the text says.
func seatbeltPolicy(nRoots int, policy SandboxPolicy) string {
	var b strings.Builder
	b.WriteString(seatbeltBasePolicy)
	if nRoots > 0 {
		b.WriteString("\n; Writable roots, passed as parameters.\n(allow file-write*")
		for i := 0; i < nRoots; i++ {
			b.WriteString("\n  (subpath (param \"")
			b.WriteString(seatbeltRootParam(i))
			b.WriteString("\"))")
		}
		b.WriteString(")\n")
	}
	if policy.FullDiskWriteAccess {
		b.WriteString(seatbeltFullDiskWritePolicy)
	}
	if policy.NetworkAccess {
		b.WriteString(seatbeltNetworkPolicy)
	}
	return b.String()
}

// seatbeltPrefix is the sandbox-exec argv up to, not including, the "--"
// that precedes the command, and the canonical roots it names.
func seatbeltPrefix(writableRoots []string, policy SandboxPolicy) (argv, roots []string, err error) {
	if err := policy.check(); err != nil {
		return nil, nil, err
	}
	roots, err = canonicalRoots(writableRoots)
	if err != nil {
		return nil, nil, err
	}
	argv = make([]string, 0, 3+len(roots))
	argv = append(argv, seatbeltExecutable, "-p", seatbeltPolicy(len(roots), policy))
	for i, root := range roots {
		argv = append(argv, "-D"+seatbeltRootParam(i)+"="+root)
	}
	return argv, roots, nil
}

// CreateSeatbeltCommand returns the argv that runs command under macOS
// Seatbelt: /usr/bin/sandbox-exec, "-p" and the profile text, one
// -DWRITABLE_ROOT_<i>=<root> per writable root, "--", then command.
//
// The profile denies everything but reading files, running programs and
// the little that shells, compilers and runtimes need; writes are allowed
// below the writable roots only, or everywhere with FullDiskWriteAccess;
// the network only with NetworkAccess.
//
// Roots follow the same rule as the Linux sandbox: each
// must be an absolute directory path without NUL or ".."; it is resolved
// through symlinks, because Seatbelt matches canonical paths (/tmp is
// /private/tmp on macOS), and skipped if it does not exist; one reached
// through a symlink inside another writable root is an error. A root's text is
// passed only as a parameter value, never spliced into the profile, so no
// character in a path can change the rules. CreateSeatbeltCommand is
// compiled on every platform; running its result needs macOS.
func CreateSeatbeltCommand(command, writableRoots []string, policy SandboxPolicy) ([]string, error) {
	if len(command) == 0 {
		return nil, ErrEmptyCommand
	}
	if command[0] == "" {
		return nil, fmt.Errorf("%w: the program name, command[0], is empty", ErrEmptyCommand)
	}
	for i, arg := range command {
		if strings.IndexByte(arg, 0) >= 0 {
			return nil, fmt.Errorf("sandboxexec: command argument %d contains a NUL byte", i)
		}
	}
	argv, _, err := seatbeltPrefix(writableRoots, policy)
	if err != nil {
		return nil, err
	}
	argv = append(argv, "--")
	return append(argv, command...), nil
}

// seatbeltRunner starts commands through sandbox-exec with a profile built
// once for the call.
type seatbeltRunner struct {
	prefix []string // sandbox-exec argv before "--"
	roots  []string // canonical
	policy SandboxPolicy
}

func newSeatbeltRunner(writableRoots []string, policy SandboxPolicy) (*seatbeltRunner, error) {
	prefix, roots, err := seatbeltPrefix(writableRoots, policy)
	if err != nil {
		return nil, err
	}
	return &seatbeltRunner{prefix: prefix, roots: roots, policy: policy}, nil
}

// request is req rewritten to run under sandbox-exec, and the TMPDIR of
// the call's own that it writes to, if any (see privateTMPDIR), which the
// caller removes. sandbox-exec is given the program lookPath resolved, so it
// does no PATH search of its own.
func (r *seatbeltRunner) request(req *spawnRequest) (_ *spawnRequest, tmp string, err error) {
	out := *req
	out.path = seatbeltExecutable
	out.env = withSandboxEnv(req.env, "seatbelt", !r.policy.NetworkAccess)
	prefix := r.prefix
	if !r.policy.FullDiskWriteAccess {
		out.env, tmp, err = privateTMPDIR(out.env, r.roots)
		if err != nil {
			return nil, "", err
		}
	}
	if tmp != "" {
		prefix, _, err = seatbeltPrefix(append(slices.Clip(r.roots), tmp), r.policy)
		if err != nil {
			removeTMPDIR(tmp)
			return nil, "", err
		}
	}
	argv := make([]string, 0, len(prefix)+1+len(req.argv))
	argv = append(argv, prefix...)
	argv = append(argv, "--", req.path)
	out.argv = append(argv, req.argv[1:]...)
	return &out, tmp, nil
}

func (r *seatbeltRunner) start(req *spawnRequest) (*child, error) {
	out, tmp, err := r.request(req)
	if err != nil {
		return nil, err
	}
	c, err := startPlain(out)
	if err != nil {
		removeTMPDIR(tmp)
		return nil, err
	}
	if tmp != "" {
		release := c.release
		c.release = func() {
			removeTMPDIR(tmp)
			if release != nil {
				release()
			}
		}
	}
	return c, nil
}
