package sandboxexec

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultReadOnlySubpaths(t *testing.T) {
	a := DefaultReadOnlySubpaths()
	assert.Equal(t, []string{".git", ".hg", ".svn"}, a)
	a[0] = "changed"
	assert.Equal(t, ".git", DefaultReadOnlySubpaths()[0], "a new slice each time")
}

// resolveMasks looks only at the top of each root, creates nothing, skips
// what does not exist, and follows a .git file to its git directory.
func TestResolveMasks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	other, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".hg"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub", ".git"), 0o755))
	gitdir := filepath.Join(other, "repo.git", "worktrees", "wt")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
	secret := filepath.Join(other, "secret")
	require.NoError(t, os.WriteFile(secret, nil, 0o600))
	vault := filepath.Join(other, "vault")
	require.NoError(t, os.Mkdir(vault, 0o755))

	slashed := filepath.Join(other, "slashed")
	require.NoError(t, os.WriteFile(slashed, nil, 0o600))
	dotted := filepath.Join(other, "dotted")
	require.NoError(t, os.WriteFile(dotted, nil, 0o600))

	m, err := resolveMasks([]string{root}, SandboxPolicy{DenyRead: []string{secret, vault, "/nonexistent/x",
		secret + "/below-a-file", secret + "/below-a-file/", slashed + "/", dotted + "//./", vault + "/"}})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), filepath.Join(root, ".hg"), gitdir, filepath.Join(other, "repo.git")}, m.ReadOnly)
	assert.Equal(t, []string{vault}, m.DenyDirs)
	assert.Equal(t, []string{secret, slashed, dotted}, m.DenyFiles, "a file named with a trailing slash is denied")
	_, err = os.Stat(filepath.Join(root, ".svn"))
	assert.True(t, os.IsNotExist(err), "nothing is created")

	m, err = resolveMasks([]string{root}, SandboxPolicy{ReadOnlySubpaths: []string{}})
	require.NoError(t, err)
	assert.True(t, m.empty())
}

func TestTrimTrailingSeparators(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b": "/a/b", "/a/b/": "/a/b", "/a/b//": "/a/b", "/a/b/.": "/a/b", "/a/b/./": "/a/b",
		"/a/b/././/": "/a/b", "/a/b/..": "/a/b/..", "/a/b/../": "/a/b/..", "/a/.b/": "/a/.b",
		"/a/b.": "/a/b.", "/": "/", "//": "/", "/.": "/", "/./": "/",
	} {
		assert.Equal(t, want, trimTrailingSeparators(filepath.FromSlash(in)), in)
	}
}

// A path within a denied directory is left to the directory's cover: the
// child could not reach it below the cover to mount on it (found in review:
// DenyRead of ~/.aws and ~/.aws/credentials failed every call).
func TestResolveMasksWithinDenied(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	d := filepath.Join(base, "d")
	sub, f := filepath.Join(d, "sub"), filepath.Join(d, "f")
	root := filepath.Join(d, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.WriteFile(f, nil, 0o600))
	other := filepath.Join(base, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	for _, tc := range []struct {
		deny             []string
		dirs, files, ros []string
	}{
		{[]string{d, sub}, []string{d}, nil, nil},
		{[]string{sub, d}, []string{d}, nil, nil},
		{[]string{d, f}, []string{d}, nil, nil},
		{[]string{base, d, f, other}, []string{base}, nil, nil},
		{[]string{sub, f, other}, []string{other, sub}, []string{f}, []string{filepath.Join(root, ".git")}},
		{[]string{filepath.Join(root, ".git")}, []string{filepath.Join(root, ".git")}, nil, nil},
	} {
		m, err := resolveMasks([]string{root}, SandboxPolicy{DenyRead: tc.deny})
		require.NoError(t, err, "%v", tc.deny)
		assert.ElementsMatch(t, tc.dirs, m.DenyDirs, "%v", tc.deny)
		assert.ElementsMatch(t, tc.files, m.DenyFiles, "%v", tc.deny)
		assert.ElementsMatch(t, tc.ros, m.ReadOnly, "%v", tc.deny)
	}
}

// A .git file whose gitdir is "/", a writable root or an ancestor of one
// protects the file alone: the root stays writable (found in review:
// "gitdir: ." made the whole root read-only).
func TestResolveMasksGitdirBounded(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, other := filepath.Join(base, "a", "root"), filepath.Join(base, "other")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(other, "in"), 0o755))
	for _, gitdir := range []string{".", "..", "../..", "/", root, other, filepath.Join(other, "in", "..")} {
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
		m, err := resolveMasks([]string{root, filepath.Join(other, "in")}, SandboxPolicy{})
		require.NoError(t, err, gitdir)
		assert.Equal(t, []string{filepath.Join(root, ".git")}, m.ReadOnly, "gitdir: %s", gitdir)
	}
	// A git directory beside the root is protected as before.
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: ../../other\n"), 0o644))
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), other}, m.ReadOnly)
}

