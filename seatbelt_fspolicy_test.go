package sandboxexec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The blocks of the filesystem policy, spelled out as in the other golden
// tests so that a change to the rules fails here.
func wantSeatbeltReadOnly(dirs, files int) string {
	if dirs+files == 0 {
		return ""
	}
	s := "\n; ReadOnlySubpaths: nothing in them or of them may change.\n(deny file-write*"
	for i := 0; i < dirs; i++ {
		s += fmt.Sprintf("\n  (subpath (param \"READ_ONLY_DIR_%d\"))", i)
	}
	for i := 0; i < files; i++ {
		s += fmt.Sprintf("\n  (literal (param \"READ_ONLY_FILE_%d\"))", i)
	}
	return s + ")\n"
}

func wantSeatbeltDenyRead(dirs, files int) string {
	if dirs+files == 0 {
		return ""
	}
	s := "\n; DenyRead: no reading, listing, running or writing.\n(deny file-read* file-write* process-exec"
	for i := 0; i < dirs; i++ {
		s += fmt.Sprintf("\n  (subpath (param \"DENY_READ_DIR_%d\"))", i)
	}
	for i := 0; i < files; i++ {
		s += fmt.Sprintf("\n  (literal (param \"DENY_READ_FILE_%d\"))", i)
	}
	return s + ")\n"
}

func wantSeatbeltPinned(n int) string {
	if n == 0 {
		return ""
	}
	s := "\n; The directories above them stay where they are.\n(deny file-write-unlink"
	for i := 0; i < n; i++ {
		s += fmt.Sprintf("\n  (literal (param \"PINNED_DIR_%d\"))", i)
	}
	return s + ")\n"
}

// pinnedFlags is the -DPINNED_DIR_<i> parameters for dirs.
func pinnedFlags(dirs ...string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = fmt.Sprintf("-DPINNED_DIR_%d=%s", i, d)
	}
	return out
}

// ancestors is every directory above path, nearest first, "/" left out.
func ancestors(path string) []string {
	var out []string
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		out = append(out, dir)
	}
	return out
}

// noDataVolume makes the profile see no second name under the data volume,
// which every path on macOS has, so that the golden argvs hold there too.
// Tests that call it do not run in parallel.
func noDataVolume(t *testing.T) {
	old := seatbeltDataVolume
	seatbeltDataVolume = filepath.Join(t.TempDir(), "no-data-volume")
	t.Cleanup(func() { seatbeltDataVolume = old })
}

func seatbeltCmd(head []string, flags ...[]string) []string {
	out := append([]string(nil), head...)
	for _, f := range flags {
		out = append(out, f...)
	}
	return append(out, "--", "true")
}

// By default .git, .hg and .svn of each root are read-only: a directory by
// subpath, a file by literal; a name that does not exist gets no rule, and
// nothing is created.
func TestCreateSeatbeltCommandReadOnlyDefaults(t *testing.T) {
	noDataVolume(t)
	root := realDir(t, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".hg"), []byte("not a gitdir line\n"), 0o644))

	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, seatbeltCmd([]string{
		"/usr/bin/sandbox-exec", "-p",
		seatbeltBasePolicy + wantSeatbeltRoots(1) + wantSeatbeltReadOnly(1, 1) + wantSeatbeltPinned(len(ancestors(root))+1),
		"-DWRITABLE_ROOT_0=" + root,
		"-DREAD_ONLY_DIR_0=" + filepath.Join(root, ".git"),
		"-DREAD_ONLY_FILE_0=" + filepath.Join(root, ".hg"),
	}, pinnedFlags(append([]string{root}, ancestors(root)...)...)), argv)
	checkSeatbeltArgv(t, argv)
	assert.NoDirExists(t, filepath.Join(root, ".svn"), "a missing name is not created")

	// An empty list protects nothing.
	argv, err = CreateSeatbeltCommand([]string{"true"}, []string{root}, SandboxPolicy{ReadOnlySubpaths: []string{}})
	require.NoError(t, err)
	assert.Equal(t, seatbeltCmd([]string{"/usr/bin/sandbox-exec", "-p", seatbeltBasePolicy + wantSeatbeltRoots(1),
		"-DWRITABLE_ROOT_0=" + root}), argv)

	// A name of the caller's own, in every root.
	other := realDir(t, "other")
	for _, r := range []string{root, other} {
		require.NoError(t, os.Mkdir(filepath.Join(r, ".cfg"), 0o755))
	}
	argv, err = CreateSeatbeltCommand([]string{"true"}, []string{root, other}, SandboxPolicy{ReadOnlySubpaths: []string{".cfg"}})
	require.NoError(t, err)
	params := seatbeltParamsOf(t, argv)
	assert.Equal(t, []string{filepath.Join(root, ".cfg"), filepath.Join(other, ".cfg")}, params.readOnlyDirs)
	assert.Empty(t, params.readOnlyFiles)
	checkSeatbeltArgv(t, argv)
}

