//go:build linux && cgo

package linuxspawn

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// A child with a network namespace has only a loopback interface, up, and
// the listener it made there reaches the caller, whose accept takes the
// child's connection while the caller stays in its own namespace.
func TestNetworkNamespaceListener(t *testing.T) {
	requireRoot(t)
	a := shAttr(t, `cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '
exec 3<>/dev/tcp/127.0.0.1/3128 && echo through >&3 && read -r reply <&3 && echo "reply=$reply"`)
	a.Path, a.Argv = "/bin/bash", []string{"bash", "-c", a.Argv[2]}
	a.Network = &Network{ProxyPort: 3128}
	before, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	a.Stdio[1], a.Stdio[2] = int(w.Fd()), int(w.Fd())
	pid, err := Start(a)
	w.Close()
	require.NoError(t, err)
	require.GreaterOrEqual(t, a.Network.Listener, 0)
	l, err := net.FileListener(os.NewFile(uintptr(a.Network.Listener), "proxy"))
	require.NoError(t, err)
	defer l.Close()
	conn, err := l.Accept()
	require.NoError(t, err)
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "through\n", line)
	_, err = conn.Write([]byte("back\n"))
	require.NoError(t, err)
	conn.Close()
	out := new(strings.Builder)
	_, err = bufio.NewReader(r).WriteTo(out)
	require.NoError(t, err)
	state := wait(t, pid)
	require.True(t, state.Success(), "%s", out)
	assert.Equal(t, "lo\nreply=back\n", out.String())

	// The caller's namespace is its own still.
	after, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	assert.Equal(t, before, after)
}

// Mounts: a read-only target, a denied directory and file, the rest
// read-only but a writable root; what the child sees, and that the caller
// sees none of it.
func TestMountNamespace(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	root, ro, denyDir, outside := filepath.Join(dir, "root"), filepath.Join(dir, "root", ".git"), filepath.Join(dir, "secret"), filepath.Join(dir, "outside")
	denyFile := filepath.Join(dir, "token")
	for _, d := range []string{root, ro, denyDir, outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(denyDir, "k"), []byte("K"), 0o644))
	require.NoError(t, os.WriteFile(denyFile, []byte("T"), 0o644))
	target := func(p string) Target {
		var st syscall.Stat_t
		require.NoError(t, syscall.Lstat(p, &st))
		return Target{Path: p, Dev: uint64(st.Dev), Ino: st.Ino}
	}
	a := shAttr(t, `touch "$0/a" && echo root-ok
touch "$0/.git/a" 2>/dev/null || echo ro-refused
touch "$1/a" 2>/dev/null || echo outside-refused
ls -A "$2"; cat "$3"; echo end`)
	a.Argv = append(a.Argv, root, outside, denyDir, denyFile)
	a.Mounts = &Mounts{ReadOnlyRest: true, Writable: []Target{target(root)}, ReadOnly: []Target{target(ro)},
		DenyDirs: []Target{target(denyDir)}, DenyFiles: []Target{target(denyFile)}}
	out, state, err := run(t, a)
	require.NoError(t, err)
	require.True(t, state.Success(), "%s", out)
	assert.Equal(t, "root-ok\nro-refused\noutside-refused\nend\n", out)
	require.NoError(t, os.WriteFile(filepath.Join(ro, "host"), nil, 0o644), "the caller still writes")

	// The same namespace, made once and joined by two children: each sees
	// what a child of its own saw, in the namespace made.
	m := *a.Mounts
	ns, nsRoot, err := MakeMountNamespace(m)
	require.NoError(t, err)
	defer syscall.Close(ns)
	defer syscall.Close(nsRoot)
	want, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(ns))
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		b := shAttr(t, a.Argv[2]+"\nreadlink /proc/self/ns/mnt")
		b.Argv = append(b.Argv, root, outside, denyDir, denyFile)
		b.MountNamespace = ns
		out, state, err := run(t, b)
		require.NoError(t, err)
		require.True(t, state.Success(), "%s", out)
		assert.Equal(t, "root-ok\nro-refused\noutside-refused\nend\n"+want+"\n", out)
	}
	// Through the root, paths are looked up in the namespace: the denied
	// file reads empty there.
	fd, err := syscall.Openat(nsRoot, "."+denyFile, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	buf := make([]byte, 8)
	n, err := syscall.Read(fd, buf)
	syscall.Close(fd)
	require.NoError(t, err)
	assert.Zero(t, n, "%q", buf[:n])
	b := shAttr(t, "true")
	b.MountNamespace, b.Mounts = ns, &m
	_, _, err = run(t, b)
	assert.ErrorContains(t, err, "mount namespace to join and Mounts")
	_, _, err = MakeMountNamespace(Mounts{UserNamespace: true})
	assert.Error(t, err)

	// A target that is not what the caller found fails the Start.
	stale := target(ro)
	stale.Ino++
	a = shAttr(t, "true")
	a.Mounts = &Mounts{ReadOnly: []Target{stale}}
	_, _, err = run(t, a)
	var stage *StageError
	require.ErrorAs(t, err, &stage)
	assert.Equal(t, "mount", stage.Stage)
	assert.Equal(t, ro, stage.Path)
	assert.Equal(t, syscall.ESTALE, stage.Err)
}

// Pinned directories are bound over themselves as they were, before the
// read-only targets below them: they stay writable, and cannot be renamed,
// with the rest read-only or not.
func TestMountNamespacePinned(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	sub, ro := filepath.Join(root, "sub"), filepath.Join(root, "sub", "repo.git")
	require.NoError(t, os.MkdirAll(ro, 0o755))
	target := func(p string) Target {
		var st syscall.Stat_t
		require.NoError(t, syscall.Lstat(p, &st))
		return Target{Path: p, Dev: uint64(st.Dev), Ino: st.Ino}
	}
	for _, rest := range []bool{true, false} {
		a := shAttr(t, `mv "$0/sub" "$0/moved" 2>/dev/null || echo pinned
touch "$0/sub/a" && echo sub-ok
touch "$0/sub/repo.git/a" 2>/dev/null || echo ro-refused`)
		a.Argv = append(a.Argv, root)
		a.Mounts = &Mounts{ReadOnlyRest: rest, Pinned: []Target{target(sub)}, ReadOnly: []Target{target(ro)}}
		if rest {
			a.Mounts.Writable = []Target{target(root)}
		}
		out, state, err := run(t, a)
		require.NoError(t, err)
		require.True(t, state.Success(), "%s", out)
		assert.Equal(t, "pinned\nsub-ok\nro-refused\n", out, "ReadOnlyRest %v", rest)
		assert.DirExists(t, sub)
	}
}

func TestProbeNamespaces(t *testing.T) {
	requireRoot(t)
	require.NoError(t, ProbeNamespaces(Mounts{}, true))
	require.NoError(t, ProbeNamespaces(Mounts{UserNamespace: true, UID: 0, GID: 0}, true))
}
