//go:build unix

package sandboxexec

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lockDir takes dir's lock (flock, exclusive, without waiting) and returns
// the file that holds it until closed. dir must be a directory, not a
// symlink: the sweep looks at a name a call whose roots hold the host's
// temporary directory may swap, for a link to a FIFO, whose open would
// wait for ever.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return f, nil
}

// ownedByMe says this process's effective user owns the file.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// removeTree removes dir and everything in it, whatever the command made
// of it, holding three descriptors at most: it unlinks what it can, and moves
// each directory's subdirectories up into dir, until dir is empty. A walk
// down the tree (os.RemoveAll's, or one by path) holds a descriptor or a
// path component per level, and a command can make a tree deeper than
// either allows, by renames, in seconds (found in review: the directory
// stayed); and it may have taken its own permissions away (chmod 0), which
// stops a host that is not root: each directory without them gets its
// owner's back before it is emptied. No symlink is followed, dir included:
// a process of the call, or of another whose roots hold the tree, may swap
// a directory for one between a look and a use, and the host (root, often)
// would change the mode of what it names, /etc say, where the command could
// change nothing (found in review). A process that escaped the call and
// writes there still can keep the directory: the removal stops after
// removeTreeBudget.
func removeTree(dir string) error {
	if os.Remove(dir) == nil {
		return nil
	}
	top, err := openDirAt(unix.AT_FDCWD, dir)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	emptyDir(top, &emptying{deadline: time.Now().Add(removeTreeBudget)})
	unix.Close(top)
	return os.Remove(dir)
}

// emptying bounds an emptyDir: it stops at deadline, and one on a call's
// path (onPath) also where its next step could take long whatever the
// deadline, since no system call is cut short: it lists no directory
// larger than onPathSmall (one that once held many names keeps its
// blocks, which a listing reads: 0.16 s for 200,000 names once held), and
// it takes away the name of a file or directory of more blocks than that
// only with a descriptor of it held (held, at most onPathHeld), whose
// close frees the blocks later: the unlink of a file's last name frees
// them in the call (a file of 400,000 pieces: 32 s on ext4). Both found in
// review.
type emptying struct {
	deadline time.Time
	onPath   bool
	held     []int
	stopped  bool
}

const (
	onPathSmall = 64 << 10
	onPathHeld  = 256
)

func (e *emptying) goOn() bool { return !e.stopped && time.Now().Before(e.deadline) }

// list is dirNames, on a call's path of a small directory only.
func (e *emptying) list(fd int, name string) []string {
	if e.onPath {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Size > onPathSmall {
			e.stopped = true
			return nil
		}
	}
	return dirNames(fd, name)
}

// remove removes name, in dirfd, if it is a file or an empty directory.
func (e *emptying) remove(dirfd int, name string) bool {
	var st unix.Stat_t
	if !e.onPath || unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Blocks*512 <= onPathSmall {
		return unlinkAny(dirfd, name)
	}
	if len(e.held) >= onPathHeld {
		e.stopped = true
		return false
	}
	fd, err := openHeld(dirfd, name)
	if err != nil {
		e.stopped = err != unix.ENOENT
		return false
	}
	if unlinkAny(dirfd, name) {
		e.held = append(e.held, fd)
		return true
	}
	unix.Close(fd)
	return false
}

// unlinkAny removes name, in dirfd: a file, or an empty directory.
func unlinkAny(dirfd int, name string) bool {
	return unix.Unlinkat(dirfd, name, 0) == nil || unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR) == nil
}

// letGo closes the descriptors e held, which frees the blocks of what it
// removed: not on the call's path.
func (e *emptying) letGo() {
	for _, fd := range e.held {
		unix.Close(fd)
	}
	e.held = nil
}

// emptyDir empties the directory top, a descriptor, as removeTree does,
// within e.
func emptyDir(top int, e *emptying) {
	var st unix.Stat_t
	if unix.Fstat(top, &st) == nil && st.Mode&0o700 != 0o700 {
		unix.Fchmod(top, 0o700)
	}
	var moved uint64
	for e.goOn() {
		work := e.list(top, ".")
		if len(work) == 0 {
			break
		}
		progress := false
		for len(work) > 0 && e.goOn() {
			name := work[len(work)-1]
			work = work[:len(work)-1]
			if e.remove(top, name) {
				progress = true
				continue
			}
			// A directory with something in it: its files go, its
			// directories come up beside it, and it is tried again.
			if emptyInto(top, name, &work, &moved, e) {
				progress = true
				work = append(work, name)
			}
		}
		if !progress {
			break
		}
	}
}

// removeTreeBudget bounds removeTree (a variable for tests).
var removeTreeBudget = time.Minute

// emptyInto unlinks the files of directory name (in top) and moves its
// directories into top, adding their new names to work, within e (a
// directory can hold millions). It reports whether it changed anything.
func emptyInto(top int, name string, work *[]string, moved *uint64, e *emptying) bool {
	if _, ok := dirModeAt(top, name); !ok {
		return false
	}
	fd, err := openDirAt(top, name)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	changed := false
	for i, child := range e.list(fd, name) {
		if (e.onPath || i%256 == 255) && !e.goOn() {
			break
		}
		if e.remove(fd, child) {
			changed = true
			continue
		}
		// Moving a directory to another parent takes write permission on
		// it (its ".." changes).
		if mode, ok := dirModeAt(fd, child); ok && mode&0o700 != 0o700 {
			if cfd, err := openDirAt(fd, child); err == nil {
				unix.Close(cfd)
			}
		}
		for range 3 { // a name a survivor took meanwhile: the next
			*moved++
			up := fmt.Sprintf(".removed-%d", *moved)
			if unix.Renameat(fd, child, top, up) == nil {
				*work = append(*work, up)
				changed = true
				break
			}
		}
	}
	return changed
}

// openDirAt opens the directory name, in dirfd, not through a symlink, and
// gives it its owner's permissions where it lacks them: through the
// descriptor, or, where the lack is what keeps it from being opened, on
// the name without following it.
func openDirAt(dirfd int, name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if err == unix.EACCES {
		if lchmodDirAt(dirfd, name, 0o700) == nil {
			fd, err = unix.Openat(dirfd, name, flags, 0)
		}
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&0o700 != 0o700 {
		unix.Fchmod(fd, 0o700)
	}
	return fd, nil
}

// dirModeAt gives the mode of name, in the directory dirfd, if it is a
// directory, not a symlink to one.
func dirModeAt(dirfd int, name string) (uint32, bool) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, false
	}
	return uint32(st.Mode), true
}

// dirNames lists the directory fd (name is for errors only) without moving
// fd's offset, through a descriptor of its own: dirBatch names at most, so
// that a directory of millions is emptied a batch at a time, each within
// the budget, and never held in memory whole (a listing of 300,000 names
// takes 0.13 s on tmpfs here).
func dirNames(fd int, name string) []string {
	own, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(own), name)
	defer f.Close()
	names, _ := f.Readdirnames(dirBatch)
	return names
}

const dirBatch = 4096
