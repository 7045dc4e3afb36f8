package sandboxexec

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFiles makes each file of files below base, with its directories.
func writeFiles(t *testing.T, base string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// fakeSuperproject lays out, without git, what git submodule absorbgitdirs
// leaves: submodules sub, sub/inner (nested in sub) and lib/x (a name with
// a slash), each with its git directory in the superproject's .git/modules
// and a .git file naming it.
func fakeSuperproject(t *testing.T) string {
	root := realDir(t, "super")
	writeFiles(t, root, map[string]string{
		".git/HEAD":                             "ref: refs/heads/main\n",
		".git/config":                           "[core]\n\tbare = false\n[submodule \"sub\"]\n\turl = ../sub\n",
		".git/modules/sub/config":               "[core]\n\tworktree = ../../../sub\n",
		".git/modules/sub/modules/inner/config": "[core]\n\tworktree = ../../../../../sub/inner\n",
		".git/modules/lib/x/config":             "[Core]\n\tWorkTree = \"../../../../lib/x\"\n",
		"sub/.git":                              "gitdir: ../.git/modules/sub\n",
		"sub/inner/.git":                        "gitdir: ../../.git/modules/sub/modules/inner\n",
		"lib/x/.git":                            "gitdir: ../../.git/modules/lib/x\n",
	})
	return root
}

// Each submodule's .git in a root is read-only, nested ones and names with
// slashes included: the superproject's git status follows it. Their git
// directories are within the root's .git, which covers them.
func TestResolveMasksSubmodules(t *testing.T) {
	root := fakeSuperproject(t)
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		filepath.Join(root, ".git"), filepath.Join(root, "sub", ".git"),
		filepath.Join(root, "sub", "inner", ".git"), filepath.Join(root, "lib", "x", ".git"),
	}, m.ReadOnly)

	// A submodule not populated has no .git to protect (a gap); one whose
	// worktree is gone is skipped.
	require.NoError(t, os.Remove(filepath.Join(root, "lib", "x", ".git")))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "sub", "inner")))
	m, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), filepath.Join(root, "sub", ".git")}, m.ReadOnly)

	// Only .git leads there; without it nothing is read.
	m, err = resolveMasks([]string{root}, SandboxPolicy{ReadOnlySubpaths: []string{".hg"}})
	require.NoError(t, err)
	assert.Empty(t, m.ReadOnly)
}

// A submodule's .git file naming a git directory outside the root's .git
// protects that one too, and what its configuration names; a submodule
// whose worktree is outside every root adds nothing.
func TestResolveMasksSubmoduleElsewhere(t *testing.T) {
	root := fakeSuperproject(t)
	other := realDir(t, "other")
	writeFiles(t, other, map[string]string{"moved.git/config": "[core]\n\thooksPath = hooks\n"})
	writeFiles(t, root, map[string]string{"sub/.git": "gitdir: " + filepath.Join(other, "moved.git") + "\n"})
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub", "hooks"), 0o755))
	writeFiles(t, root, map[string]string{".git/modules/far/config": "[core]\n\tworktree = " + filepath.Join(other, "far") + "\n"})
	writeFiles(t, other, map[string]string{"far/.git": "gitdir: " + filepath.Join(root, ".git", "modules", "far") + "\n"})
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		filepath.Join(root, ".git"), filepath.Join(root, "sub", ".git"), filepath.Join(other, "moved.git"),
		filepath.Join(root, "sub", "hooks"), filepath.Join(root, "sub", "inner", ".git"), filepath.Join(root, "lib", "x", ".git"),
	}, m.ReadOnly)
}

