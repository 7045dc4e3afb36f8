package sandboxexec

import (
	"fmt"
	"sync"
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
const gitConfigCacheMax = 256

type gitConfigCache struct {
	mu    sync.Mutex
	files map[string]cachedGitConfig
}

type cachedGitConfig struct {
	id      fileIdentity
	entries []gitConfigEntry
}

// readGitConfig returns the entries of the configuration file at path;
// found is false where it is missing or not a regular file (git reads
// nothing there either).
func readGitConfig(path string) (entries []gitConfigEntry, found bool, err error) {
	id, ok, absent := lstatIdentity(path)
	if absent {
		return nil, false, nil
	}
	if ok {
		gitConfigs.mu.Lock()
		c, hit := gitConfigs.files[path]
		gitConfigs.mu.Unlock()
		if hit && c.id == id {
			return c.entries, true, nil
		}
	}
	b, id, ok, err := readRegularIdentity(path, gitConfigMax+1)
	if err != nil {
		return nil, false, nil
	}
	if len(b) > gitConfigMax {
		return nil, false, fmt.Errorf("sandboxexec: read-only subpath: %s is larger than %d bytes, "+
			"too large to look for core.hooksPath and core.worktree in: leave \".git\" out of ReadOnlySubpaths", path, gitConfigMax)
	}
	entries, _ = parseGitConfig(b)
	if ok {
		gitConfigs.mu.Lock()
		if len(gitConfigs.files) >= gitConfigCacheMax {
			gitConfigs.files = map[string]cachedGitConfig{}
		}
		gitConfigs.files[path] = cachedGitConfig{id: id, entries: entries}
		gitConfigs.mu.Unlock()
	}
	return entries, true, nil
}
