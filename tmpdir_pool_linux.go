//go:build linux && cgo

package sandboxexec

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentbox/sandboxexec/internal/landlock"
)

// callTMPDIR is the private TMPDIR of one sandboxed call (see
// privateTMPDIR), taken from tmpDirs or made for it. Once the call is over,
// release empties it and keeps it for a later call, if nothing of the call
// can touch it any more; otherwise it removes it. A later call gets it only
// if it is still empty and as it was made; otherwise it is removed.
// Making a directory and removing it again cost more than the rest of a
// call's set-up together on some filesystems (ext4 on this VM: 0.2 ms and
// 0.3-1 ms), and a new directory needs a Landlock ruleset of its own, which
// a kept one keeps too.
type callTMPDIR struct {
	path     string
	parent   string   // os.TempDir() when it was made
	lock     *os.File // the directory, flocked so that no sweep takes it
	made     tmpDirState
	rulesets *landlock.Cache // the call's rulesets, with path among the roots
	idle     time.Time       // when it went back to the pool
	// witness is the ctime the last full check (see pristine) read first,
	// where a change since would have given another (see unchanged and
	// releaseLater); zero for none. ctimeMoves says the filesystem's
	// ctimes are witnesses (see probeCtimeWitness).
	witness    unix.Timespec
	ctimeMoves bool
	// sentOut says the call's command could send a descriptor of t out of
	// the call (see linuxRunner.sendsDescriptors): t is then not kept.
	sentOut bool
}

// tmpDirState is what a kept directory must still be before a later call
// gets it: the same file, with the mode, owner, link count (no
// subdirectory), size, extended attributes (ACLs among them, names and
// values: one made in a directory with a default ACL has one too, which
// the command could make name another user) and inode flags it was made
// with. A directory a command grew keeps its size on ext4
// (it says how many entries it once held); one it chmodded, gave an ACL or
// chattr'd (+S makes every later write in it synchronous, +d, +A and the
// rest are bits the next call could read) would pass that on.
type tmpDirState struct {
	dev, ino uint64
	mode     uint32
	uid, gid uint32
	nlink    uint64
	size     int64
	xattrs   string  // names and values
	flags    int64   // FS_IOC_GETFLAGS's, or -1 where the filesystem has none
	fsx      fsxattr // FS_IOC_FSGETXATTR's, less fsx_nextents; zero where none
}

// fsxattr is struct fsxattr of linux/fs.h: the XFS-style attributes, of
// which the project ID, the extent size hints and the flags are the
// owner's to set (FS_IOC_FSSETXATTR).
type fsxattr struct {
	xflags     uint32
	extsize    uint32
	nextents   uint32
	projid     uint32
	cowextsize uint32
	pad        [8]byte
}

// FS_IOC_FSGETXATTR, which x/sys lacks, is _IOR('X', 31, struct fsxattr)
// (28 bytes), with the direction bits of _IOR as this architecture encodes
// them, taken from FS_IOC_GETFLAGS (_IOR('f', 1, long)).
const (
	iocRead         = unix.FS_IOC_GETFLAGS - (unsafe.Sizeof(uintptr(0))<<16 | 'f'<<8 | 1)
	fsIocFSGetXattr = iocRead | 28<<16 | 'X'<<8 | 31
)

// tmpDirPoolSize is how many empty private TMPDIRs the pool keeps, and
// tmpDirIdle how long one stays unused before it is removed: a host that
// exits leaves the ones it keeps (empty, to the sweep of the next host).
const (
	tmpDirPoolSize = 8
	tmpDirIdle     = time.Minute
)

var tmpDirs tmpDirPool

type tmpDirPool struct {
	mu   sync.Mutex
	idle []*callTMPDIR // the most recently released last
	trim *time.Timer   // pending while idle is not empty
}