// A git directory or common directory named through a symlink inside a
// writable root is an error naming the link, whether it leads anywhere or
// not: the command could repoint it. One outside the roots is followed.
func TestResolveMasksGitdirSymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, other := filepath.Join(base, "root"), filepath.Join(base, "other")
	repo := filepath.Join(other, "repo.git")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(repo, 0o755))
	gitfile := filepath.Join(root, ".git")
	for _, tc := range []struct{ gitdir, link, to string }{
		{"gd", "gd", repo},
		{"gd", "gd", "/nonexistent"},
		{"sub/gd/x", "sub", other},
		{filepath.Join(root, "gd"), "gd", repo},
	} {
		t.Run(tc.gitdir+"->"+tc.to, func(t *testing.T) {
			link := filepath.Join(root, tc.link)
			require.NoError(t, os.Symlink(tc.to, link))
			defer os.Remove(link)
			require.NoError(t, os.WriteFile(gitfile, []byte("gitdir: "+tc.gitdir+"\n"), 0o644))
			_, err := resolveMasks([]string{root}, SandboxPolicy{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the symlink "+link+" inside the writable root "+root)
			// A root the link is in, given alongside, counts too.
			_, err = resolveMasks([]string{other, root}, SandboxPolicy{})
			require.Error(t, err)
		})
	}
	// The common directory.
	require.NoError(t, os.WriteFile(gitfile, []byte("gitdir: "+repo+"\n"), 0o644))
	require.NoError(t, os.Symlink(other, filepath.Join(root, "c")))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "commondir"), []byte(filepath.Join(root, "c", "repo.git")), 0o644))
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "commondir")
	assert.Contains(t, err.Error(), "the symlink "+filepath.Join(root, "c"))
	require.NoError(t, os.Remove(filepath.Join(repo, "commondir")))

	// Outside the roots: followed.
	outside := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(repo, outside))
	require.NoError(t, os.WriteFile(gitfile, []byte("gitdir: "+outside+"\n"), 0o644))
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{gitfile, repo}, m.ReadOnly)
}

// A DenyRead path through a symlink inside a writable root is an error,
// whether it leads anywhere or not: the command could repoint the link, and
// the next call would cover what it points to then, leaving the secret
// readable. Found in review. A link outside the roots is followed.
func TestResolveMasksDenyReadSymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, secrets := filepath.Join(base, "root"), filepath.Join(base, "secrets")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "config"), 0o755))
	require.NoError(t, os.MkdirAll(secrets, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "key"), []byte("k"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "config", "dev.env"), []byte("k"), 0o600))
	require.NoError(t, os.Symlink(secrets, filepath.Join(root, "link")))
	require.NoError(t, os.Symlink("config/dev.env", filepath.Join(root, ".env")))
	for _, tc := range []struct{ deny, link string }{
		{filepath.Join(root, "link", "key"), filepath.Join(root, "link")},
		{filepath.Join(root, "link", "missing"), filepath.Join(root, "link")},
		{filepath.Join(root, "link") + "/", filepath.Join(root, "link")},
		{filepath.Join(root, ".env"), filepath.Join(root, ".env")},
	} {
		_, err := resolveMasks([]string{root}, SandboxPolicy{DenyRead: []string{tc.deny}})
		require.Error(t, err, tc.deny)
		assert.Contains(t, err.Error(), "DenyRead path "+strconv.Quote(tc.deny), tc.deny)
		assert.Contains(t, err.Error(), "the symlink "+tc.link+" inside the writable root "+root, tc.deny)
	}
	// Outside the roots: followed, and its target covered.
	outside := filepath.Join(base, "to-secrets")
	require.NoError(t, os.Symlink(secrets, outside))
	m, err := resolveMasks([]string{root}, SandboxPolicy{DenyRead: []string{filepath.Join(outside, "key")}})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(secrets, "key")}, m.DenyFiles)
	// The target named directly, inside the root or not: covered.
	m, err = resolveMasks([]string{root}, SandboxPolicy{DenyRead: []string{filepath.Join(root, "config", "dev.env"), secrets}})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(root, "config", "dev.env")}, m.DenyFiles)
	assert.Equal(t, []string{secrets}, m.DenyDirs)
}

