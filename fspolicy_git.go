package sandboxexec

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
)

// gitScanMax bounds the directories one policy resolution looks into
// below the git directories of its roots (each submodule's git directory,
// each step of a submodule name with slashes), and the paths their
// configuration names (each core.worktree value, each core.hooksPath value
// with each worktree). A git directory the command made in an earlier
// call, where none was, could hold any number of them; past the bound the
// call fails rather than leave the rest unread. A variable for tests.
var gitScanMax = 4096

// gitConfigMax is the most of a configuration file read; a larger one is
// an error, for the same reason.
const gitConfigMax = 1 << 20

// gitScanSteps bounds the names one policy resolution looks up on the way
// to what the configuration names (each step of each path) and lists in
// the directories it looks into; gitScanBytes the configuration it reads
// (each file's size, read or cached). Within gitScanMax, a command that
// made the git directory could still spend without bound (found in
// review): a 1 MiB core.worktree of "/usr/.." again and again is 150,000
// lookups (0.24 s), and the same file hard-linked as the config of 200
// submodules' git directories held the next call 44 s (4,000 would be 16
// minutes); 300,000 files in .git/worktrees took 0.65 s and 100 MB to
// list, and a million more. About 0.5 s and 0.2 s at most here.
// Variables for tests.
var (
	gitScanSteps       = 64 * gitScanMax
	gitScanBytes int64 = 8 << 20
)

// gitListBatch is how many entries a directory of the scan is read by.
const gitListBatch = 256

// gitScan finds what the host's git runs from inside the writable roots,
// beyond a root's .git: the .git entry of each submodule and linked
// worktree in a root (the host's git status in the root runs git in each
// populated submodule, with the configuration that entry leads to), and
// the hooks directory a configuration names there (core.hooksPath, as
// husky sets it, or a hooks directory that is a symlink), and a hook
// manager's files that those hooks run. It reads only what the command
// cannot change, within protected git directories or hooks directories, or
// outside the roots: the configuration files, the submodules' git
// directories, the linked worktrees' gitdir files, the hooks.
type gitScan struct {
	roots []string
	masks *fsMasks
	// scanned holds the git directories read, and, as "worktrees:" and
	// the directory, the common directories whose worktrees were listed.
	scanned map[string]bool
	left    int // directories that may still be looked into
	// steps and bytes are what is left of gitScanSteps and gitScanBytes.
	steps int
	bytes int64
	homes map[string]string // ~user/ expanded: see homeOf
	// global holds the core.hooksPath values of the host's system and
	// global configuration, once read (see globalHooksPaths).
	global     []string
	globalRead bool
}

// repository protects what the host's git takes from the git directory
// gitdir, whose common directory is common, when it runs in the worktree
// whose top is top; "" for a submodule's git directory, whose
// configuration names its worktree (core.worktree). Either directory is ""
// where it is not protected: what it holds could be the command's.
func (s *gitScan) repository(top, gitdir, common string) error {
	if gitdir == "" || s.scanned[gitdir] {
		return nil
	}
	s.scanned[gitdir] = true
	if err := s.spend(gitdir); err != nil {
		return err
	}
	config, err := s.config(gitdir, common)
	if err != nil {
		return err
	}
	tops := []string{top}
	if top == "" {
		if tops, err = s.submoduleWorktrees(gitdir, config); err != nil {
			return err
		}
		if len(tops) == 0 {
			tops = []string{""} // an absolute core.hooksPath still counts
		}
	}
	// Each value once, each worktree with each value costing one look: a
	// configuration the command wrote, in a .git it made, can repeat
	// core.worktree and core.hooksPath by the ten thousand, and every pair
	// of them unbounded took hours, ignoring the call's context.
	values, err := s.globalHooksPaths()
	if err != nil {
		return err
	}
	values = slices.Clone(values)
	seen := map[string]bool{}
	for _, v := range values {
		seen[v] = true
	}
	for _, e := range config {
		if e.name == "core.hookspath" && e.hasValue && !seen[e.value] {
			seen[e.value] = true
			values = append(values, e.value)
		}
	}
	for _, t := range tops {
		for _, v := range values {
			if err := s.spend(gitdir); err != nil {
				return err
			}
			dir, err := s.hooksPath(t, v)
			if err != nil {
				return err
			}
			if err := s.hookManagers(dir, t); err != nil {
				return err
			}
		}
	}
	if common != "" {
		dir, err := s.hooksLink(filepath.Join(common, "hooks"))
		if err != nil {
			return err
		}
		for _, t := range tops {
			if err := s.hookManagers(dir, t); err != nil {
				return err
			}
		}
		if err := s.linkedWorktrees(common); err != nil {
			return err
		}
	}
	return s.submodules(filepath.Join(gitdir, "modules"))
}

