package sandboxexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The exact blocks CreateSeatbeltCommand appends to the base profile. They
// are spelled out here, not taken from seatbelt.go, so that a change to the
// rules shows up as a failing golden test.
const (
	wantSeatbeltFullDisk = `
; FullDiskWriteAccess: writing anywhere the user may.
(allow file-write*)
`
	wantSeatbeltNetwork = `
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
)

func wantSeatbeltRoots(n int) string {
	if n == 0 {
		return ""
	}
	s := "\n; Writable roots, passed as parameters.\n(allow file-write*"
	for i := 0; i < n; i++ {
		s += fmt.Sprintf("\n  (subpath (param \"WRITABLE_ROOT_%d\"))", i)
	}
	return s + ")\n"
}

// realDir is a new directory under t.TempDir with symlinks resolved, as
// CreateSeatbeltCommand will pass it.
func realDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Mkdir(dir, 0o755))
	resolved, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	return resolved
}

func TestSeatbeltBasePolicy(t *testing.T) {
	forms := checkSeatbeltPolicy(t, seatbeltBasePolicy, nil)
	require.GreaterOrEqual(t, len(forms), 2)
	assert.Equal(t, "(version 1)", forms[0].String())
	assert.Equal(t, "(deny default)", forms[1].String())
	for _, f := range forms {
		assert.NotEqual(t, "(allow default)", f.String())
		if !f.isCall("allow") {
			continue
		}
		// The read-only profile has no network rule, and writes only to
		// named devices: every write rule is filtered, by /dev paths only.
		var ops, filters []sexp
		for _, c := range f.list[1:] {
			if c.isList {
				filters = append(filters, c)
			} else {
				ops = append(ops, c)
			}
		}
		for _, op := range ops {
			assert.False(t, strings.HasPrefix(op.atom, "network") || op.atom == "system-socket",
				"base policy allows %s: %s", op.atom, f)
			if strings.HasPrefix(op.atom, "file-write") {
				assert.NotEmpty(t, filters, "unfiltered write rule: %s", f)
				for _, p := range sexpPaths(filters) {
					assert.True(t, strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "^/dev/"),
						"write rule outside /dev: %s", f)
				}
			}
		}
	}
	assert.Contains(t, seatbeltBasePolicy, "(allow file-read*)")
	assert.Contains(t, seatbeltBasePolicy, "(allow process-exec)")
	assert.Contains(t, seatbeltBasePolicy, "(allow process-fork)")
	assert.Contains(t, seatbeltBasePolicy, "(allow signal (target same-sandbox))")
	assert.Contains(t, seatbeltBasePolicy, `(literal "/dev/null")`)
	assert.Contains(t, seatbeltBasePolicy, "(allow pseudo-tty)")
	assert.Contains(t, seatbeltBasePolicy, "(allow sysctl-read")
}

func TestCreateSeatbeltCommandNoRoots(t *testing.T) {
	argv, err := CreateSeatbeltCommand([]string{"ls", "-l"}, nil, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy, "--", "ls", "-l"}, argv)
	checkSeatbeltArgv(t, argv)
	rules := stripSexpComments(argv[2])
	assert.NotContains(t, rules, "(allow file-write*)")
	assert.NotContains(t, rules, "param")
	assert.NotContains(t, rules, "network")
}

// sexpPaths is the path strings of literal, subpath and regex filters in
// forms.
func sexpPaths(forms []sexp) []string {
	var out []string
	for _, f := range forms {
		if f.isCall("literal") || f.isCall("subpath") || f.isCall("regex") {
			for _, c := range f.list[1:] {
				if c.str {
					out = append(out, c.atom)
				}
			}
		}
		out = append(out, sexpPaths(f.list)...)
	}
	return out
}

func TestCreateSeatbeltCommandSeveralRoots(t *testing.T) {
	a, b, c := realDir(t, "a"), realDir(t, "b"), realDir(t, "c")
	// Trailing slashes and dot segments are cleaned; a root given twice is
	// passed once.
	argv, err := CreateSeatbeltCommand([]string{"/bin/sh", "-c", "echo hi"},
		[]string{a, b + "/", filepath.Join(c, ".") + "/.", a}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy + wantSeatbeltRoots(3),
		"-DWRITABLE_ROOT_0=" + a,
		"-DWRITABLE_ROOT_1=" + b,
		"-DWRITABLE_ROOT_2=" + c,
		"--", "/bin/sh", "-c", "echo hi",
	}, argv)
	checkSeatbeltArgv(t, argv)
}

func TestCreateSeatbeltCommandSymlinkRoot(t *testing.T) {
	target := realDir(t, "target")
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(target, link))
	// A symlink in the middle of the path is resolved too.
	require.NoError(t, os.Mkdir(filepath.Join(target, "sub"), 0o755))

	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{link, filepath.Join(link, "sub")}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy + wantSeatbeltRoots(2),
		"-DWRITABLE_ROOT_0=" + target,
		"-DWRITABLE_ROOT_1=" + filepath.Join(target, "sub"),
		"--", "true",
	}, argv)
	checkSeatbeltArgv(t, argv)
}

func TestCreateSeatbeltCommandRelativeRoot(t *testing.T) {
	for _, root := range []string{"rel/dir", ".", "", "./x", "../up"} {
		argv, err := CreateSeatbeltCommand([]string{"true"}, []string{t.TempDir(), root}, SandboxPolicy{})
		assert.ErrorContains(t, err, "not an absolute path", "root %q", root)
		assert.Nil(t, argv, "root %q", root)
	}
}

func TestCreateSeatbeltCommandMissingRoot(t *testing.T) {
	existing := realDir(t, "existing")
	missing := filepath.Join(t.TempDir(), "missing", "deeper")
	dangling := filepath.Join(t.TempDir(), "dangling")
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "nowhere"), dangling))

	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{missing, dangling, existing}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy + wantSeatbeltRoots(1),
		"-DWRITABLE_ROOT_0=" + existing,
		"--", "true",
	}, argv)
	checkSeatbeltArgv(t, argv)

	// Only missing roots: the profile is the read-only one.
	argv, err = CreateSeatbeltCommand([]string{"true"}, []string{missing}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy, "--", "true"}, argv)
}

// Roots follow the Linux sandbox's rule: a file, a path through a file or a
// ".." component is an error, not a root that is skipped.
func TestCreateSeatbeltCommandBadRoot(t *testing.T) {
	dir := realDir(t, "dir")
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, root := range []string{file, filepath.Join(file, "below"), dir + "/../dir"} {
		argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, SandboxPolicy{})
		assert.Error(t, err, "root %q", root)
		assert.Nil(t, argv, "root %q", root)
	}
}

func TestCreateSeatbeltCommandHostileRootName(t *testing.T) {
	names := []string{
		`quo"te`,
		`pa(ren)s`,
		"new\nline",
		`x")) (allow default) ("`,
		"semi;colon",
		`back\slash`,
		`#"regex"`,
	}
	var roots, want []string
	for _, name := range names {
		dir := realDir(t, name)
		roots = append(roots, dir)
		want = append(want, dir)
	}
	argv, err := CreateSeatbeltCommand([]string{"true"}, roots, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, seatbeltBasePolicy+wantSeatbeltRoots(len(names)), argv[2])
	for i, dir := range want {
		assert.Equal(t, fmt.Sprintf("-DWRITABLE_ROOT_%d=%s", i, dir), argv[3+i])
		assert.NotContains(t, argv[2], dir)
		assert.NotContains(t, argv[2], names[i])
	}
	assert.NotContains(t, argv[2], "(allow default)")
	checkSeatbeltArgv(t, argv)
}