// core.hooksPath in a root is read-only: relative to the worktree's top,
// "~/" the home, in config or config.worktree, of the root's repository or
// a submodule's; one outside the roots, missing, or that is a root or
// above one, adds nothing.
func TestResolveMasksHooksPath(t *testing.T) {
	root := fakeSuperproject(t)
	outside := realDir(t, "outside")
	for _, d := range []string{".husky/_", "home/hooks", "sub/.hooks", "wt-hooks"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755))
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	for _, tc := range []struct {
		name, config, worktreeConfig, module string
		want                                 []string
	}{
		{"relative, husky 9's .husky/_ (whose stubs run .husky/<hook>)", "hooksPath = .husky/_", "", "", []string{".husky"}},
		{"case and quotes", "  HooksPath = \".husky\" ; husky", "", "", []string{".husky"}},
		{"home", "hooksPath = ~/hooks", "", "", []string{"home/hooks"}},
		{"absolute", "hooksPath = " + filepath.Join(root, "wt-hooks"), "", "", []string{"wt-hooks"}},
		{"config.worktree", "x = y\n[extensions]\n\tworktreeConfig = true", "hookspath = wt-hooks", "", []string{"wt-hooks"}},
		{"config.worktree, the extension a name alone", "x = y\n[extensions]\n\tworktreeConfig", "hookspath = wt-hooks", "", []string{"wt-hooks"}},
		{"config.worktree, the extension off", "x = y\n[extensions]\n\tworktreeConfig = off", "hookspath = wt-hooks", "", nil},
		{"config.worktree, no extension (git reads none)", "", "hookspath = wt-hooks", "", nil},
		{"every value", "hooksPath = .husky\nhooksPath = wt-hooks", "", "", []string{".husky", "wt-hooks"}},
		{"submodule", "", "", "hooksPath = .hooks", []string{"sub/.hooks"}},
		{"outside", "hooksPath = " + outside, "", "", nil},
		{"missing", "hooksPath = .nothing", "", "", nil},
		{"the root", "hooksPath = .", "", "", nil},
		{"above the root", "hooksPath = ..", "", "", nil},
		{"another section", "x = y\n[hooks]\n\thooksPath = .husky", "", "", nil},
	} {
		writeFiles(t, root, map[string]string{
			".git/config":             "[core]\n" + tc.config + "\n",
			".git/config.worktree":    "[core]\n" + tc.worktreeConfig + "\n",
			".git/modules/sub/config": "[core]\n\tworktree = ../../../sub\n" + tc.module + "\n",
		})
		m, err := resolveMasks([]string{root}, SandboxPolicy{})
		require.NoError(t, err, tc.name)
		want := []string{filepath.Join(root, ".git"), filepath.Join(root, "sub", ".git"),
			filepath.Join(root, "sub", "inner", ".git"), filepath.Join(root, "lib", "x", ".git")}
		for _, w := range tc.want {
			want = append(want, filepath.Join(root, filepath.FromSlash(w)))
		}
		assert.ElementsMatch(t, want, m.ReadOnly, tc.name)
	}
}

// preCommitHook is the start of the hook pre-commit 3 installs.
const preCommitHook = `#!/usr/bin/env bash
# File generated by pre-commit: https://pre-commit.com
# ID: 138fd403232d2ddd5efb44317e38bf03

# start templated
INSTALL_PYTHON=/usr/bin/python3
ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)
# end templated
`

// lefthookHook is the end of the hook lefthook 1 installs.
const lefthookHook = "#!/bin/sh\n\ncall_lefthook()\n{\n  lefthook \"$@\"\n}\n\ncall_lefthook run \"pre-commit\" \"$@\"\n"

