//go:build unix

package sandboxexec

import "golang.org/x/sys/unix"

// hostMayWrite says this process's user may change the entries of dir (as
// FullDiskWriteAccess lets a command do): write and search it, by the
// effective ids, as the kernel would for the command.
func hostMayWrite(dir string) bool {
	return unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK|unix.X_OK, unix.AT_EACCESS) == nil
}