func TestCreateSeatbeltCommandNULRoot(t *testing.T) {
	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{"/tmp/a\x00b"}, SandboxPolicy{})
	assert.ErrorContains(t, err, "NUL")
	assert.Nil(t, argv)
}

func TestCreateSeatbeltCommandBadCommand(t *testing.T) {
	_, err := CreateSeatbeltCommand(nil, nil, SandboxPolicy{})
	assert.ErrorIs(t, err, ErrEmptyCommand)
	_, err = CreateSeatbeltCommand([]string{"", "arg"}, nil, SandboxPolicy{})
	assert.ErrorIs(t, err, ErrEmptyCommand)
	_, err = CreateSeatbeltCommand([]string{"echo", "a\x00b"}, nil, SandboxPolicy{})
	assert.ErrorContains(t, err, "NUL")
	_, err = CreateSeatbeltCommand([]string{"true"}, nil, SandboxPolicy{MaxProcesses: -5})
	assert.ErrorContains(t, err, "MaxProcesses must not be negative")
}

func TestCreateSeatbeltCommandNetwork(t *testing.T) {
	root := realDir(t, "root")
	on, err := CreateSeatbeltCommand([]string{"curl", "https://example.com"}, []string{root}, SandboxPolicy{NetworkAccess: true})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy + wantSeatbeltRoots(1) + wantSeatbeltNetwork,
		"-DWRITABLE_ROOT_0=" + root,
		"--", "curl", "https://example.com",
	}, on)
	checkSeatbeltArgv(t, on)

	off, err := CreateSeatbeltCommand([]string{"curl", "https://example.com"}, []string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, seatbeltBasePolicy+wantSeatbeltRoots(1), off[2])
	// Without NetworkAccess there is no network rule at all.
	for _, f := range checkSeatbeltArgv(t, off) {
		if f.isCall("allow") {
			for _, op := range f.list[1:] {
				assert.False(t, strings.HasPrefix(op.atom, "network") || op.atom == "system-socket",
					"network rule without NetworkAccess: %s", f)
			}
		}
	}
	assert.NotContains(t, off[2], "com.apple.SystemConfiguration")
	assert.NotContains(t, off[2], "trustd")
}