// A hook manager's own files in the worktree, which its hook runs on the
// host at the next commit, are read-only: husky 9's .husky (its
// core.hooksPath .husky/_ runs .husky/<hook>), the configuration a
// pre-commit hook names, and lefthook's configuration at the top.
// Nothing missing is protected; a plain hook adds nothing.
func TestResolveMasksHookManagers(t *testing.T) {
	root := realDir(t, "root")
	outside := realDir(t, "outside")
	sub := func(names ...string) []string {
		out := []string{filepath.Join(root, ".git")}
		for _, n := range names {
			out = append(out, filepath.Join(root, filepath.FromSlash(n)))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"husky 9", map[string]string{".git/config": "[core]\n\thooksPath = .husky/_\n",
			".husky/_/pre-commit": "#!/usr/bin/env sh\n. \"${0%/*}/h\"\n", ".husky/_/h": "#!/bin/sh\n", ".husky/pre-commit": "npm test\n"},
			sub(".husky")},
		{"husky 9 in another directory", map[string]string{".git/config": "[core]\n\thooksPath = .config/husky/_/\n",
			".config/husky/_/pre-commit": "#!/usr/bin/env sh\n. \"${0%/*}/h\"\n", ".config/husky/_/h": "#!/bin/sh\n",
			".config/husky/pre-commit": "npm test\n"},
			sub(".config/husky")},
		{"husky 9, a hook that is a symlink", map[string]string{".git/config": "[core]\n\thooksPath = ./.husky/_\n",
			".husky/_/pre-commit": "#!/usr/bin/env sh\n. \"${0%/*}/h\"\n", ".husky/_/h": "#!/bin/sh\n",
			".husky/pre-commit": "link:../scripts/pre-commit.sh", "scripts/pre-commit.sh": "npm test\n", "scripts/other.sh": ""},
			sub(".husky", "scripts/pre-commit.sh")},
		{"a _ not husky's", map[string]string{".git/config": "[core]\n\thooksPath = hooks/_\n", "hooks/_/pre-commit": "#!/bin/sh\n"},
			sub("hooks/_")},
		{"pre-commit", map[string]string{".git/hooks/pre-commit": preCommitHook, ".pre-commit-config.yaml": "repos: []\n"},
			sub(".pre-commit-config.yaml")},
		{"pre-commit, another hook type and config", map[string]string{
			".git/hooks/pre-push": strings.Replace(preCommitHook, "--config=.pre-commit-config.yaml", "'--config=ci/my hooks.yaml'", 1),
			"ci/my hooks.yaml":    "repos: []\n", ".pre-commit-config.yaml": "repos: []\n"},
			sub("ci/my hooks.yaml")},
		{"pre-commit in core.hooksPath", map[string]string{".git/config": "[core]\n\thooksPath = githooks\n",
			"githooks/commit-msg": preCommitHook, ".pre-commit-config.yaml": "repos: []\n"},
			sub("githooks", ".pre-commit-config.yaml")},
		{"pre-commit in a global core.hooksPath outside the roots", map[string]string{
			".git/config": "[core]\n\thooksPath = " + filepath.Join(outside, "hooks") + "\n", ".pre-commit-config.yaml": "repos: []\n"},
			sub(".pre-commit-config.yaml")},
		{"pre-commit, no config", map[string]string{".git/hooks/pre-commit": preCommitHook}, sub()},
		{"pre-commit, a config outside the roots", map[string]string{
			".git/hooks/pre-commit": strings.Replace(preCommitHook, ".pre-commit-config.yaml", filepath.Join(outside, "c.yaml"), 1)}, sub()},
		{"pre-commit, a sample hook is not one", map[string]string{".git/hooks/pre-commit.sample": preCommitHook,
			".pre-commit-config.yaml": "repos: []\n"}, sub()},
		{"lefthook", map[string]string{".git/hooks/pre-commit": lefthookHook, "lefthook.yml": "pre-commit: {}\n",
			".lefthook-local.toml": "", ".config/lefthook.yaml": "", ".lefthook/pre-commit/x.sh": "", "other.yml": ""},
			sub("lefthook.yml", ".lefthook-local.toml", ".config/lefthook.yaml", ".lefthook")},
		{"a hook that is a symlink into the root", map[string]string{".git/hooks/pre-commit": "link:../../scripts/hook.sh",
			"scripts/hook.sh": "#!/bin/sh\n", "scripts/other.sh": ""}, sub("scripts/hook.sh")},
		{"a hook that is a symlink outside the roots", map[string]string{
			".git/hooks/pre-commit": "link:" + filepath.Join(outside, "hooks", "pre-commit"), ".pre-commit-config.yaml": ""}, sub()},
		{"a plain hook", map[string]string{".git/hooks/pre-commit": "#!/bin/sh\nmake lint\n", "lefthook.yml": "",
			".pre-commit-config.yaml": ""}, sub()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(root))
			require.NoError(t, os.RemoveAll(outside))
			require.NoError(t, os.MkdirAll(root, 0o755))
			writeFiles(t, outside, map[string]string{"hooks/pre-commit": preCommitHook})
			files := map[string]string{".git/HEAD": "ref: refs/heads/main\n"}
			links := map[string]string{}
			for k, v := range tc.files {
				if target, ok := strings.CutPrefix(v, "link:"); ok {
					links[k] = target
				} else {
					files[k] = v
				}
			}
			writeFiles(t, root, files)
			for k, target := range links {
				p := filepath.Join(root, filepath.FromSlash(k))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.Symlink(target, p))
			}
			m, err := resolveMasks([]string{root}, SandboxPolicy{})
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.want, m.ReadOnly)
		})
	}

	// A config reached through a symlink in the root is an error, as
	// elsewhere: the command could repoint it.
	require.NoError(t, os.RemoveAll(root))
	writeFiles(t, root, map[string]string{".git/hooks/pre-commit": preCommitHook, "real.yaml": ""})
	require.NoError(t, os.Symlink("real.yaml", filepath.Join(root, ".pre-commit-config.yaml")))
	_, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.ErrorContains(t, err, "symlink")
}

// A hooks directory that is a symlink from the git directory into a root:
// the link is read-only with .git, and now what it points to as well.
func TestResolveMasksHooksSymlink(t *testing.T) {
	root := realDir(t, "root")
	writeFiles(t, root, map[string]string{".git/config": "[core]\n", "githooks/pre-commit": "#!/bin/sh\n"})
	require.NoError(t, os.Symlink("../githooks", filepath.Join(root, ".git", "hooks")))
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), filepath.Join(root, "githooks")}, m.ReadOnly)
}

// A linked worktree inside a root (git worktree add .worktrees/x): its
// .git file is read-only, and the hooks its config.worktree names (which
// git reads with extensions.worktreeConfig set).
func TestResolveMasksLinkedWorktree(t *testing.T) {
	root := realDir(t, "root")
	wt := filepath.Join(root, ".worktrees", "x")
	writeFiles(t, root, map[string]string{
		".git/config":                      "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n",
		".git/worktrees/x/gitdir":          filepath.Join(wt, ".git") + "\n",
		".git/worktrees/x/commondir":       "../..\n",
		".git/worktrees/x/config.worktree": "[core]\n\thooksPath = hooks\n",
		".git/worktrees/gone/gitdir":       filepath.Join(root, "gone", ".git") + "\n",
		".worktrees/x/.git":                "gitdir: ../../.git/worktrees/x\n",
		".worktrees/x/hooks/pre-commit":    "#!/bin/sh\n",
	})
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), filepath.Join(wt, ".git"), filepath.Join(wt, "hooks")}, m.ReadOnly)
}

