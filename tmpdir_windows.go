package sandboxexec

import (
	"io/fs"
	"os"
)

// lockDir opens dir without a lock: no sandbox makes a TMPDIR of its own on
// Windows, and no sweep takes anything here (see ownedByMe).
func lockDir(dir string) (*os.File, error) { return os.Open(dir) }

// ownedByMe is false: see lockDir.
func ownedByMe(fs.FileInfo) bool { return false }

// removeTree is os.RemoveAll: see lockDir.
func removeTree(dir string) error { return os.RemoveAll(dir) }