func TestCreateSeatbeltCommandFullDiskWrite(t *testing.T) {
	argv, err := CreateSeatbeltCommand([]string{"touch", "/x"}, nil, SandboxPolicy{FullDiskWriteAccess: true})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy + wantSeatbeltFullDisk,
		"--", "touch", "/x",
	}, argv)
	checkSeatbeltArgv(t, argv)

	root := realDir(t, "root")
	argv, err = CreateSeatbeltCommand([]string{"true"}, []string{root},
		SandboxPolicy{FullDiskWriteAccess: true, NetworkAccess: true})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/usr/bin/sandbox-exec", "-p",
		seatbeltBasePolicy + wantSeatbeltRoots(1) + wantSeatbeltFullDisk + wantSeatbeltNetwork,
		"-DWRITABLE_ROOT_0=" + root,
		"--", "true",
	}, argv)
	checkSeatbeltArgv(t, argv)
}

func TestSeatbeltRunnerRequest(t *testing.T) {
	root := realDir(t, "root")
	r, err := newSeatbeltRunner([]string{root}, SandboxPolicy{}, 0)
	require.NoError(t, err)
	req := &spawnRequest{
		path: "/bin/echo",
		argv: []string{"echo", "a", "b"},
		dir:  root,
		env:  []string{"PATH=/usr/bin:/bin", "SANDBOXEXEC_SANDBOX=spoofed", "HOME=/home/x"},
	}
	orig := *req
	got, tmp, err := r.request(req)
	require.NoError(t, err)
	defer removeTMPDIR(tmp)
	// /tmp is not below the root: the command gets a TMPDIR of its own, as
	// on Linux, and it is a writable root.
	require.NotEmpty(t, tmp)
	assert.DirExists(t, tmp)
	assert.Equal(t, "/usr/bin/sandbox-exec", got.path)
	want, err := CreateSeatbeltCommand([]string{"/bin/echo", "a", "b"}, []string{root, tmp}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, want, got.argv)
	assert.Equal(t, root, got.dir)
	assert.Equal(t, []string{"PATH=/usr/bin:/bin", "HOME=/home/x",
		"SANDBOXEXEC_SANDBOX=seatbelt", "SANDBOXEXEC_NETWORK_DISABLED=1", "TMPDIR=" + tmp}, got.env)
	// The caller's request is left as it was.
	assert.Equal(t, orig.path, req.path)
	assert.Equal(t, []string{"echo", "a", "b"}, req.argv)
	assert.Equal(t, []string{"PATH=/usr/bin:/bin", "SANDBOXEXEC_SANDBOX=spoofed", "HOME=/home/x"}, req.env)

	r, err = newSeatbeltRunner(nil, SandboxPolicy{NetworkAccess: true}, 0)
	require.NoError(t, err)
	got, tmp, err = r.request(&spawnRequest{path: "/bin/true", argv: []string{"true"},
		env: []string{"SANDBOXEXEC_NETWORK_DISABLED=1"}})
	require.NoError(t, err)
	assert.Empty(t, tmp, "no roots: no TMPDIR of its own")
	assert.Equal(t, []string{"SANDBOXEXEC_SANDBOX=seatbelt"}, got.env)
	assert.Equal(t, []string{"--", "/bin/true"}, got.argv[len(got.argv)-2:])

	_, err = newSeatbeltRunner([]string{"relative"}, SandboxPolicy{}, 0)
	assert.Error(t, err)
}

