package sandboxexec

import (
	_ "embed"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
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

// seatbeltProxyPolicy is appended, instead of seatbeltNetworkPolicy, when
// the policy names AllowedDomains: the command may connect to the call's
// proxy on the loopback interface (its port a parameter) and nowhere else:
// no DNS, no UNIX socket, no listening. The proxy resolves names and dials
// for it. The certificate services stay in reach so that TLS through the
// proxy can be checked (without trustd, curl and other Security.framework
// clients cannot verify a server). That is a known gap: trustd, outside
// the sandbox, fetches the URLs a certificate names (OCSP, CRL, AIA
// intermediates) itself, so a command that presents a certificate it made
// can have trustd request a URL of its choosing, a channel that the proxy
// does not see and AllowedDomains does not bound (docs/network-policy.md).
const seatbeltProxyPolicy = `
; AllowedDomains: outbound connections to the call's proxy only.
(allow network-outbound
  (remote ip (string-append "localhost:" (param "PROXY_PORT"))))
(allow mach-lookup
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.trustd")
  (global-name "com.apple.trustd.agent"))
`

// seatbeltProxyParam carries the proxy's port.
const seatbeltProxyParam = "PROXY_PORT"

// The parameters of the filesystem policy, numbered from 0 in each family.
const (
	seatbeltReadOnlyDirParam  = "READ_ONLY_DIR_"
	seatbeltReadOnlyFileParam = "READ_ONLY_FILE_"
	seatbeltDenyDirParam      = "DENY_READ_DIR_"
	seatbeltDenyFileParam     = "DENY_READ_FILE_"
	seatbeltPinnedParam       = "PINNED_DIR_"
)

// seatbeltParams is what one profile is made for: the canonical paths that
// reach sandbox-exec as -D parameters, and the proxy's port (0: none).
// ReadOnly and Deny paths are split into directories, matched with subpath,
// and files, matched with literal. Pinned are the directories above them,
// which may not be renamed or removed: Seatbelt matches paths, so moving
// an ancestor (mv R R2, then write R2/.git/config) would carry a protected
// path to one that no rule names.
type seatbeltParams struct {
	roots                       []string
	readOnlyDirs, readOnlyFiles []string
	denyDirs, denyFiles         []string
	pinned                      []string
	proxyPort                   int
}

// seatbeltDataVolume is where macOS mounts the volume that /Users, /private
// and the rest of the writable system live on; its paths reach the same
// files as the firmlinked names at the top. A variable for tests.
var seatbeltDataVolume = "/System/Volumes/Data"

// newSeatbeltParams sorts masks into the families a profile names, adding
// the data volume's name for each path where it reaches the same file, so
// that no second name for a protected path is left without a rule.
func newSeatbeltParams(roots []string, masks fsMasks, proxyPort int) seatbeltParams {
	p := seatbeltParams{roots: roots, proxyPort: proxyPort}
	for _, path := range withDataVolumeNames(masks.ReadOnly) {
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			p.readOnlyFiles = append(p.readOnlyFiles, path)
		} else {
			// A directory, or gone since it was resolved: subpath covers it
			// and anything made in its place.
			p.readOnlyDirs = append(p.readOnlyDirs, path)
		}
	}
	p.denyDirs = withDataVolumeNames(masks.DenyDirs)
	p.denyFiles = withDataVolumeNames(masks.DenyFiles)
	seen := map[string]bool{}
	for _, list := range [][]string{p.readOnlyDirs, p.readOnlyFiles, p.denyDirs, p.denyFiles} {
		for _, path := range list {
			for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
				if !seen[dir] {
					seen[dir] = true
					p.pinned = append(p.pinned, dir)
				}
			}
		}
	}
	return p
}