// Symlinks inside a root on the way to what is protected are errors, as
// for a worktree's gitdir: the command could repoint them. A submodule's
// .git that is itself a link, its worktree named through one, a hooks
// directory named through one.
func TestResolveMasksSubmoduleSymlinks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    func(t *testing.T, root string)
		reason string
	}{
		{".git a symlink", func(t *testing.T, root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "sub", ".git")))
			require.NoError(t, os.Symlink("../.git/modules/sub", filepath.Join(root, "sub", ".git")))
		}, "sub/.git is a symlink"},
		{"worktree through a link", func(t *testing.T, root string) {
			require.NoError(t, os.Symlink("sub", filepath.Join(root, "sublink")))
			writeFiles(t, root, map[string]string{".git/modules/sub/config": "[core]\n\tworktree = ../../../sublink\n"})
		}, "sublink"},
		{"hooks through a link", func(t *testing.T, root string) {
			require.NoError(t, os.Mkdir(filepath.Join(root, "real-hooks"), 0o755))
			require.NoError(t, os.Symlink("real-hooks", filepath.Join(root, ".husky")))
			writeFiles(t, root, map[string]string{".git/config": "[core]\n\thooksPath = .husky\n"})
		}, ".husky"},
		{"hooks link through a link", func(t *testing.T, root string) {
			require.NoError(t, os.Mkdir(filepath.Join(root, "real-hooks"), 0o755))
			require.NoError(t, os.Symlink("real-hooks", filepath.Join(root, "hooks-link")))
			require.NoError(t, os.Symlink("../hooks-link", filepath.Join(root, ".git", "hooks")))
		}, "hooks-link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeSuperproject(t)
			tc.set(t, root)
			_, err := resolveMasks([]string{root}, SandboxPolicy{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.Join(root, filepath.FromSlash(tc.reason)))
			if tc.name != ".git a symlink" {
				assert.Contains(t, err.Error(), "the symlink "+filepath.Join(root, filepath.FromSlash(tc.reason))+" inside the writable root")
			}
		})
	}
}

// A git directory with more directories to look into than gitScanMax
// fails the call rather than leave the rest unread.
func TestResolveMasksTooManySubmodules(t *testing.T) {
	old := gitScanMax
	gitScanMax = 10
	t.Cleanup(func() { gitScanMax = old })
	root := realDir(t, "root")
	modules := filepath.Join(root, ".git", "modules")
	for i := 0; i < gitScanMax; i++ { // and the root's git directory
		require.NoError(t, os.MkdirAll(filepath.Join(modules, strconv.Itoa(i)), 0o755))
	}
	_, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 10 git directories")
	require.NoError(t, os.RemoveAll(filepath.Join(modules, "0")))
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
}

// A root below a worktree's top (a package of a monorepo): the enclosing
// repository's submodules and hooks directory that lie in the root are
// read-only too, as the host's git in the superproject follows them (found
// in review: pkg/lib/.git rewritten, and the next git status ran the
// command's core.fsmonitor). The enclosing .git, outside the root, adds no
// mask; one inside another root is that root's.
func TestResolveMasksEnclosingRepository(t *testing.T) {
	super := fakeSuperproject(t)
	writeFiles(t, super, map[string]string{".git/config": "[core]\n\thooksPath = lib/hooks\n", "lib/hooks/pre-commit": "#!/bin/sh\n"})
	root := filepath.Join(super, "lib")
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, "x", ".git"), filepath.Join(root, "hooks")}, m.ReadOnly)

	// Not without .git among the read-only subpaths, nor where the command
	// may write the enclosing .git itself.
	for _, p := range []SandboxPolicy{{ReadOnlySubpaths: []string{".hg"}}, {FullDiskWriteAccess: true}} {
		m, err = resolveMasks([]string{root}, p)
		require.NoError(t, err)
		assert.Empty(t, m.ReadOnly)
	}
	// The superproject a root too: read as its own, once.
	m, err = resolveMasks([]string{root, super}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Contains(t, m.ReadOnly, filepath.Join(root, "x", ".git"))
	assert.Contains(t, m.ReadOnly, filepath.Join(super, ".git"))
}