// The command gets a TMPDIR it may write to: the one it has when that is
// below a writable root or the policy has FullDiskWriteAccess, else one of
// the call's own; without writable roots, the one it has.
func TestSeatbeltRunnerTMPDIR(t *testing.T) {
	root := realDir(t, "root")
	other := realDir(t, "other")
	inRoot := filepath.Join(root, "tmp")
	require.NoError(t, os.Mkdir(inRoot, 0o755))
	for _, tc := range []struct {
		name   string
		roots  []string
		policy SandboxPolicy
		tmpdir string // the host's; "" for none
		want   string
	}{
		{"none, /tmp outside the roots", []string{root}, SandboxPolicy{}, "", "(own)"},
		{"outside the roots", []string{other, root}, SandboxPolicy{}, "/var/folders/x/T", "(own)"},
		{"below a root", []string{other, root}, SandboxPolicy{}, inRoot, inRoot},
		{"full disk write", []string{root}, SandboxPolicy{FullDiskWriteAccess: true}, "/var/folders/x/T", "/var/folders/x/T"},
		{"no roots", nil, SandboxPolicy{}, "/var/folders/x/T", "/var/folders/x/T"},
	} {
		r, err := newSeatbeltRunner(tc.roots, tc.policy, 0)
		require.NoError(t, err, tc.name)
		env := []string{"PATH=/usr/bin:/bin"}
		if tc.tmpdir != "" {
			env = append(env, "TMPDIR="+tc.tmpdir)
		}
		got, tmp, err := r.request(&spawnRequest{path: "/bin/true", argv: []string{"true"}, env: env})
		require.NoError(t, err, tc.name)
		want := tc.want
		if want == "(own)" {
			require.NotEmpty(t, tmp, tc.name)
			want = tmp
			assert.Contains(t, got.argv, fmt.Sprintf("-DWRITABLE_ROOT_%d=%s", len(tc.roots), tmp), tc.name)
		} else {
			assert.Empty(t, tmp, tc.name)
		}
		removeTMPDIR(tmp)
		var tmpdirs []string
		for _, kv := range got.env {
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
				tmpdirs = append(tmpdirs, v)
			}
		}
		assert.Equal(t, []string{want}, tmpdirs, tc.name)
	}
}

// FuzzCreateSeatbeltCommand feeds arbitrary root strings, as they are and
// below an existing directory, with a read-only name (made in that
// directory) and the roots as DenyRead paths, and checks that the profile
// text is the fixed one for the number of parameters of each kind, stays
// balanced, and contains no path text that is not already part of the
// fixed profile.
func FuzzCreateSeatbeltCommand(f *testing.F) {
	f.Add("/", "a", "rel", ".git", false, false, false)
	f.Add("/tmp", `x")) (allow default) ("`, "/nonexistent", `y")) (allow default) ("`, true, false, true)
	f.Add("", "new\nline;comment", "(param \"WRITABLE_ROOT_0\")", "", false, true, false)
	f.Add("/tmp/\x00", `#"^/"`, "\\", "a/b", true, true, true)
	f.Add("/..", "../../etc", "/dev/null", "..", false, false, true)
	base := f.TempDir()
	if resolved, err := filepath.EvalSymlinks(base); err == nil {
		base = resolved
	}
	f.Fuzz(func(t *testing.T, r1, r2, r3, ro string, network, fullDisk, deny bool) {
		inBase := filepath.Join(base, r2)
		if strings.HasPrefix(inBase, base+string(filepath.Separator)) && !strings.ContainsRune(r2, 0) {
			os.MkdirAll(inBase, 0o755) // may fail: the root is then skipped
			if checkSubpathName(ro) == nil {
				os.Mkdir(filepath.Join(inBase, ro), 0o755)
			}
		}
		policy := SandboxPolicy{NetworkAccess: network, FullDiskWriteAccess: fullDisk, ReadOnlySubpaths: []string{ro}}
		roots := []string{r1, inBase, r3, "/" + r3}
		if deny {
			policy.DenyRead = []string{r3, "/" + r3}
		}
		argv, err := CreateSeatbeltCommand([]string{"true"}, roots, policy)
		if err != nil {
			assert.Nil(t, argv)
			return
		}
		require.GreaterOrEqual(t, len(argv), 5)
		policyText := argv[2]
		params := seatbeltParamsOf(t, argv)
		assert.Equal(t, seatbeltPolicy(params, policy), policyText)
		checkSeatbeltArgv(t, argv)
		fixed := seatbeltPolicy(params, SandboxPolicy{NetworkAccess: true, FullDiskWriteAccess: true})
		texts := []string{r1, r2, r3, ro, inBase}
		for _, a := range argv[3:] {
			if a == "--" {
				break
			}
			_, value, _ := strings.Cut(a, "=")
			texts = append(texts, value)
		}
		for _, text := range texts {
			if text != "" && strings.Contains(policyText, text) {
				assert.Contains(t, fixed, text, "path text reached the policy")
			}
		}
	})
}