// takeTMPDIR is privateTMPDIR for a sandboxed call on Linux: it returns env
// with TMPDIR set to a directory of the call's own, kept from an earlier
// call or made, or env alone and nil where the call needs none.
func takeTMPDIR(env, roots []string) ([]string, *callTMPDIR, error) {
	if !needsPrivateTMPDIR(env, roots) {
		return env, nil, nil
	}
	t, err := getTMPDIR()
	if err != nil {
		return nil, nil, err
	}
	return setEnv(env, "TMPDIR", t.path), t, nil
}

// getTMPDIR returns a private TMPDIR, kept or made.
func getTMPDIR() (*callTMPDIR, error) {
	parent := os.TempDir()
	for t := tmpDirs.get(parent); t != nil; t = tmpDirs.get(parent) {
		// Touched first: the check then reads the ctime a standby's call
		// compares (see unchanged).
		if t.touch() && t.pristine() {
			return t, nil
		}
		// Not on this call's path: what another call left in it (a
		// million files, say) is that call's to pay for (found in review).
		go t.remove()
	}
	dir, lock, err := makeTMPDIR()
	if err != nil {
		return nil, err
	}
	t := &callTMPDIR{path: dir, parent: parent, lock: lock, rulesets: landlock.NewCache(2)}
	t.ctimeMoves = probeCtimeWitness(int(lock.Fd()))
	if t.made, err = readTMPDIRState(int(lock.Fd())); err != nil {
		t.made = tmpDirState{} // never matches: the directory is not kept
	}
	t.pristine() // for its witness
	return t, nil
}

// Path is the directory, "" for none.
func (t *callTMPDIR) Path() string {
	if t == nil {
		return ""
	}
	return t.path
}

// release ends the call's hold on t. quiet says that no process of the call
// is left (its PID namespace or its cgroup is empty), so that none can
// write in t once it is emptied: only then is t kept.
func (t *callTMPDIR) release(quiet bool) {
	if t == nil {
		return
	}
	if quiet && !t.sentOut && t.empty() && tmpDirs.put(t) {
		return
	}
	t.remove()
}

// releaseLater is release at the end of t's call: what the command left is
// emptied within cleanupOnPath, as far as that stays cheap (see emptying),
// and the rest of the release is done once the call has returned (see
// afterCall).
func (t *callTMPDIR) releaseLater(quiet bool) {
	if t == nil {
		return
	}
	fd := int(t.lock.Fd())
	var st unix.Stat_t
	statErr := unix.Fstat(fd, &st)
	if w := t.witness; quiet && !t.sentOut && w != (unix.Timespec{}) && statErr == nil && st.Ctim == w {
		// The command left t as its call took it: a change would have
		// given it another ctime (see unchanged).
		if !tmpDirs.put(t) {
			afterCall(t.remove)
		}
		return
	}
	t.witness = unix.Timespec{}
	e := &emptying{deadline: time.Now().Add(cleanupOnPath), onPath: true}
	if statErr == nil && st.Size <= onPathSmall && !dirEmpty(fd) {
		emptyDir(fd, e)
	}
	afterCall(func() {
		e.letGo()
		t.release(quiet)
	})
}

// remove removes t, unless its path names another directory now (removed
// and made again behind the pool's back): that one is not t's to remove.
func (t *callTMPDIR) remove() {
	t.rulesets.Close()
	if _, named := t.named(); t.made.ino == 0 || named {
		removeTree(t.path)
	}
	t.lock.Close()
}

// named says t.path still names t, and gives what it found there.
func (t *callTMPDIR) named() (st unix.Stat_t, ok bool) {
	ok = unix.Lstat(t.path, &st) == nil && uint64(st.Dev) == t.made.dev && st.Ino == t.made.ino
	return st, ok
}

// empty empties t, at the end of its call, and says whether it is empty and
// as it was made (one the command changed is not kept for later).
func (t *callTMPDIR) empty() bool {
	if t.made.ino == 0 {
		return false
	}
	// Through the descriptor, not the path: a call whose roots hold the
	// host's temporary directory may have put a symlink there.
	fd := int(t.lock.Fd())
	if !dirEmpty(fd) {
		if emptyDir(fd, &emptying{deadline: time.Now().Add(removeTreeBudget)}); !dirEmpty(fd) {
			return false
		}
	}
	st, err := readTMPDIRState(fd)
	return err == nil && st == t.made
}