// A configuration the command wrote, in a .git it made where there was
// none, that repeats core.worktree and core.hooksPath (found in review: a
// 1 MiB one, each of 45000 worktrees with each of 45000 hooks paths, held
// every later call of the root for hours, deaf to its context): the same
// value again costs nothing, each new one and each worktree with each
// hooks path counts against gitScanMax.
func TestResolveMasksRepeatedConfig(t *testing.T) {
	old := gitScanMax
	gitScanMax = 100
	t.Cleanup(func() { gitScanMax = old })
	root := realDir(t, "root")
	writeFiles(t, root, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "h/pre-commit": "#!/bin/sh\n",
		".git/modules/x/config": "[core]\n" + strings.Repeat("\tworktree = ../../../\n", 1000) +
			strings.Repeat("\thooksPath = h\n", 1000)})
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), filepath.Join(root, "h")}, m.ReadOnly)

	// Worktrees by other names, hooks paths by other names.
	var b strings.Builder
	b.WriteString("[core]\n")
	for i := 0; i < 20; i++ {
		require.NoError(t, os.Mkdir(filepath.Join(root, "d"+strconv.Itoa(i)), 0o755))
		fmt.Fprintf(&b, "\tworktree = ../../../d%d\n\thooksPath = h%d\n", i, i)
	}
	writeFiles(t, root, map[string]string{".git/modules/x/config": b.String()})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "400 worktree and hooks path pairs")
	assert.Contains(t, err.Error(), "more than 100 git directories")
	assert.Contains(t, err.Error(), "core.hooksPath values to look into")
	writeFiles(t, root, map[string]string{".git/modules/x/config": "[core]\n" +
		strings.Repeat("\tworktree = ./\n\tworktree = .//\n\tworktree = ././\n", 40)})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err, "the same three values")
	var names strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&names, "\tworktree = %s\n", strings.Repeat("./", i))
	}
	writeFiles(t, root, map[string]string{".git/modules/x/config": "[core]\n" + names.String()})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "120 spellings of one directory")
	assert.Contains(t, err.Error(), "more than 100 git directories")
}

// Within gitScanMax, what a command can write in a .git it made costs the
// scan no more than gitScanSteps lookups and gitScanBytes of configuration
// (found in review: a long core.worktree of "/usr/.." steps, in a config
// hard-linked into many submodules' git directories, held a call for
// minutes; a .git/worktrees of 300,000 files took 100 MB to list). Each
// bound fails the call; below them it resolves as before.
func TestResolveMasksScanBudgets(t *testing.T) {
	oldSteps, oldBytes := gitScanSteps, gitScanBytes
	gitScanSteps, gitScanBytes = 1000, 10000
	t.Cleanup(func() { gitScanSteps, gitScanBytes = oldSteps, oldBytes })
	root := realDir(t, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "worktrees"), 0o755))
	files := func(n int) {
		for i := 0; i < n; i++ {
			writeFiles(t, root, map[string]string{".git/worktrees/f" + strconv.Itoa(i): ""})
		}
	}
	files(500)
	_, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err, "500 entries listed")
	files(1500)
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "1500 entries listed")
	assert.Contains(t, err.Error(), "more than 1000 names to look up")
	require.NoError(t, os.RemoveAll(filepath.Join(root, ".git", "worktrees")))

	steps := func(n int) string { return "[core]\n\tworktree = " + strings.Repeat("/usr/..", n) + "\n" }
	writeFiles(t, root, map[string]string{".git/modules/x/config": steps(400)})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err, "400 steps")
	writeFiles(t, root, map[string]string{".git/modules/x/config": steps(1000)})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "1000 steps")
	assert.Contains(t, err.Error(), "more than 1000 names to look up")
	writeFiles(t, root, map[string]string{".git/modules/x/config": steps(1), ".git/config": "[core]\n\thooksPath = " + strings.Repeat("/usr/..", 1000) + "\n"})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "1000 steps of a hooks path")
	assert.Contains(t, err.Error(), "more than 1000 names to look up")

	// A lookup of a deep path costs more: the kernel walks it from the top
	// (found in review: 700 values from d to d/.../d 700 deep took 4.4 s).
	deep := root
	for i := 0; i < 100; i++ {
		deep = filepath.Join(deep, strings.Repeat("d", 19))
	}
	require.NoError(t, os.MkdirAll(deep, 0o755))
	writeFiles(t, root, map[string]string{".git/config": "[core]\n",
		".git/modules/x/config": "[core]\n\tworktree = " + strings.Repeat("/usr/..", 200) + deep + "\n"})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "a path 100 names and 2,000 bytes deep")
	assert.Contains(t, err.Error(), "more than 1000 names to look up")

	// 4,000 bytes of configuration, three times: one file's worth, read as
	// the configuration of three git directories.
	writeFiles(t, root, map[string]string{".git/config": "[core]\n" + strings.Repeat("#", 4000) + "\n"})
	for _, d := range []string{".git/modules/x", ".git/modules/y"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		os.Remove(filepath.Join(root, d, "config"))
		require.NoError(t, os.Link(filepath.Join(root, ".git", "config"), filepath.Join(root, d, "config")))
		if d == ".git/modules/x" {
			_, err = resolveMasks([]string{root}, SandboxPolicy{})
			require.NoError(t, err, "8,000 bytes")
		}
	}
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "12,000 bytes")
	assert.Contains(t, err.Error(), "more than 10000 bytes of git configuration")
}

