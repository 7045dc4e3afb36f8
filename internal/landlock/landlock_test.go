//go:build linux

package landlock

import (
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The expectations below are spelled out from the kernel's constants, not
// from the package's own, so that a wrong constant in landlock.go shows.
const (
	tWriteV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	tWriteV2 = tWriteV1 | unix.LANDLOCK_ACCESS_FS_REFER
	tWriteV3 = tWriteV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	tWriteV5 = tWriteV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	tNetTCP  = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	tSigScp  = unix.LANDLOCK_SCOPE_SIGNAL
	tUnixScp = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	// Reading and executing are never handled: they stay allowed.
	tReadExec = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR
)

// knownFS is every filesystem right the kernel defines at abi.
func knownFS(abi int) uint64 {
	switch {
	case abi >= 5:
		return unix.LANDLOCK_ACCESS_FS_IOCTL_DEV<<1 - 1
	case abi >= 3:
		return unix.LANDLOCK_ACCESS_FS_TRUNCATE<<1 - 1
	case abi == 2:
		return unix.LANDLOCK_ACCESS_FS_REFER<<1 - 1
	case abi == 1:
		return unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1
	}
	return 0
}

func TestHandled(t *testing.T) {
	fsAt := []uint64{0: 0, 1: tWriteV1, 2: tWriteV2, 3: tWriteV3, 4: tWriteV3, 5: tWriteV5, 6: tWriteV5, 7: tWriteV5}
	for abi := 0; abi <= 7; abi++ {
		for _, full := range []bool{false, true} {
			for _, deny := range []bool{false, true} {
				r := Rules{WritableRoots: []string{"/nonexistent"}, FullDiskWrite: full, DenyNetwork: deny}
				var wantFS, wantNet, wantScoped uint64
				if !full {
					wantFS = fsAt[abi]
				}
				if deny && abi >= 4 {
					wantNet = tNetTCP
				}
				if abi >= 6 {
					wantScoped = tSigScp | tUnixScp
				}
				gotFS, gotNet, gotScoped := Handled(abi, r)
				assert.Equal(t, wantFS, gotFS, "fs: abi %d, FullDiskWrite %v, DenyNetwork %v", abi, full, deny)
				assert.Equal(t, wantNet, gotNet, "net: abi %d, FullDiskWrite %v, DenyNetwork %v", abi, full, deny)
				assert.Equal(t, wantScoped, gotScoped, "scoped: abi %d, FullDiskWrite %v, DenyNetwork %v", abi, full, deny)
			}
		}
	}

	// Spot checks of the ABI at which each right first appears.
	firsts := []struct {
		name string
		abi  int
		has  func(fs, net, scoped uint64) bool
	}{
		{"refer", 2, func(fs, _, _ uint64) bool { return fs&unix.LANDLOCK_ACCESS_FS_REFER != 0 }},
		{"truncate", 3, func(fs, _, _ uint64) bool { return fs&unix.LANDLOCK_ACCESS_FS_TRUNCATE != 0 }},
		{"TCP", 4, func(_, net, _ uint64) bool { return net == tNetTCP }},
		{"ioctl_dev", 5, func(fs, _, _ uint64) bool { return fs&unix.LANDLOCK_ACCESS_FS_IOCTL_DEV != 0 }},
		{"scopes", 6, func(_, _, scoped uint64) bool { return scoped == tSigScp|tUnixScp }},
	}
	for _, f := range firsts {
		r := Rules{DenyNetwork: true}
		assert.False(t, f.has(Handled(f.abi-1, r)), "%s must not be handled at ABI %d", f.name, f.abi-1)
		assert.True(t, f.has(Handled(f.abi, r)), "%s must be handled from ABI %d", f.name, f.abi)
	}

	// Network allowed: no TCP rights, but other sandboxes' processes still
	// cannot be signalled, nor the host's abstract sockets reached (found
	// in review: with the network, a command reached the host's daemons).
	_, net, scoped := Handled(7, Rules{})
	assert.Zero(t, net)
	assert.Equal(t, uint64(tSigScp|tUnixScp), scoped)
	// Full disk write: no filesystem right at all.
	fs, _, _ := Handled(7, Rules{FullDiskWrite: true, DenyNetwork: true})
	assert.Zero(t, fs)
}

func kernelABI(t *testing.T) int {
	t.Helper()
	abi, err := ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	return abi
}

func TestBuild(t *testing.T) {
	abi := kernelABI(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)

	for _, rules := range []Rules{
		{WritableRoots: []string{root}, DenyNetwork: true},
		{WritableRoots: []string{root}},
		{FullDiskWrite: true, DenyNetwork: true},
		{},
	} {
		fd, err := Build(abi, rules)
		require.NoError(t, err, "%+v", rules)
		if fd == -1 {
			fs, net, scoped := Handled(abi, rules)
			assert.Zero(t, fs|net|scoped, "-1 only when nothing is handled: %+v", rules)
			continue
		}
		require.GreaterOrEqual(t, fd, 0)
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		require.NoError(t, err, "the descriptor is valid")
		assert.NotZero(t, flags&unix.FD_CLOEXEC, "the ruleset is close-on-exec")
		require.NoError(t, unix.Close(fd))
	}

	t.Run("nothing handled", func(t *testing.T) {
		// ABI 1 has no network rights and no scopes; FullDiskWrite drops
		// the filesystem rights, and a rule of / could not grant renames
		// across directories there.
		fd, err := Build(1, Rules{WritableRoots: []string{root}, FullDiskWrite: true, DenyNetwork: true})
		require.NoError(t, err)
		assert.Equal(t, -1, fd)
	})

	t.Run("full disk write still makes a domain", func(t *testing.T) {
		// Without network rights (below ABI 4, or the network allowed) and
		// scopes (below ABI 6), FullDiskWrite would handle nothing and
		// leave the command no domain, and so no ptrace scope: the write
		// rights are handled and granted beneath / instead.
		for a := 2; a <= min(abi, 5); a++ {
			fd, files, err := build(a, Rules{WritableRoots: []string{root}, FullDiskWrite: true})
			require.NoError(t, err, "ABI %d", a)
			require.GreaterOrEqual(t, fd, 0, "ABI %d", a)
			assert.True(t, slices.ContainsFunc(files, func(f fileID) bool { return f.path == "/" }), "ABI %d: / granted", a)
			assert.False(t, slices.ContainsFunc(files, func(f fileID) bool { return f.path == root }), "ABI %d: the roots need no rule", a)
			unix.Close(fd)
		}
	})

	t.Run("every ABI up to the kernel's", func(t *testing.T) {
		for a := 1; a <= abi; a++ {
			fd, err := Build(a, Rules{WritableRoots: []string{root}, DenyNetwork: true})
			require.NoError(t, err, "ABI %d", a)
			require.GreaterOrEqual(t, fd, 0, "ABI %d", a)
			unix.Close(fd)
		}
	})

	t.Run("missing writable root", func(t *testing.T) {
		missing := filepath.Join(root, "does-not-exist")
		fd, err := Build(abi, Rules{WritableRoots: []string{root, missing}})
		require.Error(t, err)
		assert.Equal(t, -1, fd)
		assert.True(t, errors.Is(err, fs.ErrNotExist), "error %v wraps ErrNotExist", err)
		assert.Contains(t, err.Error(), missing)
	})

	t.Run("writable root that is a file", func(t *testing.T) {
		// A file is accepted by landlock_add_rule only with file rights;
		// the directory rights make it fail, which must be an error, not
		// a silently weaker ruleset.
		file := filepath.Join(root, "plain")
		require.NoError(t, unix.Close(mustCreate(t, file)))
		fd, err := Build(abi, Rules{WritableRoots: []string{file}})
		if err == nil {
			unix.Close(fd)
		}
		assert.Error(t, err)
	})
}

// A root is given resolved; a symlink on its path now was put there since,
// maybe by a command that may write where it lies, and is refused.
func TestBuildRefusesSymlinkedRoot(t *testing.T) {
	abi := kernelABI(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(base, "target")
	require.NoError(t, unix.Mkdir(target, 0o755))
	require.NoError(t, unix.Mkdir(filepath.Join(target, "sub"), 0o755))
	link := filepath.Join(base, "link")
	require.NoError(t, unix.Symlink(target, link))

	for _, root := range []string{link, filepath.Join(link, "sub")} {
		fd, err := Build(abi, Rules{WritableRoots: []string{root}})
		assert.ErrorIs(t, err, unix.ELOOP, root)
		assert.Contains(t, err.Error(), root)
		assert.Equal(t, -1, fd)
	}
	// The devices are opened as they are (/dev/ptmx is often a symlink).
	fd, err := Build(abi, Rules{WritableRoots: []string{target}})
	require.NoError(t, err)
	unix.Close(fd)
}

func mustCreate(t *testing.T, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	require.NoError(t, err)
	return fd
}

func FuzzHandled(f *testing.F) {
	for abi := -2; abi <= 8; abi++ {
		f.Add(abi, false, false, uint8(0))
		f.Add(abi, true, true, uint8(1))
	}
	f.Add(math.MaxInt, false, true, uint8(3))
	f.Add(math.MinInt, true, false, uint8(0))
	f.Fuzz(func(t *testing.T, rawABI int, fullDisk, denyNet bool, nroots uint8) {
		// Fold any int into -2..20.
		abi := rawABI % 23
		if abi < 0 {
			abi += 23
		}
		abi -= 2
		r := Rules{FullDiskWrite: fullDisk, DenyNetwork: denyNet}
		for i := 0; i < int(nroots%4); i++ {
			r.WritableRoots = append(r.WritableRoots, "/root"+string(rune('a'+i)))
		}
		fs, net, scoped := Handled(abi, r)

		if fs&^knownFS(abi) != 0 {
			t.Fatalf("abi %d: fs rights %#x include bits unknown at that ABI (known %#x)", abi, fs, knownFS(abi))
		}
		if fs&tReadExec != 0 {
			t.Fatalf("abi %d: reading or executing is handled: %#x", abi, fs)
		}
		if fullDisk && fs != 0 {
			t.Fatalf("abi %d: FullDiskWrite but fs rights %#x", abi, fs)
		}
		if !fullDisk && abi >= 1 && fs&unix.LANDLOCK_ACCESS_FS_WRITE_FILE == 0 {
			t.Fatalf("abi %d: writes are not handled: %#x", abi, fs)
		}
		if !denyNet && net != 0 {
			t.Fatalf("abi %d: network allowed but net rights %#x", abi, net)
		}
		if net&^uint64(tNetTCP) != 0 || (abi < 4 && net != 0) {
			t.Fatalf("abi %d: net rights %#x", abi, net)
		}
		if abi < 6 && scoped != 0 {
			t.Fatalf("abi %d: scopes %#x before ABI 6", abi, scoped)
		}
		if scoped&^uint64(tSigScp|tUnixScp) != 0 {
			t.Fatalf("abi %d: unknown scopes %#x", abi, scoped)
		}
		if abi >= 6 && scoped != tSigScp|tUnixScp {
			t.Fatalf("abi %d: scopes %#x, not signals and abstract sockets", abi, scoped)
		}
	})
}
