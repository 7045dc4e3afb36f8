//go:build unix

package sandboxexec

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A commondir that is no regular file, which a command may have made in a
// root for the next call, is not read: a FIFO would hang that call's start
// for ever, /dev/zero would take its host's memory (found in review). Nor
// is more than gitFileMax of one that is.
func TestResolveMasksCommondirNotAFile(t *testing.T) {
	root := realDir(t, "root")
	gitdir := filepath.Join(root, "x")
	require.NoError(t, os.Mkdir(gitdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: x\n"), 0o644))
	commondir := filepath.Join(gitdir, "commondir")
	for _, c := range []struct {
		what string
		do   func() error
	}{
		{"a FIFO", func() error { return syscall.Mkfifo(commondir, 0o644) }},
		{"a symlink to /dev/zero", func() error { return os.Symlink("/dev/zero", commondir) }},
		{"a long file", func() error {
			return os.WriteFile(commondir, []byte(strings.Repeat("/", 4096)+"\n"), 0o644)
		}},
	} {
		os.Remove(commondir)
		require.NoError(t, c.do(), c.what)
		done := make(chan error, 1)
		var m fsMasks
		go func() {
			var err error
			m, err = resolveMasks([]string{root}, SandboxPolicy{})
			done <- err
		}()
		select {
		case err := <-done:
			require.NoError(t, err, c.what)
			assert.Equal(t, []string{filepath.Join(root, ".git"), gitdir}, m.ReadOnly, c.what)
		case <-time.After(5 * time.Second):
			t.Fatalf("commondir %s: resolveMasks has not returned after 5 s", c.what)
		}
	}
	// A commondir that is a file is read as before.
	os.Remove(commondir)
	require.NoError(t, os.Mkdir(filepath.Join(root, "common"), 0o755))
	require.NoError(t, os.WriteFile(commondir, []byte("../common\n"), 0o644))
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(root, ".git"), gitdir, filepath.Join(root, "common")}, m.ReadOnly)
}

// A commondir swapped, between readGitFile's look and its open, for a
// symlink to a FIFO (or a device: a watchdog's open arms it, a tape's
// rewinds it) is not opened: the look and the open are at one file. A
// writer waiting on the FIFO tells an open.
func TestReadGitFileSwapRace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	regular := filepath.Join(dir, "regular")
	require.NoError(t, os.WriteFile(regular, []byte("../..\n"), 0o644))
	path := filepath.Join(dir, "commondir")
	require.NoError(t, os.Symlink(regular, path))
	opened := make(chan struct{})
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // waits for a reader
			f.Close()
		}
		close(opened)
	}()
	toFIFO, toRegular := filepath.Join(dir, "to-fifo"), filepath.Join(dir, "to-regular")
	os.Symlink(fifo, toFIFO)
	os.Symlink(regular, toRegular)
	stop := repeatUntilStopped(func() {
		os.Rename(toFIFO, path)
		os.Symlink(fifo, toFIFO)
		os.Rename(toRegular, path)
		os.Symlink(regular, toRegular)
	})
	deadline := time.Now().Add(time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		readGitFile(path)
		select {
		case <-opened:
			stop()
			t.Fatalf("read %d: the FIFO was opened", n)
		default:
		}
	}
	stop()
	if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		<-opened
		f.Close()
	}
}

// The directories the git scan lists are read without waiting on a FIFO
// the command put in their place (.git/modules, .git/worktrees), and
// through a symlink as git follows one: the submodules of a modules
// directory kept elsewhere are still found.
func TestResolveMasksListedDirectories(t *testing.T) {
	root := realDir(t, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	for _, name := range []string{"modules", "worktrees"} {
		require.NoError(t, syscall.Mkfifo(filepath.Join(root, ".git", name), 0o644))
	}
	done := make(chan error, 1)
	go func() {
		_, err := resolveMasks([]string{root}, SandboxPolicy{})
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("resolveMasks waits on a FIFO")
	}

	store := realDir(t, "store")
	writeFiles(t, store, map[string]string{"sub/config": "[core]\n\tworktree = " + filepath.Join(root, "sub") + "\n"})
	writeFiles(t, root, map[string]string{"sub/.git": "gitdir: " + filepath.Join(store, "sub") + "\n"})
	require.NoError(t, os.Remove(filepath.Join(root, ".git", "modules")))
	require.NoError(t, os.Symlink(store, filepath.Join(root, ".git", "modules")))
	m, err := resolveMasks([]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.Contains(t, m.ReadOnly, filepath.Join(root, "sub", ".git"))
}

// The hooks read to tell a hook manager's are read without waiting on a
// FIFO, nor following a symlink: a command could have put either in a
// directory before core.hooksPath named it.
func TestResolveMasksHookManagerFIFO(t *testing.T) {
	root := realDir(t, "root")
	writeFiles(t, root, map[string]string{".git/config": "[core]\n\thooksPath = githooks\n", ".pre-commit-config.yaml": ""})
	require.NoError(t, os.MkdirAll(filepath.Join(root, "githooks"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "githooks", "pre-commit"), 0o644))
	require.NoError(t, os.Symlink("pre-commit", filepath.Join(root, "githooks", "pre-push")))
	done := make(chan error, 1)
	go func() {
		m, err := resolveMasks([]string{root}, SandboxPolicy{})
		if err == nil {
			assert.ElementsMatch(t, []string{filepath.Join(root, ".git"), filepath.Join(root, "githooks")}, m.ReadOnly)
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("resolveMasks waits on a FIFO")
	}
}

// A .git file names its git directory as git reads it: what follows an
// exact "gitdir: ", less the line ends at the end, spaces and further
// lines included. Trimmed, "gitdir: gd \n" named gd, and "gd ", which git
// used, stayed writable (found in review).
func TestResolveMasksGitFileAsGitReadsIt(t *testing.T) {
	for _, c := range []struct{ file, dir string }{
		{"gitdir: gd \n", "gd "},
		{"gitdir:  gd\r\n", " gd"},
		{"gitdir: gd\nx\n", "gd\nx"},
		{"gitdir: gd\x00x\n", "gd"},
	} {
		root := realDir(t, "root")
		for _, d := range []string{"gd", c.dir} {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte(c.file), 0o644))
		m, err := resolveMasks([]string{root}, SandboxPolicy{})
		require.NoError(t, err, "%q", c.file)
		assert.Equal(t, []string{filepath.Join(root, ".git"), filepath.Join(root, c.dir)}, m.ReadOnly, "%q", c.file)
	}
	// No git file to git, no directory to protect.
	root := realDir(t, "root")
	require.NoError(t, os.Mkdir(filepath.Join(root, "gd"), 0o755))
	for _, file := range []string{"gitdir:gd\n", "GITDIR: gd\n", " gitdir: gd\n", "gitdir: \n"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte(file), 0o644))
		m, err := resolveMasks([]string{root}, SandboxPolicy{})
		require.NoError(t, err, "%q", file)
		assert.Equal(t, []string{filepath.Join(root, ".git")}, m.ReadOnly, "%q", file)
	}
	// Longer than any .git file: an error, not a name cut short.
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+strings.Repeat("d/", 2048)), 0o644))
	_, err := resolveMasks([]string{root}, SandboxPolicy{})
	assert.ErrorContains(t, err, "past what a .git file holds")
}