// A worktree's .git file is read-only, and so are the git directory it
// names and the common directory that one names, wherever they are.
func TestCreateSeatbeltCommandReadOnlyWorktree(t *testing.T) {
	noDataVolume(t)
	main := realDir(t, "main")
	gitdir := filepath.Join(main, ".git", "worktrees", "wt")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	wt := realDir(t, "wt")
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))

	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{wt}, SandboxPolicy{})
	require.NoError(t, err)
	checkSeatbeltArgv(t, argv)
	params := seatbeltParamsOf(t, argv)
	assert.ElementsMatch(t, []string{gitdir, filepath.Join(main, ".git")}, params.readOnlyDirs)
	assert.Equal(t, []string{filepath.Join(wt, ".git")}, params.readOnlyFiles)
	for _, dir := range append(ancestors(filepath.Join(wt, ".git")), ancestors(gitdir)...) {
		assert.Contains(t, params.pinned, dir)
	}
	assert.Contains(t, argv[2], wantSeatbeltReadOnly(2, 1))
}

// DenyRead paths are resolved; a directory is a subpath, a file a literal;
// missing ones are ignored; the rules hold with every other field set, and
// come after every allow rule.
func TestCreateSeatbeltCommandDenyRead(t *testing.T) {
	noDataVolume(t)
	root := realDir(t, "root")
	secrets := realDir(t, "secrets")
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "key"), []byte("k"), 0o600))
	file := filepath.Join(realDir(t, "etc"), "shadow")
	require.NoError(t, os.WriteFile(file, []byte("s"), 0o600))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(secrets, link))
	missing := filepath.Join(t.TempDir(), "missing")

	policy := SandboxPolicy{ReadOnlySubpaths: []string{}, DenyRead: []string{link, file, missing, secrets + "/."}}
	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, policy)
	require.NoError(t, err)
	pinned := append(ancestors(secrets), ancestors(file)...)
	pinned = dedupStrings(pinned)
	assert.Equal(t, seatbeltCmd([]string{
		"/usr/bin/sandbox-exec", "-p",
		seatbeltBasePolicy + wantSeatbeltRoots(1) + wantSeatbeltDenyRead(1, 1) + wantSeatbeltPinned(len(pinned)),
		"-DWRITABLE_ROOT_0=" + root,
		"-DDENY_READ_DIR_0=" + secrets,
		"-DDENY_READ_FILE_0=" + file,
	}, pinnedFlags(pinned...)), argv)
	checkSeatbeltArgv(t, argv)

	for _, extra := range []SandboxPolicy{
		{FullDiskWriteAccess: true},
		{NetworkAccess: true},
		{FullDiskWriteAccess: true, NetworkAccess: true},
	} {
		p := policy
		p.FullDiskWriteAccess, p.NetworkAccess = extra.FullDiskWriteAccess, extra.NetworkAccess
		if p.FullDiskWriteAccess {
			// The command could repoint the link, in a directory the
			// host's user may write, and a later call would deny what it
			// leads to then: refused, as on Linux.
			_, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, p)
			require.Error(t, err, "%+v", extra)
			assert.ErrorContains(t, err, "DenyRead path")
			assert.ErrorContains(t, err, link)
			p.DenyRead = slices.DeleteFunc(slices.Clone(p.DenyRead), func(d string) bool { return d == link })
		}
		argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, p)
		require.NoError(t, err)
		checkSeatbeltArgv(t, argv)
		text := argv[2]
		deny := strings.Index(text, "(deny file-read* file-write* process-exec")
		require.Positive(t, deny, "%+v", extra)
		for _, allow := range []string{"(allow file-write*)", "(allow network-outbound)", "(allow file-write*\n"} {
			if at := strings.LastIndex(text, allow); at >= 0 {
				assert.Less(t, at, deny, "%q after the denials (%+v)", allow, extra)
			}
		}
		assert.True(t, strings.HasSuffix(text, wantSeatbeltDenyRead(1, 1)+wantSeatbeltPinned(len(pinned))), "%+v", extra)
	}
}