// withDataVolumeNames is paths, each followed by its other name where
// that is the same file: its name under seatbeltDataVolume, or, for a path
// given under the data volume (through a symlink that points there, or as
// the caller wrote it), its name at the top. Seatbelt matches the name at
// the top (/Users/..., /private/...) for a file reached by either, so a
// rule on the data volume's name alone would match nothing (found in
// review: DenyRead "/System/Volumes/Data/Users/u/.ssh" denied nothing).
func withDataVolumeNames(paths []string) []string {
	out := make([]string, 0, len(paths))
	seen := make(map[string]bool, len(paths))
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, path := range paths {
		add(path)
		alias := filepath.Join(seatbeltDataVolume, path)
		if pathWithin(path, seatbeltDataVolume) {
			alias = filepath.Join(string(filepath.Separator), strings.TrimPrefix(path, seatbeltDataVolume))
			if alias == string(filepath.Separator) {
				continue // the volume itself: "/" is another directory
			}
		}
		a, errA := os.Stat(alias)
		b, errB := os.Stat(path)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			add(alias)
		}
	}
	return out
}

// seatbeltPolicy is the profile text for params under policy. It depends
// only on how many paths of each kind params holds and whether it has a
// proxy: every path and the port reach sandbox-exec only as -D parameter
// values, so no path can change what the text says.
func seatbeltPolicy(params seatbeltParams, policy SandboxPolicy) string {
	var b strings.Builder
	b.WriteString(seatbeltBasePolicy)
	if len(params.roots) > 0 {
		b.WriteString("\n; Writable roots, passed as parameters.\n(allow file-write*")
		for i := range params.roots {
			b.WriteString("\n  (subpath (param \"")
			b.WriteString(seatbeltRootParam(i))
			b.WriteString("\"))")
		}
		b.WriteString(")\n")
	}
	if policy.FullDiskWriteAccess {
		b.WriteString(seatbeltFullDiskWritePolicy)
	}
	switch {
	case policy.NetworkAccess:
		b.WriteString(seatbeltNetworkPolicy)
	case params.proxyPort != 0:
		b.WriteString(seatbeltProxyPolicy)
	}
	// The denials come last, so that they win over every allow above,
	// FullDiskWriteAccess's included. Hard links and clones, which would
	// give a protected file a second name, are denied throughout by
	// (deny default): no rule allows file-link or file-clone.
	if len(params.readOnlyDirs)+len(params.readOnlyFiles) > 0 {
		b.WriteString("\n; ReadOnlySubpaths: nothing in them or of them may change.\n(deny file-write*")
		writeParamFilters(&b, "subpath", seatbeltReadOnlyDirParam, len(params.readOnlyDirs))
		writeParamFilters(&b, "literal", seatbeltReadOnlyFileParam, len(params.readOnlyFiles))
		b.WriteString(")\n")
	}
	if len(params.denyDirs)+len(params.denyFiles) > 0 {
		b.WriteString("\n; DenyRead: no reading, listing, running or writing.\n(deny file-read* file-write* process-exec")
		writeParamFilters(&b, "subpath", seatbeltDenyDirParam, len(params.denyDirs))
		writeParamFilters(&b, "literal", seatbeltDenyFileParam, len(params.denyFiles))
		b.WriteString(")\n")
	}
	if len(params.pinned) > 0 {
		b.WriteString("\n; The directories above them stay where they are.\n(deny file-write-unlink")
		writeParamFilters(&b, "literal", seatbeltPinnedParam, len(params.pinned))
		b.WriteString(")\n")
	}
	return b.String()
}

// writeParamFilters writes n filters "(kind (param "<prefix><i>"))".
func writeParamFilters(b *strings.Builder, kind, prefix string, n int) {
	for i := 0; i < n; i++ {
		fmt.Fprintf(b, "\n  (%s (param \"%s%d\"))", kind, prefix, i)
	}
}

