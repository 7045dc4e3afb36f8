package sandboxexec

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
)

// gitConfigs keeps what each configuration file the policy read held, by
// path and by the identity of the file read (device, inode, size,
// modification and change times). git rewrites a configuration through a
// rename, and an edit in place moves the file's change time, so a file
// found again with the same identity holds what it held. Reading one
// through openRegular's checks cost a call about 15 µs; looking at it
// costs an lstat. Only an edit in place that keeps the size, within one
// tick of the file system's clock after the read, could go unseen, and a
// command that can write the file can as well write the hooks it would
// name.
var gitConfigs = gitConfigCache{files: map[string]cachedGitConfig{}}

// gitConfigCacheMax bounds the files kept; past it the cache starts again.
// A file is kept only if it is at most gitConfigCacheFile bytes, with at
// most gitConfigCacheEntries entries the policy reads (see gitScanNames),
// so that the cache holds 17 MB at most: a file of 1 MiB of "\ta\n"
// lines is 350,000 entries, and 256 such files, which a command that made
// a .git could write, held 4 GB; 256 of 64 KiB, 271 MB (found in review).
const (
	gitConfigCacheMax     = 256
	gitConfigCacheFile    = 64 << 10
	gitConfigCacheEntries = 64
)

// gitScanNames are the variables the policy reads from a git
// configuration; readGitConfig returns no other.
var gitScanNames = map[string]bool{"core.hookspath": true, "core.worktree": true, "extensions.worktreeconfig": true}

type gitConfigCache struct {
	mu    sync.Mutex
	files map[string]cachedGitConfig
}

type cachedGitConfig struct {
	id      fileIdentity
	entries []gitConfigEntry
	size    int // of the file read
}

// readGitConfig returns the entries of the configuration file at path
// that the policy reads (see gitScanNames); found is false where it is
// missing or not a regular file (git reads nothing there either).
func readGitConfig(path string) (entries []gitConfigEntry, found bool, err error) {
	entries, size, err := readGitConfigSize(path)
	return entries, size >= 0, err
}

// readGitConfigSize is readGitConfig that gives the size of the file
// instead, -1 where it is missing or not a regular file.
func readGitConfigSize(path string) (entries []gitConfigEntry, size int64, err error) {
	id, ok, absent := lstatIdentity(path)
	if absent {
		return nil, -1, nil
	}
	if ok {
		gitConfigs.mu.Lock()
		c, hit := gitConfigs.files[path]
		gitConfigs.mu.Unlock()
		if hit && c.id == id {
			return c.entries, int64(c.size), nil
		}
	}
	b, id, ok, err := readRegularIdentity(path, gitConfigMax+1)
	if leased(err) {
		return nil, -1, leasedError(path, err)
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, errNotRegularFile) {
		return nil, -1, nil
	}
	if err != nil {
		// Not taken for missing (see scanSkips, which the scan asks).
		return nil, -1, scanError(path, err)
	}
	if len(b) > gitConfigMax {
		return nil, -1, fmt.Errorf("sandboxexec: read-only subpath: %s is larger than %d bytes, "+
			"too large to look for core.hooksPath and core.worktree in: leave \".git\" out of ReadOnlySubpaths", path, gitConfigMax)
	}
	all, _ := parseGitConfig(b)
	for _, e := range all { // a new array: all's would be kept whole
		if gitScanNames[e.name] {
			entries = append(entries, e)
		}
	}
	if ok && len(b) <= gitConfigCacheFile && len(entries) <= gitConfigCacheEntries {
		gitConfigs.mu.Lock()
		if len(gitConfigs.files) >= gitConfigCacheMax {
			gitConfigs.files = map[string]cachedGitConfig{}
		}
		gitConfigs.files[path] = cachedGitConfig{id: id, entries: entries, size: len(b)}
		gitConfigs.mu.Unlock()
	}
	return entries, int64(len(b)), nil
}