func dedupStrings(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Bad names and paths are errors that name them, before anything else.
func TestCreateSeatbeltCommandBadFilesystemPolicy(t *testing.T) {
	root := realDir(t, "root")
	for _, tc := range []struct {
		policy SandboxPolicy
		want   string
	}{
		{SandboxPolicy{ReadOnlySubpaths: []string{""}}, "empty name"},
		{SandboxPolicy{ReadOnlySubpaths: []string{"a/b"}}, `"a/b"`},
		{SandboxPolicy{ReadOnlySubpaths: []string{".."}}, `".."`},
		{SandboxPolicy{ReadOnlySubpaths: []string{"/etc"}}, `"/etc"`},
		{SandboxPolicy{DenyRead: []string{"rel/path"}}, `"rel/path"`},
		{SandboxPolicy{DenyRead: []string{""}}, "empty path"},
		{SandboxPolicy{DenyRead: []string{"/"}}, "root directory"},
	} {
		argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, tc.policy)
		assert.ErrorContains(t, err, tc.want, "%+v", tc.policy)
		assert.Nil(t, argv)
	}
	// A protected name that is a symlink could be replaced: an error.
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(root, ".git")))
	_, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, SandboxPolicy{})
	assert.ErrorContains(t, err, "symlink")
}

// No character of a protected or denied path reaches the profile text.
func TestCreateSeatbeltCommandHostileMaskNames(t *testing.T) {
	noDataVolume(t)
	var deny []string
	root := realDir(t, `ro")) (allow default) ("`)
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	for _, name := range []string{`x")) (allow file-read*) ("`, "new\nline", `#"^x"`} {
		deny = append(deny, realDir(t, name))
	}
	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, SandboxPolicy{DenyRead: deny})
	require.NoError(t, err)
	checkSeatbeltArgv(t, argv)
	params := seatbeltParamsOf(t, argv)
	assert.Equal(t, deny, params.denyDirs)
	assert.Equal(t, seatbeltPolicy(params, SandboxPolicy{}), argv[2])
	for _, p := range append(deny, root) {
		assert.NotContains(t, argv[2], p)
	}
	assert.NotContains(t, argv[2], "(allow default)")
}

// No rule allows hard links or clones, which would give a protected file a
// second name that no rule names: (deny default) refuses them.
func TestSeatbeltNoLinkRule(t *testing.T) {
	root := realDir(t, "root")
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	for _, policy := range []SandboxPolicy{
		{DenyRead: []string{root}},
		{FullDiskWriteAccess: true, NetworkAccess: true},
	} {
		argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, policy)
		require.NoError(t, err)
		for _, f := range checkSeatbeltArgv(t, argv) {
			if f.isCall("allow") {
				for _, op := range f.list[1:] {
					assert.NotContains(t, []string{"file-link", "file-clone", "default"}, op.atom, "%s", f)
				}
			}
		}
	}
}

// Where a path has a second name under the data volume that reaches the
// same file, that name gets the same rule.
func TestSeatbeltDataVolumeNames(t *testing.T) {
	file := filepath.Join(realDir(t, "home"), "token")
	require.NoError(t, os.WriteFile(file, []byte("t"), 0o600))
	vol := realDir(t, "vol")
	alias := filepath.Join(vol, file)
	require.NoError(t, os.MkdirAll(filepath.Dir(alias), 0o755))
	require.NoError(t, os.Link(file, alias)) // the same file, as a firmlink's
	other := filepath.Join(filepath.Dir(file), "other")
	require.NoError(t, os.WriteFile(other, nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(vol, other), nil, 0o600)) // another file: no alias

	noDataVolume(t)
	seatbeltDataVolume = vol
	argv, err := CreateSeatbeltCommand([]string{"true"}, nil, SandboxPolicy{DenyRead: []string{file, other}})
	require.NoError(t, err)
	checkSeatbeltArgv(t, argv)
	params := seatbeltParamsOf(t, argv)
	require.Len(t, params.denyFiles, 3)
	assert.Contains(t, params.denyFiles, other)
	i := slices.Index(params.denyFiles, file)
	require.GreaterOrEqual(t, i, 0)
	require.Less(t, i+1, len(params.denyFiles))
	assert.Equal(t, alias, params.denyFiles[i+1], "the alias follows its path")
	assert.Contains(t, params.pinned, filepath.Dir(alias))
}

// The runner keeps the masks when it adds a TMPDIR of the call's own.
func TestSeatbeltRunnerRequestMasks(t *testing.T) {
	noDataVolume(t)
	root := realDir(t, "root")
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	secret := realDir(t, "secret")
	policy := SandboxPolicy{DenyRead: []string{secret}}
	r, err := newSeatbeltRunner([]string{root}, policy, 0)
	require.NoError(t, err)
	got, tmp, err := r.request(&spawnRequest{path: "/bin/true", argv: []string{"true"}, env: []string{"PATH=/bin"}})
	require.NoError(t, err)
	defer removeTMPDIR(tmp)
	require.NotEmpty(t, tmp)
	want, err := CreateSeatbeltCommand([]string{"/bin/true"}, []string{root, tmp}, policy)
	require.NoError(t, err)
	assert.Equal(t, want, got.argv)
	params := seatbeltParamsOf(t, got.argv)
	assert.Equal(t, []string{filepath.Join(root, ".git")}, params.readOnlyDirs)
	assert.Equal(t, []string{secret}, params.denyDirs)
}