// seatbeltArgv is the sandbox-exec argv for params up to, not including,
// the "--" that precedes the command.
func seatbeltArgv(params seatbeltParams, policy SandboxPolicy) []string {
	argv := []string{seatbeltExecutable, "-p", seatbeltPolicy(params, policy)}
	for i, root := range params.roots {
		argv = append(argv, "-D"+seatbeltRootParam(i)+"="+root)
	}
	for _, family := range []struct {
		prefix string
		paths  []string
	}{
		{seatbeltReadOnlyDirParam, params.readOnlyDirs},
		{seatbeltReadOnlyFileParam, params.readOnlyFiles},
		{seatbeltDenyDirParam, params.denyDirs},
		{seatbeltDenyFileParam, params.denyFiles},
		{seatbeltPinnedParam, params.pinned},
	} {
		for i, path := range family.paths {
			argv = append(argv, "-D"+family.prefix+strconv.Itoa(i)+"="+path)
		}
	}
	if params.proxyPort != 0 {
		argv = append(argv, "-D"+seatbeltProxyParam+"="+strconv.Itoa(params.proxyPort))
	}
	return argv
}

// seatbeltPrefix checks policy, resolves the roots and what the filesystem
// policy protects under them, and returns the profile's parameters. A
// policy with AllowedDomains needs proxyPort, the port of the call's proxy
// on 127.0.0.1; without AllowedDomains proxyPort must be 0.
func seatbeltPrefix(writableRoots []string, policy SandboxPolicy, proxyPort int) (seatbeltParams, error) {
	if err := policy.check(); err != nil {
		return seatbeltParams{}, err
	}
	if (len(policy.AllowedDomains) > 0) != (proxyPort != 0) || proxyPort < 0 || proxyPort > 65535 {
		return seatbeltParams{}, fmt.Errorf("sandboxexec: seatbelt: proxy port %d does not fit AllowedDomains %q", proxyPort, policy.AllowedDomains)
	}
	roots, err := canonicalRoots(writableRoots)
	if err != nil {
		return seatbeltParams{}, err
	}
	masks, err := resolveMasksIn(roots, policy, hostMayWrite)
	if err != nil {
		return seatbeltParams{}, err
	}
	return newSeatbeltParams(roots, masks, proxyPort), nil
}

// CreateSeatbeltCommand returns the argv that runs command under macOS
// Seatbelt: /usr/bin/sandbox-exec, "-p" and the profile text, one
// -DWRITABLE_ROOT_<i>=<root> per writable root, the parameters of the
// filesystem policy (below), "--", then command.
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
//
// The filesystem policy holds under FullDiskWriteAccess and NetworkAccess
// too: each existing ReadOnlySubpaths entry (and a worktree's gitdir, the
// .git of each submodule in a root, a core.hooksPath directory there) gets
// a rule that denies writes in it and of it, each existing DenyRead path one
// that denies every access (EPERM, not the empty view Linux gives), and the
// directories above them may not be renamed, since the rules follow paths.
// See docs/macos.md for the parameters.
//
// AllowedDomains needs the proxy that ProcessExecToolCall runs for each
// call, which an argv cannot carry: CreateSeatbeltCommand refuses a policy
// that names any.
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
	if err := policy.check(); err != nil {
		return nil, err
	}
	if len(policy.AllowedDomains) > 0 {
		return nil, errors.New("sandboxexec: CreateSeatbeltCommand cannot apply AllowedDomains: they need the " +
			"proxy that ProcessExecToolCall runs for each call; use ProcessExecToolCall with SandboxMacosSeatbelt")
	}
	params, err := seatbeltPrefix(writableRoots, policy, 0)
	if err != nil {
		return nil, err
	}
	argv := append(seatbeltArgv(params, policy), "--")
	return append(argv, command...), nil
}

// seatbeltRunner starts commands through sandbox-exec with a profile built
// once for the call.
type seatbeltRunner struct {
	params seatbeltParams // the call's roots (canonical), masks and proxy port
	policy SandboxPolicy
	// proxyEnv are the proxy's variables, where AllowedDomains asks for
	// one: a "KEY=value" entry is set in the command's environment over
	// what it has, a bare "KEY" (NO_PROXY) removed from it.
	proxyEnv []string
}