// A configuration the command wrote can name the homes of many users
// (~user/ in core.hooksPath), each looked up through the host's name
// service, which may wait on a directory server: past gitScanUsers
// distinct users the call fails. The same user again is looked up once.
func TestResolveMasksHooksPathUsers(t *testing.T) {
	root := realDir(t, "root")
	values := func(n int, name func(int) string) string {
		var b strings.Builder
		b.WriteString("[core]\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "\thooksPath = ~%s/h%d\n", name(i), i)
		}
		return b.String()
	}
	writeFiles(t, root, map[string]string{".git/config": values(1000, func(int) string { return "root" })})
	_, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err, "one user, 1000 paths")
	writeFiles(t, root, map[string]string{".git/config": values(gitScanUsers, func(i int) string { return "nosuchuser" + strconv.Itoa(i) })})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err, "gitScanUsers users")
	writeFiles(t, root, map[string]string{".git/config": values(gitScanUsers+1, func(i int) string { return "nosuchuser" + strconv.Itoa(i) })})
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err, "one user more")
	assert.Contains(t, err.Error(), fmt.Sprintf("the homes of more than %d users", gitScanUsers))
}

// The configuration cache holds only what the policy reads of a file, and
// only for small files with few such entries (found in review: 256 files
// of 1 MiB of "\ta\n" lines, 350,000 entries each, which a .git the
// command made can hold, kept 4 GB of the host's heap).
func TestReadGitConfigKeepsLittle(t *testing.T) {
	dir := t.TempDir()
	small, large, many := filepath.Join(dir, "small"), filepath.Join(dir, "large"), filepath.Join(dir, "many")
	writeFiles(t, dir, map[string]string{
		"small": "[core]\n\thooksPath = a\n" + strings.Repeat("\ta\n", 10000),
		"large": "[core]\n\thooksPath = a\n" + strings.Repeat("#", gitConfigCacheFile) + "\n",
		"many":  "[core]\n" + strings.Repeat("\thooksPath = a\n", gitConfigCacheEntries+1),
	})
	for _, p := range []string{small, large, many} {
		entries, size, err := readGitConfigSize(p)
		require.NoError(t, err)
		for _, e := range entries {
			assert.Equal(t, "core.hookspath", e.name, "only what the policy reads")
		}
		if p != many {
			assert.Len(t, entries, 1)
		}
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, fi.Size(), size)
	}
	gitConfigs.mu.Lock()
	c, smallKept := gitConfigs.files[small]
	_, largeKept := gitConfigs.files[large]
	_, manyKept := gitConfigs.files[many]
	gitConfigs.mu.Unlock()
	assert.True(t, smallKept)
	assert.Equal(t, 1, cap(c.entries), "10,000 entries read, one kept")
	assert.False(t, largeKept)
	assert.False(t, manyKept)
}

// The cost of resolving the policy of one call's roots, which every call
// pays: a root with a plain .git (its config read, modules/ and
// worktrees/ looked for), one with core.hooksPath, and superprojects with
// 1 and 50 submodules (each one's config read, its .git looked at).
//
//	go test -run '^$' -bench ResolveMasksGit -benchtime 2000x .
func BenchmarkResolveMasksGit(b *testing.B) {
	for _, tc := range []struct {
		name       string
		submodules int
		hooksPath  bool
	}{{"plain", 0, false}, {"hooksPath", 0, true}, {"1-submodule", 1, false}, {"50-submodules", 50, false}} {
		b.Run(tc.name, func(b *testing.B) {
			root, err := filepath.EvalSymlinks(b.TempDir())
			require.NoError(b, err)
			files := map[string]string{".git/HEAD": "ref: refs/heads/main\n",
				".git/config": "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"}
			if tc.hooksPath {
				files[".git/config"] += "\thooksPath = .husky\n"
				files[".husky/pre-commit"] = "#!/bin/sh\n"
			}
			for i := 0; i < tc.submodules; i++ {
				name := "sub" + strconv.Itoa(i)
				files[".git/modules/"+name+"/config"] = "[core]\n\tworktree = ../../../" + name + "\n"
				files[name+"/.git"] = "gitdir: ../.git/modules/" + name + "\n"
			}
			for name, content := range files {
				p := filepath.Join(root, filepath.FromSlash(name))
				require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(b, os.WriteFile(p, []byte(content), 0o644))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := resolveMasks([]string{root}, SandboxPolicy{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A configuration file read once is read again once it changes: rewritten
// through a rename, as git does, or in place (after a clock tick of the
// file system, which an edit in place moves the change time by).
func TestReadGitConfigSeesChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	hooksPath := func() string {
		t.Helper()
		entries, found, err := readGitConfig(path)
		require.NoError(t, err)
		require.True(t, found)
		for _, e := range entries {
			if e.name == "core.hookspath" {
				return e.value
			}
		}
		return ""
	}
	require.NoError(t, os.WriteFile(path, []byte("[core]\n\thooksPath = a\n"), 0o644))
	require.Equal(t, "a", hooksPath())
	require.Equal(t, "a", hooksPath(), "read again unchanged")

	tmp := filepath.Join(dir, "config.lock")
	require.NoError(t, os.WriteFile(tmp, []byte("[core]\n\thooksPath = b\n"), 0o644))
	require.NoError(t, os.Rename(tmp, path))
	require.Equal(t, "b", hooksPath(), "rewritten through a rename")

	time.Sleep(20 * time.Millisecond) // past a coarse clock's tick
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("c"), int64(len("[core]\n\thooksPath = ")))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, "c", hooksPath(), "edited in place, same size")

	require.NoError(t, os.Remove(path))
	_, found, err := readGitConfig(path)
	require.NoError(t, err)
	require.False(t, found, "gone")
}

// core.hooksPath of the host's global or system configuration applies to
// every repository: a relative value names a directory of each worktree
// (found in review: a team's ~/.gitconfig with core.hooksPath = .githooks
// let a command write the hook the host's next commit ran).
func TestResolveMasksGlobalHooksPath(t *testing.T) {
	root := fakeSuperproject(t)
	home := realDir(t, "home")
	for _, d := range []string{".githooks", "sub/.githooks", "system-hooks", "xdg-hooks"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755))
	}
	writeFiles(t, home, map[string]string{
		".gitconfig":         "[core]\n\thooksPath = .githooks\n",
		".config/git/config": "[core]\n\thooksPath = " + filepath.Join(root, "xdg-hooks") + "\n",
		"system":             "[core]\n\thooksPath = " + filepath.Join(root, "system-hooks") + "\n",
		"elsewhere":          "[core]\n",
	})
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_SYSTEM", filepath.Join(home, "system"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL") // set back as it was when the test ends
	base := []string{filepath.Join(root, ".git"), filepath.Join(root, "sub", ".git"),
		filepath.Join(root, "sub", "inner", ".git"), filepath.Join(root, "lib", "x", ".git")}
	in := func(ps ...string) []string {
		out := slices.Clone(base)
		for _, p := range ps {
			out = append(out, filepath.Join(root, filepath.FromSlash(p)))
		}
		return out
	}
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, in(".githooks", "sub/.githooks", "system-hooks", "xdg-hooks"), m.ReadOnly)

	t.Setenv("GIT_CONFIG_NOSYSTEM", "true")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "elsewhere"))
	m, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, base, m.ReadOnly, "neither the system's nor ~/.gitconfig, as git reads them")
}

