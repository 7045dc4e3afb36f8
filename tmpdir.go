package sandboxexec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// tmpDirPrefix names the temporary directories privateTMPDIR makes, in the
// host's temporary directory; os.MkdirTemp adds digits.
const tmpDirPrefix = "sandboxexec-call-"

// staleAfter is how old an unlocked directory of ours must be before a sweep
// takes it for one whose host died: older than the moment between its
// making and its locking.
const staleAfter = time.Minute

var (
	// tmpDirLocks holds, for each directory privateTMPDIR made and
	// removeTMPDIR has not removed yet, the file whose lock tells sweeps
	// that its host is alive.
	tmpDirLocks sync.Map // path -> *os.File
	sweepOnce   sync.Once
)

// privateTMPDIR gives the command a temporary directory it may write to,
// where the one it would use (TMPDIR, else /tmp) is not below a writable
// root: a new one of its own in the host's, which the runner adds to the
// writable roots and removes, with removeTMPDIR, once the command has ended.
// Many tools fail without a writable temporary directory; the first root,
// where TMPDIR pointed before, filled the user's project with their files,
// and the go command ignores a go.mod in the temporary directory. A call
// without writable roots gets none: it writes nothing. dir is "" where
// TMPDIR stays as it was.
//
// The directory stays locked (flock) while the call lasts; the first call
// of a process that makes one also removes, in the background, the
// directories of hosts that died before they could (see sweepStaleTMPDIRs).
func privateTMPDIR(env, roots []string) (out []string, dir string, err error) {
	if !needsPrivateTMPDIR(env, roots) {
		return env, "", nil
	}
	dir, lock, err := makeTMPDIR()
	if err != nil {
		return nil, "", err
	}
	tmpDirLocks.Store(dir, lock)
	return setEnv(env, "TMPDIR", dir), dir, nil
}

// needsPrivateTMPDIR says whether a call with env and roots gets a private
// TMPDIR: it has writable roots, and the temporary directory it would use
// (TMPDIR, else /tmp) is below none of them.
func needsPrivateTMPDIR(env, roots []string) bool {
	if len(roots) == 0 {
		return false
	}
	tmp := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			tmp = v
		}
	}
	if real, err := resolvedTempDir(tmp); err == nil {
		for _, root := range roots {
			if pathWithin(real, root) {
				return false
			}
		}
	}
	return true
}

// resolvedTempDir is filepath.EvalSymlinks of the temporary directory a
// command would use, kept for a second: it is asked at every call, and
// the answer only chooses whether the call gets a TMPDIR of its own (a
// stale one gives one where none was needed, or leaves the command a
// TMPDIR its roots no longer hold), never what the sandbox allows.
func resolvedTempDir(tmp string) (string, error) {
	c := &tempDirCache
	c.Lock()
	defer c.Unlock()
	if c.path == tmp && time.Since(c.at) < time.Second {
		return c.real, nil
	}
	real, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return "", err
	}
	c.path, c.real, c.at = tmp, real, time.Now()
	return real, nil
}

var tempDirCache struct {
	sync.Mutex
	path, real string
	at         time.Time
}

// makeTMPDIR makes a private TMPDIR in the host's temporary directory and
// locks it; dir is canonical. The first one a process makes also starts
// the sweep.
func makeTMPDIR() (dir string, lock *os.File, err error) {
	dir, err = os.MkdirTemp("", tmpDirPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("sandboxexec: a temporary directory for the command, "+
			"in the host's temporary directory %s (its TMPDIR): %w", os.TempDir(), err)
	}
	lock, err = lockDir(dir)
	if err != nil {
		os.Remove(dir)
		return "", nil, fmt.Errorf("sandboxexec: a temporary directory for the command: %w", err)
	}
	sweepOnce.Do(func() { go sweepStaleTMPDIRs(os.TempDir()) })
	// Roots are canonical (Seatbelt matches /private/var/folders, not
	// /var/folders).
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, lock, nil
}

// removeTMPDIR removes what privateTMPDIR made, if it made anything, and
// then lets go of its lock. It does not stop at the call's timeout (about
// 10 µs a file): at the end of a call, it runs once the call has returned
// (see afterCall). Linux empties a call's TMPDIR in part before (see
// releaseLater); macOS has no O_PATH, which that takes.
func removeTMPDIR(dir string) {
	if dir == "" {
		return
	}
	removeTree(dir)
	if lock, ok := tmpDirLocks.LoadAndDelete(dir); ok {
		lock.(*os.File).Close()
	}
}

// sweepStaleTMPDIRs removes the directories privateTMPDIR made in tmp, as
// this user, for calls whose host was killed before it could: those that
// no host holds locked, and that are older than staleAfter.
func sweepStaleTMPDIRs(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !madeByPrivateTMPDIR(e.Name()) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || !ownedByMe(fi) || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		lock, err := lockDir(dir)
		if err != nil {
			continue // its host is alive, or it is not ours to take
		}
		removeTree(dir)
		lock.Close()
	}
}

// madeByPrivateTMPDIR says name is one privateTMPDIR gives a directory: the
// prefix and digits, nothing else (a user's own sandboxexec-something is
// not the sweep's to take).
func madeByPrivateTMPDIR(name string) bool {
	digits, ok := strings.CutPrefix(name, tmpDirPrefix)
	if !ok || digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tmpCleanups counts the clean-ups afterCall runs, for tests of what a call
// leaves (a WaitGroup would not take an Add during a Wait).
var tmpCleanups = struct {
	sync.Mutex
	n    int
	none sync.Cond
}{}

func init() { tmpCleanups.none.L = &tmpCleanups.Mutex }

// cleanupOnPath bounds the part of the clean-up of a call's TMPDIR done
// before the call returns (Linux): the few files a command leaves are gone
// by then, so that a host that exits right after the call leaves none of
// them (found in review), but a million would hold the call past its
// timeout.
const cleanupOnPath = 50 * time.Millisecond

// afterCall runs clean, the rest of the emptying or removal of a call's
// TMPDIR, on a goroutine of its own, once the call has returned.
func afterCall(clean func()) {
	tmpCleanups.Lock()
	tmpCleanups.n++
	tmpCleanups.Unlock()
	go func() {
		clean()
		tmpCleanups.Lock()
		if tmpCleanups.n--; tmpCleanups.n == 0 {
			tmpCleanups.none.Broadcast()
		}
		tmpCleanups.Unlock()
	}()
}
