//go:build unix

package sandboxexec

import (
	"io"

	"golang.org/x/sys/unix"
)

// fileIdentity is what tells one state of a file from another: which file
// it is, and when and how it last changed.
type fileIdentity struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func identityOf(st *unix.Stat_t) fileIdentity {
	return fileIdentity{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// lstatIdentity is the identity of the regular file at path, not
// following a symlink; ok is false for anything else, and absent says
// there is nothing at path.
func lstatIdentity(path string) (id fileIdentity, ok, absent bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fileIdentity{}, false, err == unix.ENOENT || err == unix.ENOTDIR
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileIdentity{}, false, false
	}
	return identityOf(&st), true, false
}

// readRegularIdentity is readRegular that also gives the identity of the
// file read, taken from the open file before it is read: a change while
// it is read moves the change time past it.
func readRegularIdentity(path string, max int64) (b []byte, id fileIdentity, ok bool, err error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, fileIdentity{}, false, err
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) == nil {
		id, ok = identityOf(&st), true
	}
	b, err = io.ReadAll(io.LimitReader(f, max))
	return b, id, ok && err == nil, err
}