// checkSeatbeltArgv checks an argv from CreateSeatbeltCommand: the fixed
// executable, "-p" and a well-formed profile, -D parameters of the known
// families, each numbered from 0 in order, with absolute paths for values
// (a port for PROXY_PORT), that match the profile's (param ...) references
// one to one, then "--". It returns the profile's top-level forms.
func checkSeatbeltArgv(t *testing.T, argv []string) []sexp {
	t.Helper()
	require.GreaterOrEqual(t, len(argv), 5)
	require.Equal(t, "/usr/bin/sandbox-exec", argv[0])
	require.Equal(t, "-p", argv[1])
	defined := map[string]bool{}
	next := map[string]int{}
	i := 3
	for ; i < len(argv) && argv[i] != "--"; i++ {
		def, ok := strings.CutPrefix(argv[i], "-D")
		require.True(t, ok, "argument %d %q is neither -D nor --", i, argv[i])
		name, value, ok := strings.Cut(def, "=")
		require.True(t, ok, "-D without =: %q", argv[i])
		require.False(t, defined[name], "-D%s given twice", name)
		defined[name] = true
		require.NotContains(t, value, "\x00")
		if name == "PROXY_PORT" {
			port, err := strconv.Atoi(value)
			require.NoError(t, err, "PROXY_PORT %q", value)
			require.True(t, port > 0 && port < 65536, "PROXY_PORT %d", port)
			continue
		}
		m := seatbeltParamRE.FindStringSubmatch(name)
		require.NotNil(t, m, "unknown parameter %q", name)
		require.Equal(t, strconv.Itoa(next[m[1]]), m[2], "parameter %s out of order", name)
		next[m[1]]++
		require.True(t, filepath.IsAbs(value), "parameter value %q is not absolute", value)
	}
	require.Less(t, i, len(argv), "no -- before the command")
	require.Less(t, i+1, len(argv), "no command after --")
	return checkSeatbeltPolicy(t, argv[2], defined)
}

var seatbeltParamRE = regexp.MustCompile(`^(WRITABLE_ROOT_|READ_ONLY_DIR_|READ_ONLY_FILE_|DENY_READ_DIR_|DENY_READ_FILE_|PINNED_DIR_)(0|[1-9][0-9]*)$`)

// seatbeltParamsOf reads the -D parameters of a sandbox-exec argv back into
// the seatbeltParams they came from.
func seatbeltParamsOf(t *testing.T, argv []string) seatbeltParams {
	t.Helper()
	var p seatbeltParams
	for _, a := range argv[3:] {
		if a == "--" {
			break
		}
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "-D"), "=")
		if name == "PROXY_PORT" {
			p.proxyPort, _ = strconv.Atoi(value)
			continue
		}
		m := seatbeltParamRE.FindStringSubmatch(name)
		require.NotNil(t, m, "unknown parameter %q", name)
		list := map[string]*[]string{
			"WRITABLE_ROOT_": &p.roots, "READ_ONLY_DIR_": &p.readOnlyDirs, "READ_ONLY_FILE_": &p.readOnlyFiles,
			"DENY_READ_DIR_": &p.denyDirs, "DENY_READ_FILE_": &p.denyFiles, "PINNED_DIR_": &p.pinned,
		}[m[1]]
		*list = append(*list, value)
	}
	return p
}

var placeholderRE = regexp.MustCompile(`\{\{|\}\}|\$\{|%[-+# 0-9.]*[a-zA-Z!]|<[a-z]+>`)