// spend counts one more directory, or path a configuration names, looked
// into below dir.
func (s *gitScan) spend(dir string) error {
	if s.left--; s.left < 0 {
		return s.tooMany(dir)
	}
	return s.spent(dir)
}

// tooMany is spend's error.
func (s *gitScan) tooMany(dir string) error {
	return fmt.Errorf("sandboxexec: read-only subpath: more than %d git directories of submodules and worktrees, "+
		"core.worktree and core.hooksPath values to look into, up to %s: leave \".git\" out of ReadOnlySubpaths", gitScanMax, dir)
}

// spent fails once the scan has used up its steps or bytes, which a path
// the scan gave up resolving for want of steps has (that path's mask would
// be missing). dir says where it was.
func (s *gitScan) spent(dir string) error {
	switch {
	case s.steps < 0:
		return fmt.Errorf("sandboxexec: read-only subpath: more than %d names to look up in the paths that the git "+
			"configuration names and the directories it is kept in, up to %s: leave \".git\" out of ReadOnlySubpaths", gitScanSteps, dir)
	case s.bytes < 0:
		return fmt.Errorf("sandboxexec: read-only subpath: more than %d bytes of git configuration to read, "+
			"up to %s: leave \".git\" out of ReadOnlySubpaths", gitScanBytes, dir)
	}
	return nil
}

// readConfig is readGitConfig, within the scan's bytes.
func (s *gitScan) readConfig(path string) ([]gitConfigEntry, error) {
	entries, size, err := readGitConfigSize(path)
	if err != nil && !leased(err) && scanSkips(path, err, s.roots) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.bytes -= size
	if err := s.spent(path); err != nil {
		return nil, err
	}
	return entries, nil
}