// pristine says t, kept, may go to a new call: its path still names it, and
// it is empty and as it was made. A call whose roots hold the host's
// temporary directory may have written in it while it was kept.
//
// The first look (the path's lstat) gives the identity and the ctime that
// each later read must still see; the state is read after it. One stat can
// return a mode, an owner or a size from before a change with the ctime
// from after it (the kernel writes the ctime last, and reads it last): a
// chmod racing the lstat passed the check with its own ctime as the
// witness (found in review).
func (t *callTMPDIR) pristine() bool {
	t.witness = unix.Timespec{}
	fd := int(t.lock.Fd())
	first, ok := t.named()
	if !ok || !dirEmpty(fd) {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Ctim != first.Ctim {
		return false
	}
	s, err := tmpDirStateOf(&st, fd)
	if err != nil || s != t.made {
		return false
	}
	if t.ctimeMoves {
		t.witness = first.Ctim
	}
	return true
}

// unchanged is pristine for a standby's call, in one lstat where t's ctime
// is still the witness: the one the standby's full check read before its
// other reads. Any change to t since (an entry, a mode, an owner, an
// attribute, inode flags, times) would have given it another: a ctime once
// read moves on at the next change, however soon (see probeCtimeWitness).
// Without a witness, or with another ctime, it is the full check, after a
// touch: a change since may have been to t's times (found in review).
// The witness stays for the release (see releaseLater).
func (t *callTMPDIR) unchanged() bool {
	if w := t.witness; w != (unix.Timespec{}) {
		st, ok := t.named()
		if ok && st.Ctim == w && st.Mode == t.made.mode && st.Uid == t.made.uid && st.Gid == t.made.gid &&
			uint64(st.Nlink) == t.made.nlink && st.Size == t.made.size {
			return true
		}
	}
	return t.touch() && t.pristine()
}

// ctimeWitness holds probeCtimeWitness's answer per mount.
var ctimeWitness sync.Map

// probeCtimeWitness says a ctime read on the filesystem of dir (a directory
// just made, an open descriptor) moves on at the next change, however soon:
// multigrain timestamps (Linux 6.13 on, on ext4, XFS, btrfs and tmpfs), or
// timestamps of full resolution. Coarse ones (those of earlier kernels, and
// of ext3 still: one tick of 1 to 10 ms) do not: a change right after the
// read may keep the ctime. Each mount is asked once, by its unique ID
// (Linux 6.8 on; before, the answer is no), which no later mount takes
// (a device number is reused: found in review, an ext3 mounted where an
// ext4 had been): eight changes in a row, each right after a read of dir's
// ctime, must each give another.
func probeCtimeWitness(dir int) bool {
	var stx unix.Statx_t
	if unix.Statx(dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID_UNIQUE, &stx) != nil ||
		stx.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
		return false
	}
	if v, asked := ctimeWitness.Load(stx.Mnt_id); asked {
		return v.(bool)
	}
	moves := true
	for i := 0; i < 8 && moves; i++ {
		var before, after unix.Stat_t
		if unix.Fstat(dir, &before) != nil || unix.Mkdirat(dir, "ctime", 0o700) != nil {
			moves = false
			break
		}
		moves = unix.Fstat(dir, &after) == nil && after.Ctim != before.Ctim
		if unix.Unlinkat(dir, "ctime", unix.AT_REMOVEDIR) != nil {
			moves = false
		}
	}
	ctimeWitness.Store(stx.Mnt_id, moves)
	return moves
}

// touch sets t's times to now, so that its call sees none of the last
// one's. A standby's TMPDIR is touched when the standby takes it, and only
// checked when a call takes the standby: a touch is an inode update (on
// ext4, a journal entry) on the call's path.
func (t *callTMPDIR) touch() bool {
	now := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	return unix.UtimesNanoAt(int(t.lock.Fd()), "", now, unix.AT_EMPTY_PATH) == nil
}

