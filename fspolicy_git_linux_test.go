//go:build linux && cgo

package sandboxexec

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fsSuperproject makes, with git, a repository in a new root with an
// absorbed submodule sub (its git directory in .git/modules/sub) and
// core.hooksPath set to .husky, as husky sets it. Without git it skips,
// or fails where CI requires the sandbox (CI has git).
func fsSuperproject(t *testing.T) string {
	t.Helper()
	super, haveGit := fsGitRepo(t)
	if !haveGit {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
			t.Fatal("git is not installed, and SANDBOXEXEC_REQUIRE_SANDBOX=1")
		}
		t.Skip("git is not installed: no submodule to make")
	}
	sub, _ := fsGitRepo(t)
	fsGit(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	fsGit(t, super, "commit", "-q", "-m", "submodule")
	fsGit(t, super, "config", "core.hooksPath", ".husky")
	require.NoError(t, os.Mkdir(filepath.Join(super, ".husky"), 0o755))
	b, err := os.ReadFile(filepath.Join(super, "sub", ".git"))
	require.NoError(t, err)
	require.Equal(t, "gitdir: ../.git/modules/sub\n", string(b), "git absorbed the submodule")
	return super
}

// A command cannot plant what the host's git runs from the worktree (found
// in review): rewriting a submodule's .git to name a git directory of its
// own with core.fsmonitor set, which the host's next git status in the
// superproject would run; nor a hook in the core.hooksPath directory,
// which the host's next git commit would run. Both fail as a write to
// .git does; the rest of the submodule and the root stay writable.
func TestFilesystemPolicyGitSubmoduleAndHooksPath(t *testing.T) {
	fsRequireMounts(t)
	super := fsSuperproject(t)
	// The whole attack, as review ran it: the host's git status afterwards
	// runs nothing of the command's, since the last step fails.
	marker := filepath.Join(lxRealDir(t), "ran")
	script := `cd "$1" && cp -r .git/modules/sub evil &&
printf '#!/bin/sh\ntouch %s\n' "$2" > evil/fsmonitor && chmod +x evil/fsmonitor &&
git config -f evil/config core.fsmonitor "$PWD/evil/fsmonitor" &&
git config -f evil/config core.worktree "$PWD/sub" &&
printf 'gitdir: %s/evil\n' "$PWD" > sub/.git`
	out, err := lxRun(t, lxSh(script, super, marker), []string{super}, SandboxPolicy{}, WithEnv(append(os.Environ(), fsGitEnv...)))
	fsGit(t, super, "status", "--short")
	lxRequireAbsent(t, marker)
	lxRequireDenied(t, out, err)
	assert.Contains(t, out.Stderr, "Read-only file system")

	// Each step alone, and what stays writable.
	res, pyOut := lxPyRun(t, []string{super}, SandboxPolicy{}, `
root = sys.argv[1]
sub = os.path.join(root, "sub")
attempt("subgit", lambda: open(os.path.join(sub, ".git"), "w").write("gitdir: /tmp/evil\n"))
attempt("subgit_rm", lambda: os.unlink(os.path.join(sub, ".git")))
attempt("sub_mv", lambda: os.rename(sub, os.path.join(root, "sub2")))
attempt("hook", lambda: create(os.path.join(root, ".husky", "pre-commit")))
attempt("hooks_mv", lambda: os.rename(os.path.join(root, ".husky"), os.path.join(root, "husky2")))
attempt("sub_file", lambda: create(os.path.join(sub, "new-file")))
attempt("file", lambda: create(os.path.join(root, "new-file")))
`, super)
	assert.Equal(t, "EROFS", res["subgit"], "%s", pyOut.Stdout)
	assert.Equal(t, "EBUSY", res["subgit_rm"], "a mount point cannot be removed")
	assert.Equal(t, "EBUSY", res["sub_mv"], "the way to sub/.git is pinned")
	assert.Equal(t, "EROFS", res["hook"])
	assert.Equal(t, "EBUSY", res["hooks_mv"])
	assert.Equal(t, "OK", res["sub_file"])
	assert.Equal(t, "OK", res["file"])
	lxRequireAbsent(t, filepath.Join(super, ".husky", "pre-commit"))

	// git status still works in the sandbox, submodule and all.
	out, err = lxRun(t, []string{"git", "-C", super, "status", "--short"}, []string{super}, SandboxPolicy{},
		WithEnv(append(os.Environ(), fsGitEnv...)))
	lxRequireOK(t, out, err)
	assert.NotContains(t, out.Stderr, "fatal")
}

