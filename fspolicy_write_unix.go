//go:build unix

package sandboxexec

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// hostMayWrite says this process's user may change the entries of dir (as
// FullDiskWriteAccess lets a command do): write and search it, by the
// effective ids, as the kernel would for the command. Not by its mode
// alone: the user may chmod a directory it owns, and rename one, whoever
// owns it, out of a directory it may write, and make it anew (found in
// review: a link in a 0555 directory of the user's, or in root's directory
// inside the user's, was repointed so). So dir or any directory above it
// that the user owns or may write counts; a sticky one too, to be safe.
func hostMayWrite(dir string) bool {
	euid := os.Geteuid()
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if unix.Faccessat(unix.AT_FDCWD, d, unix.W_OK|unix.X_OK, unix.AT_EACCESS) == nil {
			return true
		}
		var st unix.Stat_t
		if unix.Lstat(d, &st) == nil && int(st.Uid) == euid {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}