// pin: the directories between each outermost root and what it protects,
// and the roots inside roots; between / and each protected path with
// everywhere; never one within a protected path, nor an outermost root.
func TestFsMasksPin(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	j := func(p ...string) string { return filepath.Join(append([]string{base}, p...)...) }
	for _, d := range []string{j("r", "meta", "repo.git"), j("r", "n", "config"), j("r", ".git", "modules", "m"), j("o", "x")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	masks := func() fsMasks {
		return fsMasks{
			found:     map[string]fs.FileInfo{},
			ReadOnly:  []string{j("r", ".git"), j("r", "meta", "repo.git"), j("r", ".git", "modules", "m"), j("o", "x")},
			DenyFiles: []string{j("r", "n", "config", "prod.env")},
		}
	}
	m := masks()
	require.NoError(t, m.pin([]string{j("r"), j("r", "n")}, nil, false))
	assert.ElementsMatch(t, []string{j("r", "meta"), j("r", "n"), j("r", "n", "config")}, m.Pinned)
	for i := 1; i < len(m.Pinned); i++ {
		assert.LessOrEqual(t, strings.Count(m.Pinned[i-1], "/"), strings.Count(m.Pinned[i], "/"), "parents first: %v", m.Pinned)
	}
	for _, p := range m.Pinned {
		assert.NotNil(t, m.found[p], p)
	}

	m = masks()
	require.NoError(t, m.pin([]string{j("r"), j("r", "n")}, nil, true))
	var want []string
	for d := j("r", "n", "config"); d != "/"; d = filepath.Dir(d) {
		want = append(want, d)
	}
	want = append(want, j("r", "meta"), j("o"))
	assert.ElementsMatch(t, want, m.Pinned)

	// Nothing protected, no nested root: nothing pinned.
	m = fsMasks{found: map[string]fs.FileInfo{}}
	require.NoError(t, m.pin([]string{j("r"), j("o")}, nil, false))
	assert.Empty(t, m.Pinned)
}

func TestFilesystemPolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		policy SandboxPolicy
		want   string
	}{
		{SandboxPolicy{ReadOnlySubpaths: []string{""}}, "empty name"},
		{SandboxPolicy{ReadOnlySubpaths: []string{"a/b"}}, `"a/b"`},
		{SandboxPolicy{ReadOnlySubpaths: []string{`a\b`}}, `"a\\b"`},
		{SandboxPolicy{ReadOnlySubpaths: []string{"."}}, `"."`},
		{SandboxPolicy{ReadOnlySubpaths: []string{"x\x00y"}}, "NUL"},
		{SandboxPolicy{DenyRead: []string{"rel"}}, `"rel"`},
		{SandboxPolicy{DenyRead: []string{""}}, "empty path"},
		{SandboxPolicy{DenyRead: []string{"/a\x00"}}, "NUL"},
	} {
		err := tc.policy.check()
		require.Error(t, err, "%+v", tc.policy)
		assert.Contains(t, err.Error(), tc.want)
		assert.True(t, strings.HasPrefix(err.Error(), "sandboxexec: policy: "), err.Error())
	}
	require.NoError(t, SandboxPolicy{ReadOnlySubpaths: []string{".git", "node_modules", ".env"}, DenyRead: []string{"/a/../b"}}.check())
}