// A command that made the .git of a root where there was none cannot hold
// the root's later calls in their policy resolution (found in review): a
// 1 MiB configuration whose core.worktree is "/usr/.." 149,000 times,
// hard-linked as the config of 200 submodules' git directories (1 MiB on
// disk), took 0.24 s a submodule, 48 s a call, deaf to the call's timeout
// and context. The call now fails at once with an error that says how to
// opt out.
func TestFilesystemPolicyGitScanBounded(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	script := `cd "$1" && { printf '[core]\n\tworktree = '; yes /usr/.. | head -n 149000 | tr -d '\n'; printf '\n'; } > c &&
for i in $(seq 200); do mkdir -p .git/modules/$i && ln c .git/modules/$i/config || exit 1; done`
	out, err := lxRun(t, lxSh(script, root), []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)

	ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
	defer cancel()
	start := time.Now()
	timeout := uint64(2000)
	out, err = ProcessExecToolCall(ctx, ExecParams{Command: []string{"true"}, TimeoutMs: &timeout},
		SandboxLinuxSeccomp, []string{root}, SandboxPolicy{})
	took := time.Since(start)
	require.Error(t, err, "output: %+v", out)
	assert.Contains(t, err.Error(), `leave ".git" out of ReadOnlySubpaths`)
	assert.Less(t, took, 3*time.Second, "the call's timeout is 2 s")

	// The same root without .git among the read-only subpaths runs.
	out, err = lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{ReadOnlySubpaths: []string{}})
	lxRequireOK(t, out, err)
}

// Nor through the directories on the way to what it protects, each of
// which a call pins with a mount (found in review): core.hooksPath naming
// four directories 1,900 deep in the root was 7,600 pins, which held each
// later call 2.2 to 4 s before its timeout started. Past pinDepthMax the
// call fails at once; the same layout 40 deep runs.
func TestFilesystemPolicyPinsBounded(t *testing.T) {
	fsRequireMounts(t)
	root := lxRealDir(t)
	script := `cd "$1" && mkdir -p .git && printf '[core]\n' > .git/config &&
for c in a b c d; do p=$(printf "$c/%.0s" $(seq "$2")) && mkdir -p "$p" && printf '\thooksPath = %s\n' "$p" >> .git/config || exit 1; done`
	out, err := lxRun(t, lxSh(script, root, "40"), []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	out, err = lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)

	out, err = lxRun(t, lxSh(script, root, "1900"), []string{root}, SandboxPolicy{ReadOnlySubpaths: []string{}})
	lxRequireOK(t, out, err)
	ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
	defer cancel()
	timeout := uint64(1000)
	start := time.Now()
	out, err = ProcessExecToolCall(ctx, ExecParams{Command: []string{"true"}, TimeoutMs: &timeout},
		SandboxLinuxSeccomp, []string{root}, SandboxPolicy{})
	// Here 0.5 s (1 s under -race) with the bounds, 2.2 to 4 s (4.4 to 5.3
	// s) without.
	assert.Less(t, time.Since(start), 2*time.Second, "the call's timeout is 1 s")
	require.Error(t, err, "output: %+v", out)
	assert.Contains(t, err.Error(), `leave ".git" out of ReadOnlySubpaths`)
}