// checkSeatbeltPolicy parses a profile and checks it: balanced, no
// unexpanded placeholder, every (param "X") names a parameter in defined
// and every defined parameter is used. It returns the top-level forms.
func checkSeatbeltPolicy(t *testing.T, text string, defined map[string]bool) []sexp {
	t.Helper()
	forms, err := parseSexps(text)
	require.NoError(t, err, "policy is not well-formed")
	require.Empty(t, placeholderRE.FindAllString(stripSexpComments(text), -1), "unexpanded placeholder")
	used := map[string]bool{}
	var walk func(sexp)
	walk = func(s sexp) {
		if s.isCall("param") {
			require.Len(t, s.list, 2, "param form %s", s)
			require.True(t, s.list[1].str, "param name is not a string: %s", s)
			name := s.list[1].atom
			require.True(t, defined[name], "(param %q) has no matching -D", name)
			used[name] = true
		}
		for _, c := range s.list {
			walk(c)
		}
	}
	for _, f := range forms {
		require.True(t, f.isList, "top-level atom %s", f)
		walk(f)
	}
	for name := range defined {
		assert.True(t, used[name], "-D%s is never used by the policy", name)
	}
	return forms
}

// sexp is a parsed SBPL form: a list, or an atom (a symbol, number or
// string; str says which of the last).
type sexp struct {
	isList bool
	list   []sexp
	atom   string
	str    bool
}

func (s sexp) isCall(head string) bool {
	return s.isList && len(s.list) > 0 && !s.list[0].str && s.list[0].atom == head
}

func (s sexp) String() string {
	if !s.isList {
		if s.str {
			return fmt.Sprintf("%q", s.atom)
		}
		return s.atom
	}
	parts := make([]string, len(s.list))
	for i, c := range s.list {
		parts[i] = c.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

var errUnbalanced = errors.New("unbalanced parentheses")

// parseSexps reads the forms of an SBPL text: parentheses, "strings" and
// #"regex strings" with backslash escapes, and ; comments to end of line.
func parseSexps(text string) ([]sexp, error) {
	stack := [][]sexp{nil}
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 1 {
				return nil, fmt.Errorf("%w: ')' at offset %d", errUnbalanced, i)
			}
			l := sexp{isList: true, list: stack[len(stack)-1]}
			stack = stack[:len(stack)-1]
			stack[len(stack)-1] = append(stack[len(stack)-1], l)
			i++
		case c == '"' || (c == '#' && i+1 < len(text) && text[i+1] == '"'):
			if c == '#' {
				i++
			}
			var b strings.Builder
			i++
			closed := false
			for i < len(text) {
				if text[i] == '\\' {
					if i+1 >= len(text) {
						break
					}
					b.WriteByte(text[i+1])
					i += 2
					continue
				}
				if text[i] == '"' {
					closed = true
					i++
					break
				}
				b.WriteByte(text[i])
				i++
			}
			if !closed {
				return nil, errors.New("unterminated string")
			}
			stack[len(stack)-1] = append(stack[len(stack)-1], sexp{atom: b.String(), str: true})
		default:
			start := i
			for i < len(text) && !strings.ContainsRune("() \t\r\n;\"", rune(text[i])) {
				i++
			}
			stack[len(stack)-1] = append(stack[len(stack)-1], sexp{atom: text[start:i]})
		}
	}
	if len(stack) != 1 {
		return nil, fmt.Errorf("%w: %d unclosed", errUnbalanced, len(stack)-1)
	}
	return stack[0], nil
}

// stripSexpComments drops ; comments that are not inside strings.
func stripSexpComments(text string) string {
	var b strings.Builder
	inStr := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inStr && c == '\\' && i+1 < len(text):
			b.WriteByte(c)
			b.WriteByte(text[i+1])
			i++
			continue
		case c == '"':
			inStr = !inStr
		case !inStr && c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			if i < len(text) {
				b.WriteByte('\n')
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func TestParseSexps(t *testing.T) {
	forms, err := parseSexps("(a \"b)\" #\"^c(\\\"\" ; (\n (d)) ; )")
	require.NoError(t, err)
	require.Len(t, forms, 1)
	assert.Equal(t, `(a "b)" "^c(\"" (d))`, forms[0].String())
	for _, bad := range []string{"(", ")", "(a))", `("x)`, "(a ; )\n", `(a "\`} {
		_, err := parseSexps(bad)
		assert.Error(t, err, "%q", bad)
	}
	assert.Empty(t, placeholderRE.FindAllString(stripSexpComments("(a \"100%\") ; {{x}}"), -1))
	assert.NotEmpty(t, placeholderRE.FindAllString("(param \"%s\")", -1))
	assert.NotEmpty(t, placeholderRE.FindAllString("(param \"{{ROOT}}\")", -1))
}