// subdirs lists the directories in dir (followed if it is a symlink, as
// git follows it), not waiting on it if it is something else (a FIFO).
// Each entry read takes a step: a directory the command filled is read a
// batch at a time, and the names kept are those of directories alone,
// fewer than the scan may still look into.
func (s *gitScan) subdirs(dir string) ([]string, error) {
	var names []string
	err := s.list(dir, func(e fs.DirEntry) error {
		if !e.IsDir() {
			return nil
		}
		if names = append(names, e.Name()); len(names) > s.left {
			return s.tooMany(filepath.Join(dir, e.Name()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// list calls each for every entry of the directory dir, a batch at a time,
// each entry a step of the scan's; a directory that is missing (see
// scanSkips) has none, and a FIFO in its place is not waited on.
func (s *gitScan) list(dir string, each func(fs.DirEntry) error) error {
	f, err := openDir(dir)
	if err != nil && scanSkips(dir, err, s.roots) {
		return nil
	}
	if err != nil {
		return scanError(dir, err)
	}
	defer f.Close()
	for {
		batch, err := f.ReadDir(gitListBatch)
		for _, e := range batch {
			s.steps--
			if err := each(e); err != nil {
				return err
			}
		}
		if err := s.spent(dir); err != nil {
			return err
		}
		if err != nil || len(batch) == 0 {
			return nil
		}
	}
}

// config is the configuration git reads for gitdir: common's config, and
// gitdir's config.worktree, which git reads only where that config sets
// extensions.worktreeConfig (always, where common is not protected: its
// config cannot be trusted to say). Files that are missing or not regular
// are skipped (git could not read the latter either); a file that does not
// parse gives what came before the error, after which git reads nothing.
func (s *gitScan) config(gitdir, common string) ([]gitConfigEntry, error) {
	var entries []gitConfigEntry
	if common != "" {
		e, err := s.readConfig(filepath.Join(common, "config"))
		if err != nil {
			return nil, err
		}
		entries = append(entries, e...)
		if !maybeTrue(entries, "extensions.worktreeconfig") {
			return entries, nil
		}
	}
	e, err := s.readConfig(filepath.Join(gitdir, "config.worktree"))
	if err != nil {
		return nil, err
	}
	return append(entries, e...), nil
}

// maybeTrue says the last setting of name among entries is not one of the
// spellings git reads as false ("false", "no", "off", "0", or an empty
// value): where this cannot tell, the file is read, as if it were true.
func maybeTrue(entries []gitConfigEntry, name string) bool {
	set := false
	for _, e := range entries {
		if e.name != name {
			continue
		}
		switch strings.ToLower(e.value) {
		case "false", "no", "off", "0", "":
			set = !e.hasValue // a name alone is true
		default:
			set = true
		}
	}
	return set
}

// submoduleWorktrees resolves each core.worktree of a submodule's git
// directory (relative to it) and protects the .git entry there when it
// lies in a writable root: rewritten to name a git directory of the
// command's, with core.fsmonitor set, it would have the host's next git
// status in the superproject run the command's program. It returns the
// worktrees that exist. A path through a symlink inside a root is an
// error: the command could repoint it.
func (s *gitScan) submoduleWorktrees(gitdir string, config []gitConfigEntry) ([]string, error) {
	var tops []string
	tried, found := map[string]bool{}, map[string]bool{}
	for _, e := range config {
		if e.name != "core.worktree" || !e.hasValue || tried[e.value] {
			continue
		}
		tried[e.value] = true
		if err := s.spend(gitdir); err != nil {
			return nil, err
		}
		top, err := resolveFrom(gitdir, e.value, s.roots, s.masks.holds, &s.steps)
		if err != nil {
			return nil, fmt.Errorf("sandboxexec: read-only subpath: the submodule git directory %s names its worktree %q, which %w: "+
				"leave \".git\" out of ReadOnlySubpaths", gitdir, e.value, err)
		}
		if top == "" || found[top] {
			continue
		}
		found[top] = true
		tops = append(tops, top)
		if err := s.worktreeEntry(top, gitdir); err != nil {
			return nil, err
		}
	}
	return tops, nil
}

// linkedWorktrees protects the .git file of each linked worktree of common
// (git worktree add) that lies in a writable root, found through the
// worktree's gitdir file in common/worktrees/ID.
func (s *gitScan) linkedWorktrees(common string) error {
	if s.scanned["worktrees:"+common] {
		return nil
	}
	s.scanned["worktrees:"+common] = true
	dir := filepath.Join(common, "worktrees")
	ids, err := s.subdirs(dir)
	if err != nil {
		return err
	}
	for _, id := range ids {
		gitdir := filepath.Join(dir, id)
		if err := s.spend(gitdir); err != nil {
			return err
		}
		b, err := readGitFile(filepath.Join(gitdir, "gitdir"))
		if leased(err) {
			return leasedError(filepath.Join(gitdir, "gitdir"), err)
		}
		if err != nil && !scanSkips(filepath.Join(gitdir, "gitdir"), err, s.roots) {
			return scanError(filepath.Join(gitdir, "gitdir"), err)
		}
		if err != nil || len(b) >= gitFileMax { // no path the kernel takes
			continue
		}
		// The .git file's path: absolute, or (worktree.useRelativePaths)
		// relative to the file that names it. Its directory is taken as
		// spelled, not cleaned: see resolveGitPath. Git trims the spaces
		// at its end only (strbuf_rtrim).
		dotGit := strings.TrimRight(string(b), " \t\n\v\f\r")
		name := trimTrailingSeparators(dotGit)
		if filepath.Base(name) != ".git" {
			continue
		}
		top, err := resolveFrom(gitdir, cmp.Or(strings.TrimSuffix(name, ".git"), "."), s.roots, s.masks.holds, &s.steps)
		if err != nil {
			return fmt.Errorf("sandboxexec: read-only subpath: the worktree git directory %s names its worktree's .git %q, which %w: "+
				"leave \".git\" out of ReadOnlySubpaths", gitdir, dotGit, err)
		}
		if top != "" {
			if err := s.worktreeEntry(top, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// worktreeEntry protects top/.git where top lies in a writable root (and
// is none of them: a root's own .git is the policy's to protect, or not),
// then what the git directory it names leads to. from is the submodule's
// git directory whose configuration named top ("" for none).
func (s *gitScan) worktreeEntry(top, from string) error {
	if !s.inRoot(top) || slices.Contains(s.roots, top) {
		return nil
	}
	p := filepath.Join(top, ".git")
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandboxexec: read-only subpath: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("sandboxexec: read-only subpath: the submodule's or worktree's %s is a symlink, which the command "+
			"could replace: make it a file or a directory, or leave \".git\" out of ReadOnlySubpaths", p)
	}
	if from != "" && fi.Mode().IsRegular() && namesGitdir(p, from) {
		// The usual case: the .git file names back the git directory just
		// read, which needs no resolving again.
		s.masks.addReadOnly(p, fi)
		return nil
	}
	gitdir, common, err := s.masks.protectEntry(p, fi, s.roots, &s.steps)
	if err != nil {
		return err
	}
	return s.repository(top, gitdir, common)
}

// namesGitdir reports whether the .git file at p says "gitdir: DIR" with
// DIR the git directory gitdir as it is spelled, or relative to p's
// directory with nothing but leading ".." steps before names: given that
// gitdir, and p's directory, are resolved paths, no symlink can lie on
// such a way, and it leads where its spelling does.
func namesGitdir(p, gitdir string) bool {
	head, err := readGitFile(p)
	if err != nil {
		return false
	}
	named, ok := gitFileTarget(head)
	if !ok || len(head) >= gitFileMax {
		return false
	}
	rest := named
	if !filepath.IsAbs(named) {
		for strings.HasPrefix(rest, ".."+string(filepath.Separator)) {
			rest = rest[3:]
		}
		named = filepath.Join(filepath.Dir(p), named)
	}
	return rest != "" && filepath.Clean(rest) == rest && !slices.Contains(strings.Split(rest, string(filepath.Separator)), "..") &&
		named == gitdir
}

// submodules visits the git directories of submodules below dir (a git
// directory's modules). A submodule's name may hold slashes: a directory
// with a config file is a submodule's git directory, any other a step of
// a name. Symlinks are not followed: git makes none there.
func (s *gitScan) submodules(dir string) error {
	names, err := s.subdirs(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := s.submoduleOrStep(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// submoduleOrStep reads d as a submodule's git directory if it has a
// config file, and as a step of a submodule name otherwise.
func (s *gitScan) submoduleOrStep(d string) error {
	if _, err := os.Lstat(filepath.Join(d, "config")); err == nil {
		return s.repository("", d, d)
	} else if !scanSkips(filepath.Join(d, "config"), err, s.roots) {
		return scanError(filepath.Join(d, "config"), err)
	}
	if err := s.spend(d); err != nil {
		return err
	}
	return s.submodules(d)
}

// globalHooksPaths are the core.hooksPath values of the host's system and
// global git configuration, which apply to every repository: a relative
// one names a directory in each worktree (found in review: a team's
// ~/.gitconfig with core.hooksPath = .githooks let a command write the
// hook the host's next commit ran). The files are those git reads for the
// host's environment: GIT_CONFIG_SYSTEM or /etc/gitconfig (none with
// GIT_CONFIG_NOSYSTEM), then GIT_CONFIG_GLOBAL, or else
// $XDG_CONFIG_HOME/git/config and ~/.gitconfig. Every value counts, as for
// a repository's own.
func (s *gitScan) globalHooksPaths() ([]string, error) {
	if s.globalRead {
		return s.global, nil
	}
	s.globalRead = true
	var files []string
	if !maybeTrue([]gitConfigEntry{{name: "n", value: os.Getenv("GIT_CONFIG_NOSYSTEM"), hasValue: true}}, "n") {
		files = append(files, cmp.Or(os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	if global, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		files = append(files, global)
	} else if home := os.Getenv("HOME"); home != "" || os.Getenv("XDG_CONFIG_HOME") != "" {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			xdg = filepath.Join(home, ".config")
		}
		files = append(files, filepath.Join(xdg, "git", "config"))
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	for _, f := range files {
		if f == "" || !filepath.IsAbs(f) {
			continue
		}
		entries, err := s.readConfig(f)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.name == "core.hookspath" && e.hasValue && !slices.Contains(s.global, e.value) {
				s.global = append(s.global, e.value)
			}
		}
	}
	return s.global, nil
}

// hooksPath protects the directory a core.hooksPath value names when it
// lies in a writable root: the host's git runs the hooks in it. A relative
// value is relative to the worktree's top ("" where it has none). It
// returns the directory where the command cannot change its hooks (see
// protectHooks).
func (s *gitScan) hooksPath(top, value string) (string, error) {
	p := value
	switch {
	case strings.HasPrefix(p, "~"):
		// "~/" is the host's HOME, "~user/" that user's home, as git
		// expands them; a user git cannot find names no directory.
		name, rest, _ := strings.Cut(p[1:], "/")
		home := os.Getenv("HOME")
		if name != "" {
			var err error
			if home, err = s.homeOf(name); err != nil {
				return "", err
			}
		}
		if home == "" {
			return "", nil
		}
		p = joinUncleaned(home, rest) // as git spells it: see resolveGitPath
	case !filepath.IsAbs(p):
		if top == "" {
			return "", nil
		}
		p = joinUncleaned(top, p)
	}
	return s.protectHooks(p, fmt.Sprintf("core.hooksPath %q", value))
}

// gitScanUsers bounds the users whose homes one scan looks up, each once:
// a lookup goes through the host's name service (NSS), which may ask a
// directory server over the network (LDAP, sssd) and wait on it, and a
// .git the command made could name thousands of users. A variable for
// tests.
var gitScanUsers = 16

// homeOf is the home directory of the user name, "" where there is no
// such user.
func (s *gitScan) homeOf(name string) (string, error) {
	if home, ok := s.homes[name]; ok {
		return home, nil
	}
	if len(s.homes) >= gitScanUsers {
		return "", fmt.Errorf("sandboxexec: read-only subpath: core.hooksPath values name the homes of more than %d users "+
			"(~user/) to look up: leave \".git\" out of ReadOnlySubpaths", gitScanUsers)
	}
	if s.homes == nil {
		s.homes = map[string]string{}
	}
	home := ""
	u, err := lookupUser(name)
	var unknown user.UnknownUserError
	switch {
	case err == nil:
		home = u.HomeDir
	case !errors.As(err, &unknown):
		// The name service failed (a directory server out of reach): the
		// host's git, which may find the user later, would run the hooks
		// of a home that went unprotected.
		return "", fmt.Errorf("sandboxexec: read-only subpath: the home of the user %q, which a core.hooksPath value "+
			"names (~%s/), cannot be looked up: %w", name, name, err)
	}
	s.homes[name] = home
	return home, nil
}

// lookupUser is user.Lookup; a variable for tests.
var lookupUser = user.Lookup

// hooksLink protects where a git directory's hooks lead when they are a
// symlink into a writable root: the link is read-only with the git
// directory, but not what it points to. It returns the hooks directory
// where the command cannot change its hooks ("" for none).
func (s *gitScan) hooksLink(hooks string) (string, error) {
	fi, err := os.Lstat(hooks)
	if err != nil && !scanSkips(hooks, err, s.roots) {
		return "", scanError(hooks, err)
	}
	if err != nil {
		return "", nil
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		if !fi.IsDir() {
			return "", nil
		}
		return hooks, nil // within the protected git directory
	}
	target, err := os.Readlink(hooks)
	if err != nil {
		return "", scanError(hooks, err)
	}
	// Joined as the kernel follows it, not cleaned: see resolveGitPath.
	target = joinUncleaned(filepath.Dir(hooks), target)
	return s.protectHooks(target, "the symlink "+hooks)
}

// protectHooks makes the hooks directory p read-only where it exists in a
// writable root, unless it is a root or above one (which would make the
// root read-only). A path through a symlink inside a root is an error:
// the command could repoint it to hooks of its own. Husky 9's hooks
// directory .husky/_ holds stubs that run .husky/<hook>, an ordinary file
// of the worktree: there .husky is protected instead. It returns the
// directory, resolved, where it exists and the command cannot change what
// it holds (outside the roots, or protected), "" otherwise.
func (s *gitScan) protectHooks(p, namedBy string) (string, error) {
	real, err := s.protectPath(p, "the hooks directory", namedBy, true)
	if err != nil || real == "" {
		return "", err
	}
	if !s.inRoot(real) {
		return real, nil
	}
	if !slices.ContainsFunc(s.masks.ReadOnly, func(d string) bool { return pathWithin(real, d) }) {
		return "", nil // a root or above one: the command's
	}
	return real, nil
}

// protectPath makes p read-only where it exists in a writable root and is
// not a root or above one, and returns it resolved ("" where it does not
// exist). A path through a symlink inside a root is an error. what and
// namedBy say what p is, and what named it. husky says p is a hooks
// directory, which husky 9's layout (.husky/_) protects with its parent.
func (s *gitScan) protectPath(p, what, namedBy string, husky bool) (string, error) {
	real, err := resolveGitPath(p, s.roots, s.masks.holds, &s.steps)
	if changeableWay(err) {
		return "", fmt.Errorf("sandboxexec: read-only subpath: %s %s that %s names %w: "+
			"name what it leads to instead, or leave \".git\" out of ReadOnlySubpaths", what, p, namedBy, err)
	}
	if err != nil && !errors.Is(err, errNoStepsLeft) && !scanSkips(p, err, s.roots) {
		return "", scanError(p, err) // for want of steps: spent fails the call
	}
	if err != nil {
		return "", nil
	}
	fi, err := os.Lstat(real)
	if err != nil && !scanSkips(real, err, s.roots) {
		return "", scanError(real, err)
	}
	if err != nil {
		return "", nil
	}
	protect := func(q string, fi fs.FileInfo) bool {
		if !s.inRoot(q) || slices.ContainsFunc(s.roots, func(r string) bool { return pathWithin(r, q) }) {
			return false
		}
		s.masks.addReadOnly(q, fi)
		return true
	}
	// husky 9 takes another directory than .husky too ("husky .config/husky"
	// sets .config/husky/_), whose stubs run ../<hook> all the same: its
	// layout is told by the runner "h" it copies into _, not by the name.
	if parent := filepath.Dir(real); husky && fi.IsDir() && filepath.Base(real) == "_" &&
		(filepath.Base(parent) == ".husky" || huskyRunner(real)) {
		pfi, err := os.Lstat(parent)
		if err != nil {
			return "", scanError(parent, err)
		}
		if protect(parent, pfi) {
			return real, nil
		}
	}
	protect(real, fi)
	return real, nil
}

// huskyRunner says whether the hooks directory dir holds husky 9's runner
// "h", which its stubs source to run the hook of the same name one
// directory up.
func huskyRunner(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, "h"))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) // in doubt, protect more
	}
	return fi.Mode().IsRegular()
}

// gitHookNames are the hooks git runs in a worktree, whose files a hook
// manager's may be.
var gitHookNames = map[string]bool{
	"applypatch-msg": true, "pre-applypatch": true, "post-applypatch": true, "pre-commit": true,
	"pre-merge-commit": true, "prepare-commit-msg": true, "commit-msg": true, "post-commit": true,
	"pre-rebase": true, "post-checkout": true, "post-merge": true, "pre-push": true,
	"reference-transaction": true, "post-rewrite": true, "sendemail-validate": true,
	"fsmonitor-watchman": true, "post-index-change": true, "pre-auto-gc": true,
	"push-to-checkout": true, "pre-receive": true, "update": true, "proc-receive": true, "post-update": true,
}

// hookHeadMax is how much of a hook file is read to tell whose it is.
const hookHeadMax = 4 << 10

// lefthookFiles are what lefthook reads at the worktree's top: its
// configuration in each format, the -local one merged into it, and the
// directories of its scripts (source_dir, source_dir_local).
var lefthookFiles = func() []string {
	var names []string
	for _, base := range []string{"lefthook", ".lefthook", ".config/lefthook", "lefthook-local", ".lefthook-local", ".config/lefthook-local"} {
		for _, ext := range []string{"yml", "yaml", "toml", "json", "jsonc"} {
			names = append(names, filepath.FromSlash(base+"."+ext))
		}
	}
	return append(names, ".lefthook", ".lefthook-local")
}()

// hookManagers protects, in the worktree whose top is top, the files of a
// hook manager whose hook is in dir, which the hook runs on the host:
// pre-commit's configuration (a "repo: local" hook's entry is any
// command), and lefthook's. dir must be out of the command's reach, so its
// hooks are read as they are (only regular files, a few KiB of each).
func (s *gitScan) hookManagers(dir, top string) error {
	if dir == "" || top == "" || s.scanned["hooks:"+dir+"\x00"+top] {
		return nil
	}
	s.scanned["hooks:"+dir+"\x00"+top] = true
	hooks, links, err := s.listHooks(dir)
	if err != nil {
		return err
	}
	// husky 9's stubs in a protected _ run the hook of the same name in
	// the protected directory above, which may be a symlink to a script
	// of the worktree as well.
	if parent := filepath.Dir(dir); filepath.Base(dir) == "_" &&
		slices.ContainsFunc(s.masks.ReadOnly, func(d string) bool { return pathWithin(parent, d) }) {
		_, up, err := s.listHooks(parent)
		if err != nil {
			return err
		}
		for _, name := range up {
			links = append(links, filepath.Join("..", name))
		}
	}
	// A hook that is a symlink into a root (to a script of the worktree)
	// runs what it points to, which is protected as a hooks link's is.
	for _, name := range links {
		p := filepath.Join(dir, name)
		target, err := os.Readlink(p)
		if err != nil && !scanSkips(p, err, s.roots) {
			return scanError(p, err)
		}
		if err != nil {
			continue
		}
		target = joinUncleaned(filepath.Dir(p), target)
		if _, err := s.protectPath(target, "the hook", "the symlink "+p, false); err != nil {
			return err
		}
	}
	slices.Sort(hooks)
	lefthook := false
	for _, name := range hooks {
		p := filepath.Join(dir, name)
		b, err := readRegular(p, hookHeadMax)
		if leased(err) {
			return leasedError(p, err)
		}
		if err != nil && !scanSkips(p, err, s.roots) {
			return scanError(p, err)
		}
		s.bytes -= int64(len(b))
		if err := s.spent(p); err != nil {
			return err
		}
		head := string(b)
		if config, ok := preCommitConfig(head); ok {
			config = joinUncleaned(top, config)
			if _, err := s.protectPath(config, "the pre-commit configuration", "the hook "+p, false); err != nil {
				return err
			}
		}
		lefthook = lefthook || strings.Contains(head, "lefthook")
	}
	if lefthook {
		for _, name := range lefthookFiles {
			if _, err := s.protectPath(filepath.Join(top, name), "the lefthook file", "the hook in "+dir, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// listHooks lists the files of dir named as git hooks: the regular ones
// and the symlinks.
func (s *gitScan) listHooks(dir string) (hooks, links []string, _ error) {
	err := s.list(dir, func(e fs.DirEntry) error {
		switch {
		case !gitHookNames[e.Name()]:
		case e.Type().IsRegular():
			hooks = append(hooks, e.Name())
		case e.Type()&fs.ModeSymlink != 0:
			links = append(links, e.Name())
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return hooks, links, nil
}

// preCommitConfig says whether head, a hook file's start, is pre-commit's
// (which runs "pre-commit hook-impl --config=FILE"), and the FILE it
// names, relative to the worktree's top.
func preCommitConfig(head string) (string, bool) {
	if !strings.Contains(head, "hook-impl") || !strings.Contains(head, "pre-commit") {
		return "", false
	}
	config := ".pre-commit-config.yaml"
	for _, line := range strings.Split(head, "\n") {
		args, ok := strings.CutPrefix(strings.TrimSpace(line), "ARGS=(")
		if !ok {
			continue
		}
		words := shellWords(strings.TrimSuffix(args, ")"))
		for i, w := range words {
			if c, ok := strings.CutPrefix(w, "--config="); ok {
				config = c
			} else if (w == "--config" || w == "-c") && i+1 < len(words) {
				config = words[i+1]
			}
		}
		break
	}
	return config, true
}

// shellWords splits s as sh would a line of quoted words (as Python's
// shlex.join writes them), without expansions.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
				i++
				w.WriteByte(s[i])
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// inRoot reports whether p lies in a writable root: elsewhere the command
// cannot write it anyway (or, under FullDiskWriteAccess, may write the
// host's git configuration itself).
func (s *gitScan) inRoot(p string) bool {
	return slices.ContainsFunc(s.roots, func(r string) bool { return pathWithin(p, r) })
}

// enclosing scans the repository whose worktree holds root below its top,
// which the host's git finds from a directory above the root (a package of
// a monorepo, or a directory in a submodule, given as the root): the .git
// of its submodules and its hooks directory may lie in the root, where
// the command could otherwise plant them (found in review: with the
// superproject's pkg as the root, the command pointed pkg/lib/.git at a
// git directory of its own with core.fsmonitor set, and the host's next
// git status in the superproject ran it). Like git, it stops at the first
// .git above the root. One inside a root is not read: it is the command's
// to write (a root's own .git is read by resolveMasks).
func (s *gitScan) enclosing(root string) error {
	if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
		return nil // the root is a worktree's top
	}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		if fi, err := os.Lstat(p); err == nil {
			if s.inRoot(p) {
				return nil
			}
			var gitdir, common string
			if fi.Mode().IsRegular() {
				if gitdir, common, err = gitdirOf(p, s.roots, s.masks, &s.steps); err != nil {
					return err
				}
				if common == "" {
					common = gitdir
				}
			} else if gitdir, err = resolveFrom(d, ".git", s.roots, s.masks.holds, &s.steps); err != nil {
				return err
			} else {
				common = gitdir
			}
			if gitdir == "" || s.inRoot(gitdir) {
				return nil
			}
			if s.inRoot(common) {
				common = ""
			}
			return s.repository(d, gitdir, common)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
