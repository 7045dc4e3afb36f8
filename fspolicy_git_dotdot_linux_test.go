//go:build linux && cgo

package sandboxexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fsGitDotDotEnv = "SANDBOXEXEC_TEST_GIT_DOTDOT"

// A path the git metadata names with ".." after a name inside a writable
// root ("gitdir: sub/../gd", core.hooksPath "tools/../hooks", a hook
// symlink to "../../scripts/../hook.sh") leads where the kernel takes it
// when the host's git runs: after whatever the command made of that name.
// The policy resolved it with the name as it was (or joined it lexically,
// dropping "sub/.." unseen), and protected another directory than the one
// git used once the command had removed the name, made it, or made it a
// symlink (found in review: the host's git status ran the command's
// core.fsmonitor, its git commit the command's hook). Such a path is
// refused; the ".." that git itself writes, which steps back from
// directories the policy protects or pins (a submodule's "gitdir:
// ../.git/modules/sub"), is not.
func TestFilesystemPolicyGitDotDotInRoot(t *testing.T) {
	if os.Getenv(fsGitDotDotEnv) == "1" {
		testGitDotDotInRoot(t, os.Getenv("SANDBOXEXEC_TEST_ROOT"))
		return
	}
	fsRequireMounts(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	testGitDotDotInRoot(t, lxRealDir(t))
	if os.Geteuid() == 0 {
		lxRerunAsNobody(t, fsGitDotDotEnv)
	}
}

func testGitDotDotInRoot(t *testing.T, base string) {
	// The command's program, which the host's git must not run.
	const plant = `printf '#!/bin/sh\ntouch %s\n' "$2" > "$3" && chmod +x "$3"`
	cases := []struct {
		name  string
		setup func(t *testing.T, root string)
		// attack runs in the sandbox with $1 the root, $2 the marker to
		// touch; host is the host's git afterwards.
		attack string
		host   []string
	}{{
		// The root's .git file names its git directory through sub, which
		// the command replaces with a link one level deeper.
		name: "gitdir-relative",
		setup: func(t *testing.T, root string) {
			require.NoError(t, os.Rename(filepath.Join(root, ".git"), filepath.Join(root, "gd")))
			require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
			writeFiles(t, root, map[string]string{".git": "gitdir: sub/../gd\n"})
		},
		attack: `cd "$1" && rm -rf sub && mkdir -p deep/x && ln -s deep/x sub && cp -r gd deep/gd && set -- "$1" "$2" "$PWD/fsmon" &&
` + plant + ` && git config -f deep/gd/config core.fsmonitor "$3"`,
		host: []string{"status", "--short"},
	}, {
		// The same, spelled absolute, with sub missing: the path named
		// nothing, and gd was left writable.
		name: "gitdir-absolute-missing",
		setup: func(t *testing.T, root string) {
			require.NoError(t, os.Rename(filepath.Join(root, ".git"), filepath.Join(root, "gd")))
			writeFiles(t, root, map[string]string{".git": "gitdir: " + root + "/sub/../gd\n"})
		},
		attack: `cd "$1" && mkdir sub && set -- "$1" "$2" "$PWD/fsmon" && ` + plant + ` && git config -f gd/config core.fsmonitor "$3"`,
		host:   []string{"status", "--short"},
	}, {
		// A submodule's .git file, read-only, names the git directory in
		// the root's .git through x: the superproject's git status runs
		// git in sub with the git directory x leads to.
		name: "submodule-gitfile",
		setup: func(t *testing.T, root string) {
			src := root + "-src"
			require.NoError(t, os.Mkdir(src, 0o755))
			fsGit(t, src, "init", "-q")
			fsGit(t, src, "commit", "-q", "--allow-empty", "-m", "first")
			fsGit(t, root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
			require.NoError(t, os.Mkdir(filepath.Join(root, "x"), 0o755))
			writeFiles(t, root, map[string]string{"sub/.git": "gitdir: ../x/../.git/modules/sub\n"})
		},
		attack: `cd "$1" && rm -rf x && mkdir -p a/b a/.git/modules && ln -s a/b x && cp -r .git/modules/sub a/.git/modules/sub &&
set -- "$1" "$2" "$PWD/fsmon" && ` + plant + ` && git config -f a/.git/modules/sub/config core.fsmonitor "$3" &&
git config -f a/.git/modules/sub/config core.worktree "$PWD/sub"`,
		host: []string{"status", "--short"},
	}, {
		name: "hooksPath",
		setup: func(t *testing.T, root string) {
			require.NoError(t, os.Mkdir(filepath.Join(root, "tools"), 0o755))
			require.NoError(t, os.Mkdir(filepath.Join(root, "hooks"), 0o755))
			fsGit(t, root, "config", "core.hooksPath", "tools/../hooks")
		},
		attack: `cd "$1" && rm -rf tools && mkdir -p a/b a/hooks && ln -s a/b tools && set -- "$1" "$2" "$PWD/a/hooks/pre-commit" && ` + plant,
		host:   []string{"commit", "-q", "--allow-empty", "-m", "x"},
	}, {
		name: "hook-symlink",
		setup: func(t *testing.T, root string) {
			writeFiles(t, root, map[string]string{"scripts/lint": "", "hook.sh": "#!/bin/sh\nexit 0\n"})
			require.NoError(t, os.Chmod(filepath.Join(root, "hook.sh"), 0o755))
			require.NoError(t, os.Symlink("../../scripts/../hook.sh", filepath.Join(root, ".git", "hooks", "pre-commit")))
		},
		attack: `cd "$1" && rm -rf scripts && mkdir -p a/b && ln -s a/b scripts && set -- "$1" "$2" "$PWD/a/hook.sh" && ` + plant,
		host:   []string{"commit", "-q", "--allow-empty", "-m", "x"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(base, c.name)
			require.NoError(t, os.Mkdir(root, 0o755))
			fsGit(t, root, "init", "-q")
			c.setup(t, root)
			if c.name != "gitdir-absolute-missing" { // git takes it once sub exists
				fsGit(t, root, "status", "--short") // git takes the layout as it is
			}
			marker := filepath.Join(base, c.name+".ran")
			out, err := lxRun(t, lxSh(c.attack, root, marker), []string{root}, SandboxPolicy{},
				WithEnv(append(os.Environ(), fsGitEnv...)))
			cmd := exec.Command("git", append([]string{"-C", root}, c.host...)...)
			cmd.Env = append(os.Environ(), fsGitEnv...)
			hostOut, _ := cmd.CombinedOutput()
			lxRequireAbsent(t, marker)
			require.Error(t, err, "the call ran: %+v; host's git: %s", out, hostOut)
			assert.Contains(t, err.Error(), `".."`)
		})
	}
}