// A configuration file the scan must read that another process holds a
// write lease on (fcntl F_SETLEASE: a program of the host user's, or the
// command of a SandboxNone call; a sandboxed command may take none) opens
// with EAGAIN, not waiting. The scan took that for a missing file (found
// in review): a command that leased the host's global git configuration
// while a call started had that call's command write a hook in the
// directory the host's core.hooksPath names in its root. The call now
// fails instead, saying why.
func TestFilesystemPolicyLeasedConfigFailsClosed(t *testing.T) {
	fsRequireMounts(t)
	global := filepath.Join(lxRealDir(t), "gitconfig")
	require.NoError(t, os.WriteFile(global, []byte("[core]\n\thooksPath = .githooks\n"), 0o644))
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	root := lxRealDir(t)
	writeFiles(t, root, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n"})
	require.NoError(t, os.Mkdir(filepath.Join(root, ".githooks"), 0o755))

	leaser := exec.Command(lxPython(t), "-c", `
import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)  # F_SETLEASE
print("leased", flush=True)
sys.stdin.read()
`, global)
	stdin, err := leaser.StdinPipe()
	require.NoError(t, err)
	stdout, err := leaser.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, leaser.Start())
	t.Cleanup(func() { stdin.Close(); leaser.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "leased\n", line)

	out, err := lxRun(t, lxSh(`echo '#!/bin/sh' > "$1/.githooks/pre-commit"`, root), []string{root}, SandboxPolicy{})
	require.Error(t, err, "output: %+v", out)
	assert.Contains(t, err.Error(), "lease")
	lxRequireAbsent(t, filepath.Join(root, ".githooks", "pre-commit"))

	// Once the lease is gone, the call runs, and the hooks directory is
	// read-only.
	stdin.Close()
	require.NoError(t, leaser.Wait())
	out, err = lxRun(t, lxSh(`echo '#!/bin/sh' > "$1/.githooks/pre-commit"`, root), []string{root}, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	lxRequireAbsent(t, filepath.Join(root, ".githooks", "pre-commit"))
}

const fsGitUnsearchableEnv = "SANDBOXEXEC_TEST_GIT_UNSEARCHABLE_AS_NOBODY"

// A path of the git scan that the host cannot look up (EACCES) was taken
// for a missing one, and its mask left out (found in review): a host
// user's command, which owns its root's directories, made the directory
// above the hooks core.hooksPath names unsearchable (chmod 000, which no
// Landlock right refuses), and the next call's scan skipped the hooks;
// that call's command made the directory searchable again and wrote a
// hook there, which the host's git would run. Such a path now fails the
// call, as every error but a missing path does.
func TestFilesystemPolicyGitScanUnsearchableFailsClosed(t *testing.T) {
	if os.Getenv(fsGitUnsearchableEnv) == "1" {
		testGitScanUnsearchable(t, os.Getenv("SANDBOXEXEC_TEST_ROOT"))
		return
	}
	fsRequireMounts(t)
	if os.Geteuid() != 0 {
		testGitScanUnsearchable(t, lxRealDir(t)) // a host user already
		return
	}
	lxRerunAsNobody(t, fsGitUnsearchableEnv)
}

func testGitScanUnsearchable(t *testing.T, root string) {
	writeFiles(t, root, map[string]string{".git/HEAD": "ref: refs/heads/main\n",
		".git/config": "[core]\n\thooksPath = tools/hooks\n"})
	require.NoError(t, os.MkdirAll(filepath.Join(root, "tools", "hooks"), 0o755))

	// The hooks are read-only; the directory above them is the command's.
	out, err := lxRunParams(t, ExecParams{Command: lxSh(`chmod 000 tools`), Workdir: root}, []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	defer os.Chmod(filepath.Join(root, "tools"), 0o755)

	out, err = lxRunParams(t, ExecParams{Command: lxSh(`chmod 755 tools && echo '#!/bin/sh' > tools/hooks/pre-commit`),
		Workdir: root}, []string{root}, SandboxPolicy{})
	require.Error(t, err, "output: %+v", out)
	assert.Contains(t, err.Error(), "permission denied")
	t.Log(err)
	require.NoError(t, os.Chmod(filepath.Join(root, "tools"), 0o755))
	lxRequireAbsent(t, filepath.Join(root, "tools", "hooks", "pre-commit"))
}

// A command cannot write a hook manager's own files, which the protected
// hook runs on the host at the next commit: husky 9's .husky/pre-commit
// (core.hooksPath .husky/_, whose stubs run it), pre-commit's
// .pre-commit-config.yaml (a "repo: local" hook runs any entry), and
// lefthook's lefthook.yml. The rest of each worktree stays writable.
func TestFilesystemPolicyGitHookManagers(t *testing.T) {
	fsRequireMounts(t)
	husky, _ := fsGitRepo(t)
	writeFiles(t, husky, map[string]string{
		".husky/_/pre-commit": "#!/usr/bin/env sh\n. \"${0%/*}/h\"\n", ".husky/_/h": "#!/usr/bin/env sh\n",
		".husky/pre-commit": "npm test\n",
	})
	writeFiles(t, husky, map[string]string{".git/config": "[core]\n\thooksPath = .husky/_\n"})
	preCommit, _ := fsGitRepo(t)
	writeFiles(t, preCommit, map[string]string{
		".git/hooks/pre-commit": preCommitHook, ".pre-commit-config.yaml": "repos: []\n",
	})
	lefthook, _ := fsGitRepo(t)
	writeFiles(t, lefthook, map[string]string{".git/hooks/pre-push": lefthookHook, "lefthook.yml": "pre-push: {}\n"})
	// husky 9 in a directory of another name, whose hook is a symlink to
	// a script of the worktree.
	custom, _ := fsGitRepo(t)
	writeFiles(t, custom, map[string]string{
		"hooks/_/pre-commit": "#!/usr/bin/env sh\n. \"${0%/*}/h\"\n", "hooks/_/h": "#!/usr/bin/env sh\n",
		"scripts/pre-commit.sh": "npm test\n", ".git/config": "[core]\n\thooksPath = hooks/_/\n",
	})
	require.NoError(t, os.Symlink("../scripts/pre-commit.sh", filepath.Join(custom, "hooks", "pre-commit")))
	res, pyOut := lxPyRun(t, []string{husky, preCommit, lefthook, custom}, SandboxPolicy{}, `
husky, pre_commit, lefthook, custom = sys.argv[1:5]
attempt("custom_hook", lambda: create(os.path.join(custom, "hooks", "pre-push")))
attempt("custom_script", lambda: open(os.path.join(custom, "scripts", "pre-commit.sh"), "w").write("touch /tmp/pwned\n"))
attempt("custom_file", lambda: create(os.path.join(custom, "scripts", "new-file")))
attempt("husky_hook", lambda: open(os.path.join(husky, ".husky", "pre-commit"), "w").write("touch /tmp/pwned\n"))
attempt("husky_new", lambda: create(os.path.join(husky, ".husky", "pre-push")))
attempt("husky_file", lambda: create(os.path.join(husky, "new-file")))
attempt("pre_commit_config", lambda: open(os.path.join(pre_commit, ".pre-commit-config.yaml"), "w").write("repos: []\n"))
attempt("pre_commit_file", lambda: create(os.path.join(pre_commit, "new-file")))
attempt("lefthook_config", lambda: open(os.path.join(lefthook, "lefthook.yml"), "a").write("x: 1\n"))
attempt("lefthook_file", lambda: create(os.path.join(lefthook, "new-file")))
`, husky, preCommit, lefthook, custom)
	assert.Equal(t, "EROFS", res["custom_hook"], "%s", pyOut.Stdout)
	assert.Equal(t, "EROFS", res["custom_script"])
	assert.Equal(t, "OK", res["custom_file"])
	assert.Equal(t, "EROFS", res["husky_hook"], "%s", pyOut.Stdout)
	assert.Equal(t, "EROFS", res["husky_new"])
	assert.Equal(t, "OK", res["husky_file"])
	assert.Equal(t, "EROFS", res["pre_commit_config"])
	assert.Equal(t, "OK", res["pre_commit_file"])
	assert.Equal(t, "EROFS", res["lefthook_config"])
	assert.Equal(t, "OK", res["lefthook_file"])
	b, err := os.ReadFile(filepath.Join(husky, ".husky", "pre-commit"))
	require.NoError(t, err)
	assert.Equal(t, "npm test\n", string(b))
}