// newSeatbeltRunner builds the call's profile. proxyPort is the port of the
// call's proxy on 127.0.0.1 when the policy has AllowedDomains, else 0.
func newSeatbeltRunner(writableRoots []string, policy SandboxPolicy, proxyPort int) (*seatbeltRunner, error) {
	params, err := seatbeltPrefix(writableRoots, policy, proxyPort)
	if err != nil {
		return nil, err
	}
	return &seatbeltRunner{params: params, policy: policy}, nil
}

// request is req rewritten to run under sandbox-exec, and the TMPDIR of
// the call's own that it writes to, if any (see privateTMPDIR), which the
// caller removes. sandbox-exec is given the program lookPath resolved, so it
// does no PATH search of its own.
func (r *seatbeltRunner) request(req *spawnRequest) (_ *spawnRequest, tmp string, err error) {
	out := *req
	out.path = seatbeltExecutable
	out.env = withSandboxEnv(req.env, "seatbelt", !r.policy.NetworkAccess)
	// The removals first, then the call's own: in any letter case, as
	// proxyEnv, and a proxy variable stands for every proxy of the
	// host's (see isHostProxy), the call's too were it set before.
	for _, kv := range r.proxyEnv {
		if !strings.Contains(kv, "=") {
			out.env = slices.DeleteFunc(slices.Clip(out.env), func(e string) bool {
				name, _ := envName(e)
				return strings.EqualFold(name, kv) || isProxyVariable(kv) && isHostProxy(e)
			})
		}
	}
	for _, kv := range r.proxyEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out.env = setEnv(out.env, k, v)
		}
	}
	params := r.params
	if !r.policy.FullDiskWriteAccess {
		out.env, tmp, err = privateTMPDIR(out.env, params.roots)
		if err != nil {
			return nil, "", err
		}
	}
	if tmp != "" {
		// A new directory: nothing in it to protect, so the masks stay.
		params.roots = append(slices.Clip(params.roots), tmp)
	}
	prefix := seatbeltArgv(params, r.policy)
	argv := make([]string, 0, len(prefix)+2+len(req.argv))
	argv = append(argv, prefix...)
	argv = append(argv, "--", req.path)
	out.argv = append(argv, req.argv[1:]...)
	return &out, tmp, nil
}

func (r *seatbeltRunner) start(req *spawnRequest) (_ *child, err error) {
	var proxy callProxy
	var proxyListener net.Listener
	if len(r.policy.AllowedDomains) > 0 {
		// The call's proxy listens on the host's loopback, the only place
		// the profile lets the command connect to.
		if proxyListener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("sandboxexec: the proxy's listener: %w", err)
		}
		if proxy, err = startCallProxy(r.policy); err != nil {
			proxyListener.Close()
			return nil, err
		}
		defer func() {
			if err != nil {
				proxyListener.Close()
				proxy.Close()
			}
		}()
		call := *r
		call.params.proxyPort = proxyListener.Addr().(*net.TCPAddr).Port
		call.proxyEnv = append(append([]string(nil), proxyVariables...), proxy.Env(proxyListener.Addr().String())...)
		r = &call
	}
	out, tmp, err := r.request(req)
	if err != nil {
		return nil, err
	}
	c, err := startPlain(out)
	if err != nil {
		removeTMPDIR(tmp)
		return nil, err
	}
	if proxy != nil {
		go proxy.Serve(proxyListener)
		c.deniedHosts = proxy.Denied
		release := c.release
		c.release = func() {
			proxy.Close()
			if release != nil {
				release()
			}
		}
	}
	if tmp != "" {
		release := c.release
		c.release = func() {
			afterCall(func() { removeTMPDIR(tmp) })
			if release != nil {
				release()
			}
		}
	}
	return c, nil
}