// FuzzFilesystemPolicy: names and paths come from outside (a model's tool
// call, a config file). Whatever they are, validation and resolution give
// an answer or an error, never a panic, and what they protect lies where
// the rules say: one name below a root, or a DenyRead path resolved.
func FuzzFilesystemPolicy(f *testing.F) {
	for _, s := range []string{".git", "", "..", "a/b", "/etc/shadow", "x\x00", "sub", "link", "gitfile"} {
		f.Add(s, s, s)
	}
	for _, s := range []string{".", "..", "/", "sub", "link", "sub/..", "../" + "x"} {
		f.Add("gitfile", "/nonexistent", s)
	}
	f.Fuzz(func(t *testing.T, name, deny, gitdir string) {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, "sub"), 0o755)
		os.Symlink("/", filepath.Join(root, "link"))
		os.WriteFile(filepath.Join(root, "gitfile"), []byte("gitdir: "+gitdir+"\n"), 0o644)
		if !filepath.IsAbs(deny) {
			deny = filepath.Join(root, deny)
		}
		policy := SandboxPolicy{ReadOnlySubpaths: []string{name}, DenyRead: []string{deny}}
		if err := policy.check(); err != nil {
			return
		}
		assert.NotContains(t, name, "/")
		roots, err := canonicalRoots([]string{root})
		require.NoError(t, err)
		m, err := resolveMasks(roots, policy)
		if err != nil {
			return
		}
		for _, p := range m.ReadOnly {
			_, err := os.Lstat(p)
			assert.NoError(t, err, "%s exists", p)
			// Never the root, nor what holds it: a gitdir of ".", "..", "/".
			assert.False(t, pathWithin(roots[0], p), "%s holds the root", p)
		}
		if len(m.ReadOnly) > 0 {
			// The name itself, and what a .git file at it names.
			assert.Contains(t, m.ReadOnly, filepath.Join(roots[0], name))
			assert.LessOrEqual(t, len(m.ReadOnly), 3)
		}
		for _, p := range append(m.DenyDirs, m.DenyFiles...) {
			assert.True(t, filepath.IsAbs(p) && p != "/", p)
		}
	})
}

// The mounts a call makes for what it protects are bounded in number and
// in the directories they go through (found in review: 4,000 submodules'
// .git 5 deep were 28,000 mounts, 0.7 to 1.2 s a call; a hooks path 1,900
// deep, 1,900 pins through 1.8 million directories): past either bound,
// pin fails, saying how to do with less.
func TestPinBounded(t *testing.T) {
	oldCount, oldDepth := pinCountMax, pinDepthMax
	t.Cleanup(func() { pinCountMax, pinDepthMax = oldCount, oldDepth })
	root := realDir(t, "root")
	var protected []string
	for i := 0; i < 10; i++ {
		p := filepath.Join(root, "d"+strconv.Itoa(i), "e", ".git")
		require.NoError(t, os.MkdirAll(p, 0o755))
		protected = append(protected, p)
	}
	depth := 0
	for _, p := range protected {
		depth += 3*strings.Count(p, string(filepath.Separator)) - 3 // p, and the two directories on its way
	}
	pin := func() error {
		m := fsMasks{ReadOnly: protected, found: map[string]fs.FileInfo{}}
		return m.pin([]string{root}, nil, false)
	}
	pinCountMax, pinDepthMax = 30, 1<<20
	require.NoError(t, pin(), "10 protected and 20 pins")
	pinCountMax = 29
	err := pin()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would be more than 29")
	assert.Contains(t, err.Error(), `leave ".git" out of ReadOnlySubpaths`)
	pinCountMax, pinDepthMax = 1<<20, depth
	require.NoError(t, pin())
	pinDepthMax = depth - 1
	require.Error(t, pin())
}