func readTMPDIRState(fd int) (tmpDirState, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return tmpDirState{}, err
	}
	return tmpDirStateOf(&st, fd)
}

// tmpDirStateOf is the state of the directory fd, of which st is a stat.
func tmpDirStateOf(st *unix.Stat_t, fd int) (tmpDirState, error) {
	s := tmpDirState{dev: uint64(st.Dev), ino: st.Ino, mode: st.Mode, uid: st.Uid, gid: st.Gid,
		nlink: uint64(st.Nlink), size: st.Size}
	var names [1024]byte
	n, err := unix.Flistxattr(fd, names[:])
	switch {
	case err == unix.ENOTSUP:
	case err != nil: // ERANGE: more than a directory of ours has
		return tmpDirState{}, err
	default:
		// Each value too: none is read where there is no attribute.
		for _, name := range strings.Split(string(names[:n]), "\x00") {
			if name == "" {
				continue
			}
			var value [1024]byte
			m, err := unix.Fgetxattr(fd, name, value[:])
			if err != nil { // ERANGE too: more than a directory of ours has
				return tmpDirState{}, err
			}
			s.xattrs += name + "=" + strconv.Itoa(m) + ":" + string(value[:m]) + "\x00"
		}
	}
	if err := readInodeAttrs(fd, &s); err != nil {
		return tmpDirState{}, err
	}
	return s, nil
}

// readInodeAttrs sets s's inode flags and XFS-style attributes, those of the
// directory fd. A filesystem without the one or the other ioctl (ENOTTY,
// EOPNOTSUPP) has none of them, the same each time it is asked.
func readInodeAttrs(fd int, s *tmpDirState) error {
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	switch {
	case noInodeAttrs(err):
		s.flags = -1
	case err != nil:
		return err
	default:
		s.flags = int64(flags)
	}
	var fsx fsxattr
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFSGetXattr, uintptr(unsafe.Pointer(&fsx)))
	switch {
	case errno == 0:
		fsx.nextents = 0 // the directory's extents: its size says what matters of them
		s.fsx = fsx
	case !noInodeAttrs(errno):
		return errno
	}
	return nil
}

func noInodeAttrs(err error) bool {
	return err == unix.ENOTTY || err == unix.EOPNOTSUPP
}

// dirEmpty says the directory fd holds nothing but . and ..; it reads it
// from the start.
func dirEmpty(fd int) bool {
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return false
	}
	var buf [512]byte
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino, off (8 bytes each), reclen (2),
			// type (1), then the name.
			reclen := int(buf[off+16]) | int(buf[off+17])<<8
			name := buf[off+19 : off+reclen]
			if name[0] != '.' || !(name[1] == 0 || name[1] == '.' && name[2] == 0) {
				return false
			}
			off += reclen
		}
	}
}

// get takes the most recently kept directory made in parent, or nil.
func (p *tmpDirPool) get(parent string) *callTMPDIR {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		if t := p.idle[i]; t.parent == parent {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return t
		}
	}
	return nil
}

// put keeps t if there is room.
func (p *tmpDirPool) put(t *callTMPDIR) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= tmpDirPoolSize {
		return false
	}
	t.idle = time.Now()
	p.idle = append(p.idle, t)
	if p.trim == nil {
		p.trim = time.AfterFunc(tmpDirIdle, p.trimIdle)
	}
	return true
}

// trimIdle removes the directories that were not used for tmpDirIdle.
func (p *tmpDirPool) trimIdle() {
	p.mu.Lock()
	var old []*callTMPDIR
	kept := p.idle[:0]
	for _, t := range p.idle {
		if time.Since(t.idle) >= tmpDirIdle {
			old = append(old, t)
		} else {
			kept = append(kept, t)
		}
	}
	clear(p.idle[len(kept):])
	p.idle = kept
	if len(kept) > 0 {
		p.trim.Reset(tmpDirIdle - time.Since(kept[0].idle))
	} else {
		p.trim = nil
	}
	p.mu.Unlock()
	for _, t := range old {
		t.remove()
	}
}