// "~user/" in core.hooksPath is that user's home, as git expands it (found
// in review: git ran the hooks of ~root/x, which the policy had read as a
// path relative to the worktree).
func TestResolveMasksHooksPathOfAUser(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	home, err := filepath.EvalSymlinks(me.HomeDir)
	if err != nil {
		t.Skipf("no home directory to make a root in: %v", err)
	}
	root, err := os.MkdirTemp(home, "sandboxexec-test-")
	if err != nil {
		t.Skipf("cannot make a root in %s: %v", home, err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	hooks := filepath.Join(root, "hooks")
	require.NoError(t, os.Mkdir(hooks, 0o755))
	value := "~" + me.Username + "/" + filepath.Base(root) + "/hooks"
	writeFiles(t, root, map[string]string{".git/config": "[core]\n\thooksPath = " + value + "\n"})
	t.Setenv("HOME", t.TempDir()) // ~user/ is not $HOME
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), hooks}, m.ReadOnly, value)

	writeFiles(t, root, map[string]string{".git/config": "[core]\n\thooksPath = ~no-such-user-here/hooks\n"})
	m, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(root, ".git")}, m.ReadOnly, "a user git cannot find names nothing")
}

// A user the name service cannot look up just now (a directory server out
// of reach) fails the call: the hooks of that user's home were skipped as
// if there were no such user, and the host's git, finding the user later,
// would run them. A user that does not exist is skipped, as before (git
// itself refuses such a core.hooksPath).
func TestResolveMasksHooksPathUserLookupFails(t *testing.T) {
	root := realDir(t, "root")
	writeFiles(t, root, map[string]string{".git/config": "[core]\n\thooksPath = ~someone/hooks\n"})
	defer func(l func(string) (*user.User, error)) { lookupUser = l }(lookupUser)
	lookupUser = func(name string) (*user.User, error) { return nil, user.UnknownUserError(name) }
	_, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err, "no such user")
	lookupUser = func(string) (*user.User, error) { return nil, errors.New("sssd: server unreachable") }
	_, err = resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sssd: server unreachable")
}

