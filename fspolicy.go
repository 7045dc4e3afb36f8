package sandboxexec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// DefaultReadOnlySubpaths returns a new slice of the names that stay
// read-only inside every writable root when SandboxPolicy.ReadOnlySubpaths is
// nil: the metadata of Git, Mercurial and Subversion, whose hooks and
// configuration the host's own tools run later, outside any sandbox.
func DefaultReadOnlySubpaths() []string { return []string{".git", ".hg", ".svn"} }

// readOnlySubpaths is the policy's list, defaulted.
func (p SandboxPolicy) readOnlySubpaths() []string {
	if p.ReadOnlySubpaths == nil {
		return DefaultReadOnlySubpaths()
	}
	return p.ReadOnlySubpaths
}

// checkFilesystemPolicy refuses names and paths no runner could apply.
func (p SandboxPolicy) checkFilesystemPolicy() error {
	for _, name := range p.ReadOnlySubpaths {
		if err := checkSubpathName(name); err != nil {
			return err
		}
	}
	for _, path := range p.DenyRead {
		if err := checkDenyReadPath(path); err != nil {
			return err
		}
	}
	return nil
}

func checkSubpathName(name string) error {
	switch {
	case name == "":
		return errors.New("sandboxexec: policy: ReadOnlySubpaths has an empty name")
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("sandboxexec: policy: ReadOnlySubpaths name %q contains a NUL byte", strings.SplitN(name, "\x00", 2)[0])
	case filepath.IsAbs(name) || strings.ContainsAny(name, `/\`):
		return fmt.Errorf("sandboxexec: policy: ReadOnlySubpaths name %q must be one name inside a root, without a path separator", name)
	case name == "." || name == "..":
		return fmt.Errorf("sandboxexec: policy: ReadOnlySubpaths name %q does not name an entry inside a root", name)
	}
	return nil
}

func checkDenyReadPath(path string) error {
	switch {
	case path == "":
		return errors.New("sandboxexec: policy: DenyRead has an empty path")
	case strings.IndexByte(path, 0) >= 0:
		return fmt.Errorf("sandboxexec: policy: DenyRead path %q contains a NUL byte", strings.SplitN(path, "\x00", 2)[0])
	case !filepath.IsAbs(path):
		return fmt.Errorf("sandboxexec: policy: DenyRead path %q is not an absolute path", path)
	}
	return nil
}

// fsMasks are the paths a runner protects, all canonical and existing at the
// time they were resolved: ReadOnly are made read-only (directories or
// files), DenyDirs and DenyFiles unreadable.
type fsMasks struct {
	ReadOnly  []string
	DenyDirs  []string
	DenyFiles []string
	// Pinned are the directories a Linux runner makes mount points of
	// (see pin), parents first; not set by resolveMasks.
	Pinned []string
	// found is what each path named when it was resolved: a runner that
	// mounts on it later checks it still names that.
	found map[string]fs.FileInfo
	// readOnly holds ReadOnly's paths as added, and above every directory
	// above one, for holds.
	readOnly, above map[string]bool
}

// holds says the command can neither remove, replace nor make the
// directory d, nor anything in it, where it lies in a root: it lies
// within a read-only path, or above one (pinned, see pin; on macOS, no
// directory above a protected path may be unlinked). In the time of a
// path's depth, as the git scan asks it for each ".." it meets.
func (m *fsMasks) holds(d string) bool {
	if m.above[d] {
		return true
	}
	for ; ; d = cleanParent(d) {
		if m.readOnly[d] {
			return true
		}
		if d == cleanParent(d) {
			return false
		}
	}
}

// cleanParent is filepath.Dir for a clean absolute path, without cleaning
// again: a hooks path 1,900 directories deep, walked up a name at a time,
// took 0.8 s more under the race detector.
func cleanParent(p string) string {
	i := strings.LastIndexByte(p, filepath.Separator)
	if i <= 0 {
		return string(filepath.Separator)
	}
	return p[:i]
}

func (m fsMasks) empty() bool {
	return len(m.ReadOnly) == 0 && len(m.DenyDirs) == 0 && len(m.DenyFiles) == 0
}

// resolveMasks finds what the policy protects under the canonical roots:
// for each root R and name N, R/N when it exists (not followed if it is a
// symlink: that is an error, since the link itself could be replaced), and,
// where R/N is a file of the form "gitdir: DIR" (a worktree's or a
// submodule's .git), DIR and the common directory it names, unless that is
// "/", a writable root or one of its ancestors (either path going through a
// symlink inside a writable root is an error: the command could repoint
// it); for .git, what the host's git runs from the worktree as well (see
// gitScan: submodules' .git entries, core.hooksPath); and each DenyRead
// path that exists, resolved, less those within a denied directory.
// Nothing is created.
func resolveMasks(roots []string, policy SandboxPolicy) (fsMasks, error) {
	return resolveMasksIn(roots, policy, nil)
}

// resolveMasksIn is resolveMasks where, under FullDiskWriteAccess, a
// symlink or a ".." on the way to a DenyRead path, in a directory that
// writable (nil for none) says the command may write, is refused as one
// inside a root is: the command may change any directory its user may
// write, outside the roots too, and a later call would cover what it
// leads to then (found in review: the command repointed ~/.aws, a link
// to the denied directory, and the next call left that readable).
func resolveMasksIn(roots []string, policy SandboxPolicy, writable func(dir string) bool) (fsMasks, error) {
	m := fsMasks{found: map[string]fs.FileInfo{}}
	git := gitScan{roots: roots, masks: &m, scanned: map[string]bool{}, left: gitScanMax, steps: gitScanSteps, bytes: gitScanBytes}
	// Every root's subpaths first: a ".." the metadata names that leaves
	// one of them (a worktree's commondir "../.." in another root's .git)
	// leaves a protected directory, whichever root is read first (see
	// resolveGitPath). The loop below fails on what is not so.
	names := policy.readOnlySubpaths()
	type found struct {
		fi  fs.FileInfo
		err error
	}
	subpaths := make([]found, len(roots)*len(names))
	for i, root := range roots {
		for j, name := range names {
			p := filepath.Join(root, name)
			fi, err := os.Lstat(p)
			subpaths[i*len(names)+j] = found{fi, err}
			if err == nil && fi.Mode()&fs.ModeSymlink == 0 {
				m.addReadOnly(p, fi)
			}
		}
	}
	for i, root := range roots {
		for j, name := range names {
			p := filepath.Join(root, name)
			fi, err := subpaths[i*len(names)+j].fi, subpaths[i*len(names)+j].err
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fsMasks{}, fmt.Errorf("sandboxexec: read-only subpath: %w", err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return fsMasks{}, fmt.Errorf("sandboxexec: read-only subpath %s is a symlink, which the command "+
					"could replace: make it a directory, or leave %q out of ReadOnlySubpaths", p, name)
			}
			gitdir, common, err := m.protectEntry(p, fi, roots, &git.steps)
			if err != nil {
				return fsMasks{}, err
			}
			if name == ".git" {
				if err := git.repository(root, gitdir, common); err != nil {
					return fsMasks{}, err
				}
			}
		}
		if slices.Contains(names, ".git") && !policy.FullDiskWriteAccess {
			if err := git.enclosing(root); err != nil {
				return fsMasks{}, err
			}
		}
		if err := git.spent(root); err != nil {
			return fsMasks{}, err
		}
	}
	var changeable func(dir string) bool
	if policy.FullDiskWriteAccess {
		changeable = writable
	}
	denied := map[string]bool{}
	for _, path := range policy.DenyRead {
		// "secret.txt/" names the file secret.txt all the same: resolved as
		// given, it fails with ENOTDIR and would deny nothing. ENOTDIR is
		// left to a file met on the way ("/etc/hostname/x"), where nothing
		// can exist.
		// A ".." after a name the command can remove, replace or make
		// ("ROOT/sub/../secret", sub missing) left the path naming nothing,
		// and skipped, until the command made sub and read the secret by
		// that very path (found in review): refused, as a symlink there is.
		if left := dotDotInRoot(path, roots, changeable); left != "" {
			return fsMasks{}, fmt.Errorf("sandboxexec: DenyRead path %q has \"..\" after %s, inside a writable root "+
				"or a directory the command may write, which it could remove or make anew: name the path without \"..\"", path, left)
		}
		real, err := resolveUnmovedIn(trimTrailingSeparators(path), roots, nil, changeable)
		var moved *repointableError
		if errors.As(err, &moved) {
			return fsMasks{}, fmt.Errorf("sandboxexec: DenyRead path %q %w: name the file or directory it leads to instead", path, err)
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return fsMasks{}, fmt.Errorf("sandboxexec: DenyRead: %w", err)
		}
		if real == string(filepath.Separator) {
			return fsMasks{}, fmt.Errorf("sandboxexec: DenyRead path %q is the root directory: it would deny everything", path)
		}
		fi, err := os.Lstat(real)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fsMasks{}, fmt.Errorf("sandboxexec: DenyRead: %w", err)
		}
		if denied[real] {
			continue
		}
		denied[real] = true
		m.found[real] = fi
		if fi.IsDir() {
			m.DenyDirs = append(m.DenyDirs, real)
		} else {
			m.DenyFiles = append(m.DenyFiles, real)
		}
	}
	// What lies within a denied directory is hidden with it: the child
	// could not even find it under the cover (say ~/.aws and
	// ~/.aws/credentials both listed), and a read-only bind there would
	// change nothing.
	dirs := slices.Clone(m.DenyDirs)
	inDenied := func(p string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return d != p && pathWithin(p, d) })
	}
	m.DenyDirs = slices.DeleteFunc(m.DenyDirs, inDenied)
	m.DenyFiles = slices.DeleteFunc(m.DenyFiles, inDenied)
	m.ReadOnly = slices.DeleteFunc(m.ReadOnly, func(p string) bool { return denied[p] || inDenied(p) })
	// Parents before children: a mount over a directory would hide one
	// made below it before.
	for _, s := range [][]string{m.ReadOnly, m.DenyDirs, m.DenyFiles} {
		slices.SortFunc(s, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	}
	return m, nil
}

// protectEntry makes the entry p, found as fi, read-only; where it is a
// file that names a git directory ("gitdir: DIR", a worktree's or a
// submodule's .git), that directory and its common directory too, unless
// one is "/", a writable root or above one: made read-only, it would take
// the root with it. It returns the git and common directories it
// protected ("" for none); a directory is both its own. steps is
// resolvePathSteps'.
func (m *fsMasks) protectEntry(p string, fi fs.FileInfo, roots []string, steps *int) (gitdir, common string, err error) {
	m.addReadOnly(p, fi)
	if fi.IsDir() {
		return p, p, nil
	}
	if !fi.Mode().IsRegular() {
		return "", "", nil
	}
	dir, commondir, err := gitdirOf(p, roots, m, steps)
	if err != nil {
		return "", "", err
	}
	protect := func(d string) string {
		if d == "" || slices.ContainsFunc(roots, func(r string) bool { return pathWithin(r, d) }) {
			return ""
		}
		dfi, err := os.Lstat(d)
		if err != nil {
			return ""
		}
		m.addReadOnly(d, dfi)
		return d
	}
	gitdir = protect(dir)
	common = gitdir
	if commondir != "" {
		common = protect(commondir)
	}
	return gitdir, common, nil
}

// addReadOnly adds p, found as fi, to what is made read-only, unless it
// is there already or lies within a directory that is (a submodule's git
// directory in the root's .git): one more mount would protect nothing
// more.
func (m *fsMasks) addReadOnly(p string, fi fs.FileInfo) {
	if slices.ContainsFunc(m.ReadOnly, func(d string) bool { return pathWithin(p, d) }) {
		return
	}
	m.found[p] = fi
	m.ReadOnly = append(m.ReadOnly, p)
	if m.readOnly == nil {
		m.readOnly, m.above = map[string]bool{}, map[string]bool{}
	}
	m.readOnly[p] = true
	for d := cleanParent(p); !m.above[d]; d = cleanParent(d) {
		m.above[d] = true
		if d == cleanParent(d) {
			break
		}
	}
}

// gitFileTarget is the git directory a ".git" file names, as git reads it
// (read_gitfile_gently): what follows an exact "gitdir: ", less the line
// ends at the end; other spaces and further lines are part of the name
// (found in review: "gitdir: gd \n" names "gd ", which git used and the
// policy, trimming, left writable). ok is false where git finds no name.
func gitFileTarget(b []byte) (named string, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	rest = bytes.TrimRight(rest, "\r\n")
	rest, _, _ = bytes.Cut(rest, []byte{0}) // git's string ends there
	return string(rest), ok && len(rest) > 0
}

// gitdirOf reads a ".git" file ("gitdir: DIR", written by git worktree add
// and by submodules) and returns DIR, resolved, and the common directory
// DIR/commondir names, which holds the hooks and the configuration ("" for
// none, or where it is DIR); none when the file says something else or
// names nothing that exists. Either path going through a symlink that lies
// inside one of the writable roots is an error, whether it leads anywhere
// or not: the .git file is kept read-only, but the command could repoint
// the link, and the host's git would follow it to a directory (and hooks)
// of the command's making. So is a ".." after a name the command can
// change (see resolveGitPath). steps is resolvePathSteps'.
func gitdirOf(file string, roots []string, m *fsMasks, steps *int) (gitdir, common string, err error) {
	head, err := readGitFile(file)
	if leased(err) {
		return "", "", leasedError(file, err)
	}
	if err != nil {
		return "", "", fmt.Errorf("sandboxexec: read-only subpath: %w", err)
	}
	if len(head) >= gitFileMax {
		return "", "", fmt.Errorf("sandboxexec: read-only subpath %s is %d bytes or more, past what a .git file holds: "+
			"leave %q out of ReadOnlySubpaths", file, gitFileMax, filepath.Base(file))
	}
	named, ok := gitFileTarget(head)
	if !ok {
		return "", "", nil
	}
	dir, err := resolveFrom(filepath.Dir(file), named, roots, m.holds, steps)
	if err != nil {
		return "", "", fmt.Errorf("sandboxexec: read-only subpath %s names its git directory %q, which %w: "+
			"give the directory it points to instead, or leave %q out of ReadOnlySubpaths", file, named, err, filepath.Base(file))
	}
	if dir == "" {
		return "", "", nil
	}
	b, err := readGitFile(filepath.Join(dir, "commondir"))
	if leased(err) {
		return "", "", leasedError(filepath.Join(dir, "commondir"), err)
	}
	if err != nil && !scanSkips(filepath.Join(dir, "commondir"), err, roots) {
		return "", "", scanError(filepath.Join(dir, "commondir"), err)
	}
	// One of gitFileMax or more names no path the kernel takes, for git
	// either.
	if err == nil && len(b) < gitFileMax {
		// As git reads it: less the line ends at its end, up to a NUL.
		commondir, _, _ := strings.Cut(strings.TrimRight(string(b), "\r\n"), "\x00")
		// dir is protected with the .git file (see protectEntry), or is a
		// root or above one: a ".." that leaves it is no way to change.
		held := func(d string) bool { return pathWithin(d, dir) || pathWithin(dir, d) || m.holds(d) }
		common, err := resolveFrom(dir, commondir, roots, held, steps)
		if err != nil {
			return "", "", fmt.Errorf("sandboxexec: read-only subpath %s names its git directory %s, whose commondir %q %w: "+
				"give the directory it points to instead, or leave %q out of ReadOnlySubpaths", file, dir, commondir, err, filepath.Base(file))
		}
		if common != dir {
			return dir, common, nil
		}
	}
	return dir, "", nil
}

// gitFileMax is the most of a .git or commondir file that gitdirOf reads:
// each holds one path.
const gitFileMax = 4096

// leased says err is the open of a file that another process holds a
// write lease on (fcntl F_SETLEASE): the open, which does not wait,
// fails with EAGAIN. A sandboxed command may take none (seccomp), but a
// SandboxNone call's command or any program of the host's owner may, on
// a file it can read and owns, and a file of the policy's skipped as
// missing would leave the call's masks short (found in review: the
// host's global core.hooksPath, and with it a hooks directory in the
// root, missed). The policy fails instead (see leasedError).
func leased(err error) bool { return errors.Is(err, syscall.EAGAIN) }

// leasedError is the error of a policy whose file path is leased.
func leasedError(path string, err error) error {
	return fmt.Errorf("sandboxexec: read-only subpath: %s is held by another process's lease (fcntl "+
		"F_SETLEASE): not read, and not skipped: %w", path, err)
}

// readGitFile reads the regular file at path, gitFileMax bytes at most.
// Either file may lie in a writable root, where a command could have made
// it a FIFO, which an open would wait on for a writer for ever, or a
// symlink to /dev/zero, which a read to the end would never finish with
// (found in review: a commondir made so hung the next call, or took all
// its host's memory). What is not a regular file is an error, and is not
// opened (a device's open can do things of its own), even should the path
// be swapped between the look and the open (see openRegular).
func readGitFile(path string) ([]byte, error) {
	return readRegular(path, gitFileMax)
}

// readRegular reads the regular file at path, max bytes at most, as
// readGitFile does.
func readRegular(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// errNotRegular is openRegular's error for what is not a regular file.
func errNotRegular(path string) error {
	return &fs.PathError{Op: "read", Path: path, Err: errNotRegularFile}
}

var errNotRegularFile = errors.New("not a regular file")

// scanSkips says the git scan may take err, met looking at path, for
// nothing there to protect: a missing path, something that is not a
// regular file where one is read (git reads nothing there either), or a
// path the host may not look at (EACCES, EPERM) that lies outside every
// writable root, where the command can neither take the host's access
// away nor give it back (a host user's HOME of root's, kept by sudo -E).
// Any other error fails the call, since the path may hold what the
// host's git runs: found in review, a host user's command made the
// directory above the hooks core.hooksPath names unsearchable (chmod 000
// in its root), the next call's scan took the hooks for missing and left
// their mask out, and its command made the directory searchable again
// and wrote a hook there. EMFILE, ENOMEM, ELOOP and the like fail too.
func scanSkips(path string, err error, roots []string) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, errNotRegularFile) {
		return true
	}
	if !errors.Is(err, fs.ErrPermission) {
		return false
	}
	inRoot := func(p string) bool {
		p = filepath.Clean(p)
		return slices.ContainsFunc(roots, func(r string) bool { return pathWithin(p, r) })
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && filepath.IsAbs(pe.Path) && inRoot(pe.Path) {
		return false // where the lookup failed, a link followed
	}
	return !inRoot(path)
}

// scanError is the error of the git scan for a path it could not look
// at, which scanSkips did not skip.
func scanError(path string, err error) error {
	return fmt.Errorf("sandboxexec: read-only subpath: %s cannot be looked at (%w), and what the host's git "+
		"would take from it cannot be protected: make it readable to the host, or leave \".git\" out of ReadOnlySubpaths", path, err)
}

// resolveFrom resolves p, relative to base where it is not absolute, to an
// existing directory, or "". A symlink on the way that lies inside one of
// roots is an error (its text follows the path in a message), whether the
// path resolves or not, and so is a ".." after a name the command can
// change (see resolveGitPath). steps is resolvePathSteps': a path not
// resolved for want of them is "" too.
func resolveFrom(base, p string, roots []string, held func(dir string) bool, steps *int) (string, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return "", nil
	}
	real, err := resolveGitPath(joinUncleaned(base, p), roots, held, steps)
	if changeableWay(err) {
		return "", err
	}
	if errors.Is(err, errNoStepsLeft) || err != nil && scanSkips(p, err, roots) {
		return "", nil // for want of steps: gitScan.spent fails the call
	}
	if err != nil {
		return "", fmt.Errorf("cannot be looked up (%w)", err)
	}
	fi, err := os.Stat(real)
	if err != nil && !scanSkips(real, err, roots) {
		return "", fmt.Errorf("cannot be looked up (%w)", err)
	}
	if err != nil || !fi.IsDir() {
		return "", nil
	}
	return real, nil
}

// repointableError is resolveUnmoved's; its message follows a path's name.
type repointableError struct{ link, root, dotDot string }

func (e *repointableError) Error() string {
	if e.dotDot != "" {
		return "goes through the symlink " + e.link + ", whose target has \"..\" after " + e.dotDot +
			", which the command could remove or make anew"
	}
	if e.root == "" {
		return "goes through the symlink " + e.link + ", in a directory the command may write under " +
			"FullDiskWriteAccess, where it could repoint it"
	}
	return "goes through the symlink " + e.link + " inside the writable root " + e.root +
		", where the command could repoint it"
}

// resolveUnmoved is resolvePath for a path the policy protects: a symlink
// on the way that lies inside one of roots is a *repointableError, whether
// the path resolves or not. The command could
// repoint the link, and a later call would protect what it points to then.
// steps is resolvePathSteps'.
func resolveUnmoved(p string, roots []string, steps *int) (string, error) {
	return resolveUnmovedIn(p, roots, steps, nil)
}

// resolveUnmovedIn is resolveUnmoved where a symlink in a directory that
// changeable (nil for none) says the command may write is one too.
func resolveUnmovedIn(p string, roots []string, steps *int, changeable func(dir string) bool) (string, error) {
	return resolveUnmovedUp(p, roots, steps, changeable, nil)
}

// resolveGitPath is resolveUnmoved for a path the git metadata names,
// where a ".." after a name inside a root that the command can remove,
// replace or make (one held, fsMasks.holds, does not say it cannot) is a
// *dotDotError as well, whether the path resolves or not:
// the host's git follows the ".." from whatever is at that name then
// (found in review: "gitdir: sub/../gd", sub made a symlink a level
// deeper, had the host's git status run the command's core.fsmonitor).
// The ".." that git writes leaves protected or pinned directories
// ("gitdir: ../.git/modules/sub", a core.worktree from .git/modules).
func resolveGitPath(p string, roots []string, held func(dir string) bool, steps *int) (string, error) {
	var ups []string
	real, err := resolveUnmovedUp(p, roots, steps, nil, func(dir string) { ups = append(ups, dir) })
	if changeableWay(err) {
		return "", err
	}
	seen := map[string]bool{}
	for _, d := range ups {
		if seen[d] {
			continue
		}
		seen[d] = true
		i := slices.IndexFunc(roots, func(r string) bool { return d != r && pathWithin(d, r) })
		if i < 0 || held(d) {
			continue
		}
		return "", &dotDotError{d, roots[i]}
	}
	return real, err
}

// joinUncleaned is p, relative to base where it is not absolute, as the
// host's git and the kernel take it: filepath.Join would clean
// "sub/../gd" to "gd", with no look at what sub is.
func joinUncleaned(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return base + string(filepath.Separator) + p
}

// dotDotError is resolveGitPath's; its message follows a path's name.
type dotDotError struct{ name, root string }

func (e *dotDotError) Error() string {
	return "has \"..\" after " + e.name + ", inside the writable root " + e.root +
		", which the command could remove, replace with a symlink or make anew"
}

// changeableWay says err is resolveUnmoved's or resolveGitPath's for a
// way the command could change.
func changeableWay(err error) bool {
	var moved *repointableError
	var up *dotDotError
	return errors.As(err, &moved) || errors.As(err, &up)
}

// resolveUnmovedUp is resolveUnmovedIn that calls up as resolvePathUp
// does.
func resolveUnmovedUp(p string, roots []string, steps *int, changeable func(dir string) bool, up func(dir string)) (string, error) {
	var links [][2]string
	real, _, err := resolvePathUp(p, func(dir, name string) { links = append(links, [2]string{dir, name}) }, up, steps)
	if len(links) > 0 {
		var infos []fs.FileInfo // of roots, looked up only where a link was met
		for _, r := range roots {
			fi, _ := os.Stat(r)
			infos = append(infos, fi)
		}
		for _, l := range links {
			for i, r := range roots {
				if pathWithin(l[0], r) || infos[i] != nil && sameFileAbove(l[0], infos[i]) {
					return "", &repointableError{link: filepath.Join(l[0], l[1]), root: r}
				}
			}
			if changeable != nil && changeable(l[0]) {
				return "", &repointableError{link: filepath.Join(l[0], l[1])}
			}
			// A link outside them whose target has ".." after a name in a
			// root ("OUT/link -> ROOT/sub/..", sub missing) names nothing
			// until the command makes sub (found in review): as the path's
			// own ".." is, refused.
			if target, err := os.Readlink(filepath.Join(l[0], l[1])); err == nil && strings.Contains(target, "..") {
				if !filepath.IsAbs(target) {
					target = l[0] + string(filepath.Separator) + target // not Join: it cleans ".." away
				}
				if left := dotDotInRoot(target, roots, changeable); left != "" {
					return "", &repointableError{link: filepath.Join(l[0], l[1]), dotDot: left}
				}
			}
		}
	}
	return real, err
}

// dotDotInRoot returns the first name that a ".." of path steps back
// from and that lies strictly inside one of roots (a root itself is
// pinned, or out of the command's reach), or in a directory changeable
// (nil for none) says the command may write: a directory there, a file,
// or a name missing there. The command can remove, replace or make it, and so
// decide whether path names anything, and what. "" for none.
func dotDotInRoot(path string, roots []string, changeable func(dir string) bool) string {
	if !strings.Contains(path, "..") {
		return ""
	}
	inRoot := func(p string, strictly bool) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return pathWithin(p, r) && (!strictly || p != r) }) ||
			changeable != nil && p != string(filepath.Separator) && changeable(filepath.Dir(p))
	}
	sep := string(filepath.Separator)
	join := func(parts []string) string {
		if p := strings.Join(parts, sep); p != "" {
			return p
		}
		return sep
	}
	parts := strings.Split(path, sep)
	for i, name := range parts {
		if name != ".." {
			continue
		}
		if real, _, err := resolvePathSteps(join(parts[:i]), func(string, string) {}, nil); err == nil {
			if inRoot(real, true) {
				return real
			}
			continue
		}
		// Something before it names nothing (or no directory): find the
		// first name that does not resolve, and where it would be.
		for j := i - 1; j > 0; j-- {
			if real, _, err := resolvePathSteps(join(parts[:j]), func(string, string) {}, nil); err == nil {
				if p := filepath.Join(real, parts[j]); inRoot(p, true) {
					return p
				}
				break
			}
		}
		return ""
	}
	return ""
}

// trimTrailingSeparators drops the separators and "." components that
// follow a path's last name ("/a/b/", "/a/b/.", "/a/b//./" are "/a/b").
// Unlike filepath.Clean it leaves "..", which resolvePath takes after the
// symlinks before it, as the kernel does.
func trimTrailingSeparators(path string) string {
	const sep = string(filepath.Separator)
	for {
		switch {
		case len(path) > 1 && strings.HasSuffix(path, sep):
			path = path[:len(path)-1]
		case len(path) > 2 && strings.HasSuffix(path, sep+"."):
			path = path[:len(path)-2]
		case path == sep+".":
			return sep
		default:
			return path
		}
	}
}

// pinDepthMax bounds the directories on the way to the mounts a call makes
// (each pin and each protected path counted by its depth), and pinCountMax
// the mounts, whose cost the host pays as it looks at each (here, and at
// each call that keeps the mount namespace) and the child as it mounts
// each: a hooks path 1,900 directories deep, which a .git the command
// made can name, is as many pins, and four of them held each later call
// 2.2 to 4 s before its timeout started; 4,000 submodules' .git, 5
// directories deep each, 28,000 mounts, 0.7 to 1.2 s (found in review).
// About 0.8 s at most here, the scan included; 4,096 submodules 6
// directories deep are 50,000 and 8,200. Variables for tests.
var (
	pinDepthMax = 1 << 18
	pinCountMax = 1 << 14
)

// pin sets m.Pinned: the directories a Linux runner binds over themselves,
// so that each is a mount point in the command's namespace, which no rename
// or rmdir can move (EBUSY). A mount sits on its directory and goes with it
// when a directory above it is renamed: without the pins, a command could
// rename a directory between a writable root and what is protected below
// it, and make the path anew with content of its own (a git directory with
// a hook, found at the path by the host's git; or, in the next call, no
// denied file at the path, and the secret readable under the new name).
//
// Pinned are the directories strictly between an outermost writable root
// and each protected path inside it (a read-only subpath, a git directory,
// a denied path), and the roots inside another root; with everywhere
// (FullDiskWriteAccess, or / a root: nothing is read-only around the
// roots), each directory between / and each protected path. Directories
// within a protected path are not: they cannot be renamed anyway. Each is
// recorded in m.found as it is now; rootInfos is what was found at roots.
func (m *fsMasks) pin(roots []string, rootInfos []fs.FileInfo, everywhere bool) error {
	protected := slices.Concat(m.ReadOnly, m.DenyDirs, m.DenyFiles)
	if len(protected) == 0 && (everywhere || len(roots) < 2) {
		m.Pinned = nil // nothing to pin: the common call does no more
		return nil
	}
	var areas []string // the outermost writable directories
	if everywhere {
		areas = []string{string(filepath.Separator)}
	} else {
		for _, r := range roots {
			if !slices.ContainsFunc(roots, func(q string) bool { return q != r && pathWithin(r, q) }) {
				areas = append(areas, r)
			}
		}
	}
	covered := func(d string) bool {
		return slices.ContainsFunc(m.ReadOnly, func(p string) bool { return pathWithin(d, p) }) ||
			slices.ContainsFunc(m.DenyDirs, func(p string) bool { return pathWithin(d, p) })
	}
	var pins []string
	seen := map[string]bool{}
	depth := 0 // of the mounts: see pinDepthMax
	for _, p := range protected {
		depth += strings.Count(p, string(filepath.Separator))
	}
	add := func(d string) {
		if !seen[d] && !covered(d) && !slices.Contains(areas, d) {
			seen[d] = true
			pins = append(pins, d)
			depth += strings.Count(d, string(filepath.Separator))
		}
	}
	for _, p := range protected {
		i := slices.IndexFunc(areas, func(a string) bool { return pathWithin(p, a) })
		if i < 0 {
			continue // read-only around it
		}
		for d := filepath.Dir(p); d != areas[i] && pathWithin(d, areas[i]); d = filepath.Dir(d) {
			add(d)
		}
		if depth > pinDepthMax || len(pins)+len(protected) > pinCountMax {
			return fmt.Errorf("sandboxexec: the paths protected in the writable roots lie too deep, or are too many: "+
				"the mounts that protect and pin them would be more than %d, or go through more than %d directories, "+
				"below %s: protect fewer or shallower paths (leave \".git\" out of ReadOnlySubpaths where a command "+
				"made them)", pinCountMax, pinDepthMax, areas[i])
		}
	}
	if !everywhere {
		for _, r := range roots {
			add(r)
		}
	}
	slices.SortFunc(pins, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	for _, d := range pins {
		if i := slices.Index(roots, d); i >= 0 && i < len(rootInfos) && rootInfos[i] != nil {
			m.found[d] = rootInfos[i]
			continue
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("sandboxexec: the directory above a protected path: %w", err)
		}
		m.found[d] = fi
	}
	m.Pinned = pins
	return nil
}