// A path given under the data volume (or reached through a symlink that
// points there) gets the same rule under its name at the top, which is the
// one Seatbelt matches: a DenyRead path, and what is read-only in a root
// given so, under FullDiskWriteAccess, where nothing else holds it.
func TestSeatbeltDataVolumeNamesFromTheVolume(t *testing.T) {
	home := realDir(t, "home")
	file := filepath.Join(home, "token")
	require.NoError(t, os.WriteFile(file, []byte("t"), 0o600))
	root := realDir(t, "root")
	require.NoError(t, os.WriteFile(filepath.Join(root, ".hg"), []byte("x\n"), 0o644))
	vol := realDir(t, "vol")
	for _, p := range []string{file, filepath.Join(root, ".hg")} {
		require.NoError(t, os.MkdirAll(filepath.Join(vol, filepath.Dir(p)), 0o755))
		require.NoError(t, os.Link(p, filepath.Join(vol, p))) // the same file, as a firmlink's
	}

	noDataVolume(t)
	seatbeltDataVolume = vol
	onVolume := filepath.Join(vol, file)
	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{filepath.Join(vol, root)},
		SandboxPolicy{FullDiskWriteAccess: true, DenyRead: []string{onVolume, file}})
	require.NoError(t, err)
	checkSeatbeltArgv(t, argv)
	params := seatbeltParamsOf(t, argv)
	assert.ElementsMatch(t, []string{onVolume, file}, params.denyFiles, "each name once")
	assert.Equal(t, []string{filepath.Join(vol, root, ".hg"), filepath.Join(root, ".hg")}, params.readOnlyFiles)
	assert.Contains(t, params.pinned, root)
	assert.Contains(t, params.pinned, home)

	// The volume itself has no other name.
	assert.Equal(t, []string{vol}, withDataVolumeNames([]string{vol}))
}

// A submodule's .git file in a root is read-only by literal, a
// core.hooksPath directory in it by subpath, and the directories above
// each may not be renamed: Seatbelt's rules follow paths as the Linux
// mounts do.
func TestCreateSeatbeltCommandReadOnlySubmodule(t *testing.T) {
	noDataVolume(t)
	root := fakeSuperproject(t)
	writeFiles(t, root, map[string]string{".git/config": "[core]\n\thooksPath = .husky\n"})
	require.NoError(t, os.Mkdir(filepath.Join(root, ".husky"), 0o755))

	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, SandboxPolicy{})
	require.NoError(t, err)
	checkSeatbeltArgv(t, argv)
	params := seatbeltParamsOf(t, argv)
	assert.Equal(t, []string{filepath.Join(root, ".git"), filepath.Join(root, ".husky")}, params.readOnlyDirs)
	files := []string{filepath.Join(root, "sub", ".git"), filepath.Join(root, "lib", "x", ".git"), filepath.Join(root, "sub", "inner", ".git")}
	assert.Equal(t, files, params.readOnlyFiles)
	for _, f := range files {
		for _, dir := range ancestors(f) {
			assert.Contains(t, params.pinned, dir)
		}
	}
	assert.Contains(t, argv[2], wantSeatbeltReadOnly(2, 3))
	assert.Contains(t, argv[2], wantSeatbeltPinned(len(params.pinned)))
}

// A hook manager's files are read-only on macOS as on Linux: husky 9's
// .husky by subpath (core.hooksPath .husky/_), pre-commit's configuration
// by literal.
func TestCreateSeatbeltCommandReadOnlyHookManagers(t *testing.T) {
	noDataVolume(t)
	root := realDir(t, "root")
	writeFiles(t, root, map[string]string{
		".git/config": "[core]\n\thooksPath = .husky/_\n", ".husky/_/pre-commit": "#!/usr/bin/env sh\n", ".husky/pre-commit": "npm test\n",
		".husky/_/commit-msg": preCommitHook, ".pre-commit-config.yaml": "repos: []\n",
	})
	argv, err := CreateSeatbeltCommand([]string{"true"}, []string{root}, SandboxPolicy{})
	require.NoError(t, err)
	checkSeatbeltArgv(t, argv)
	params := seatbeltParamsOf(t, argv)
	assert.Equal(t, []string{filepath.Join(root, ".git"), filepath.Join(root, ".husky")}, params.readOnlyDirs)
	assert.Equal(t, []string{filepath.Join(root, ".pre-commit-config.yaml")}, params.readOnlyFiles)
	assert.Contains(t, argv[2], wantSeatbeltReadOnly(2, 1))
}