// FuzzGitScan: a command in a root writes the git metadata that the next
// call's policy reads. Whatever it writes, resolveMasks answers or fails,
// never panics, and what it makes read-only exists, holds no root (that
// would take the root with it) and includes the root's own .git.
func FuzzGitScan(f *testing.F) {
	f.Add("[core]\n\thooksPath = hooks\n", "[core]\n\tworktree = ../../../sub\n", "gitdir: ../.git/modules/sub\n", "/elsewhere/.git\n", "#!/bin/sh\nexec pre-commit hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit\n")
	f.Add("[core]\n\thooksPath = ~/h\n[extensions]\n\tworktreeConfig\n", "[core]\n\tworktree = /\n", "gitdir: ..\n", "..\n", "#!/bin/sh\nlefthook run pre-commit\n")
	f.Add("[include]\n\tpath = x\n[core]\nhooksPath=.\n", "[core]\n\tworktree = ../../..\n", "gitdir: .\n", "../../sub/.git", "exec pre-commit hook-impl --config=../x")
	f.Add("[core \"x\"]\n\thooksPath = \"a\\\"b\"\n", "[Core]\n\tWorkTree = \"../../../sub\"\n", "gitdir: /\n", "", "hook-impl --config=/")
	f.Fuzz(func(t *testing.T, config, moduleConfig, dotGit, worktreeGitdir, hook string) {
		root := realDir(t, "root")
		writeFiles(t, root, map[string]string{
			".git/HEAD":               "ref: refs/heads/main\n",
			".git/config":             config,
			".git/modules/sub/config": moduleConfig,
			".git/worktrees/w/gitdir": worktreeGitdir,
			".git/worktrees/w/HEAD":   "ref: refs/heads/w\n",
			"sub/.git":                dotGit,
			"hooks/pre-commit":        "",
			"sub/hooks/pre-commit":    "",
			"sub/nested/.git/HEAD":    "ref: refs/heads/main\n",
			"sub/nested/.git/config":  config,
			".git/hooks/pre-commit":   hook,
			".husky/_/pre-commit":     hook,
			".pre-commit-config.yaml": "repos: []\n",
			"lefthook.yml":            "pre-commit: {}\n",
		})
		m, err := resolveMasks([]string{root}, SandboxPolicy{})
		if err != nil {
			return
		}
		assert.Contains(t, m.ReadOnly, filepath.Join(root, ".git"))
		for _, p := range m.ReadOnly {
			_, err := os.Lstat(p)
			assert.NoError(t, err, "%s exists", p)
			assert.False(t, pathWithin(root, p), "%s holds the root", p)
		}
	})
}

// Each way the git metadata names a path refuses a ".." after a name in
// the root that the command can remove, replace or make (missing here, or
// a directory it may replace with a symlink), as the root's own .git file
// does (TestFilesystemPolicyGitDotDotInRoot runs git on the attack): the
// host's git follows the ".." from what is there then. The ".." that git
// writes, from directories within the protected .git or above a
// protected .git, stays accepted (fakeSuperproject's, a worktree's
// commondir "../..").
func TestResolveMasksGitDotDotInRoot(t *testing.T) {
	for _, kind := range []string{"missing", "dir"} {
		for name, files := range map[string]map[string]string{
			"core.worktree": {".git/modules/sub/config": "[core]\n\tworktree = ROOT/x/../sub\n", "sub/.git": "gitdir: ../.git/modules/sub\n"},
			"submodule .git": {
				".git/modules/sub/config": "[core]\n\tworktree = ../../../sub\n", "sub/.git": "gitdir: ../x/../.git/modules/sub\n",
			},
			"commondir": {".git": "gitdir: wt-gd\n", "wt-gd/commondir": "../x/../common\n", "common/config": ""},
			"worktrees gitdir": {
				".git/worktrees/wt/gitdir": "ROOT/x/../wt/.git\n", ".git/worktrees/wt/commondir": "../..\n",
				"wt/.git": "gitdir: ROOT/.git/worktrees/wt\n",
			},
			"core.hooksPath": {".git/config": "[core]\n\thooksPath = ROOT/x/../hooks\n", "hooks/pre-commit": ""},
			"pre-commit config": {
				".git/hooks/pre-commit":   strings.Replace(preCommitHook, "--config=", "--config=x/../", 1),
				".pre-commit-config.yaml": "repos: []\n",
			},
		} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				root := realDir(t, "root")
				for p, content := range files {
					writeFiles(t, root, map[string]string{p: strings.ReplaceAll(content, "ROOT", root)})
				}
				if kind == "dir" {
					require.NoError(t, os.Mkdir(filepath.Join(root, "x"), 0o755))
				}
				_, err := resolveMasks([]string{root}, SandboxPolicy{})
				require.Error(t, err)
				assert.Contains(t, err.Error(), `".." after `+filepath.Join(root, "x"))
			})
		}
	}
	// A .git/hooks symlink through such a "..".
	root := realDir(t, "root")
	writeFiles(t, root, map[string]string{".git/config": "", "x/keep": "", "hooks/pre-commit": ""})
	require.NoError(t, os.Symlink("../x/../hooks", filepath.Join(root, ".git", "hooks")))
	_, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `".." after `+filepath.Join(root, "x"))

	// git's own: a worktree in a second root whose commondir leaves the
	// first root's .git, read in either order.
	main := realDir(t, "main")
	wt := realDir(t, "wt")
	writeFiles(t, main, map[string]string{".git/config": "", ".git/worktrees/wt/commondir": "../..\n",
		".git/worktrees/wt/gitdir": wt + "/.git\n"})
	writeFiles(t, wt, map[string]string{".git": "gitdir: " + main + "/.git/worktrees/wt\n"})
	for _, roots := range [][]string{{main, wt}, {wt, main}} {
		m, err := resolveMasks(roots, SandboxPolicy{})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{filepath.Join(main, ".git"), filepath.Join(wt, ".git")}, m.ReadOnly)
	}
}
