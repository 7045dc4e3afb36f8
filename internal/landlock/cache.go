//go:build linux

package landlock

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Cache shares rulesets between calls with the same rules: building one
// opens every path it names, which costs more than checking that the paths
// are unchanged. A ruleset holds the files its paths named when it was
// built, so a cached one is handed out only while each path still names the
// same file (device and inode); a writable root that was replaced, or moved
// away, gets a new ruleset, as it would without the cache.
//
// The devices are checked so at most once per deviceRecheck: a rule for a
// device node that was replaced since can only deny, since it still names
// the node it was made for, which reaches the same device wherever it is
// (a node's device number never changes); and the replacement is rare,
// where a check of every device costs a call a stat each (on a VM whose
// system calls trap to the hypervisor, a few µs each).
type Cache struct {
	size    int
	mu      sync.Mutex
	entries []*cacheEntry // least recently used first
}

type cacheEntry struct {
	key     string
	fd      int
	files   []fileID
	refs    int       // holders: the cache while the entry is in it, and each caller
	devices time.Time // when the devices' files were last found unchanged
	uses    int
}

// deviceRecheck is how long a check of the devices' files holds.
const deviceRecheck = time.Second

// maxUses is how many calls a ruleset is handed to. A child may add a rule
// to it (for the pseudo-terminals of its mount namespace, one of its own
// where the namespace is), which the kernel keeps as long as the ruleset:
// retired, a ruleset holds at most that many.
const maxUses = 1024

// NewCache returns a cache that keeps the rulesets of at most size rule
// sets (one descriptor each).
func NewCache(size int) *Cache { return &Cache{size: max(size, 1)} }

// Get returns the descriptor of a ruleset for abi and r, as Build does
// (-1 when the ruleset would handle nothing), and a function to call once it
// is no longer needed (after the child restricted itself). The descriptor
// must not be closed by the caller.
func (c *Cache) Get(abi int, r Rules) (fd int, done func(), err error) {
	key := cacheKey(abi, r)
	c.mu.Lock()
	for i, e := range c.entries {
		if e.key != key {
			continue
		}
		if e.current(time.Now(), r.Seen) {
			e.refs++
			if e.uses++; e.uses >= maxUses {
				c.entries = append(c.entries[:i], c.entries[i+1:]...)
				c.unref(e)
			} else {
				copy(c.entries[i:], c.entries[i+1:])
				c.entries[len(c.entries)-1] = e
			}
			c.mu.Unlock()
			return e.fd, c.releaser(e), nil
		}
		c.entries = append(c.entries[:i], c.entries[i+1:]...)
		c.unref(e)
		break
	}
	c.mu.Unlock()

	fd, files, err := build(abi, r)
	if err != nil || fd < 0 {
		return fd, func() {}, err
	}
	e := &cacheEntry{key: key, fd: fd, files: files, refs: 2, devices: time.Now(), uses: 1}
	c.mu.Lock()
	c.entries = append(c.entries, e)
	if len(c.entries) > c.size {
		c.unref(c.entries[0])
		c.entries = c.entries[1:]
	}
	c.mu.Unlock()
	return fd, c.releaser(e), nil
}

func (c *Cache) releaser(e *cacheEntry) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.unref(e)
			c.mu.Unlock()
		})
	}
}

// unref drops one holder; the last closes the descriptor. c.mu is held.
func (c *Cache) unref(e *cacheEntry) {
	if e.refs--; e.refs == 0 {
		unix.Close(e.fd)
	}
}

// current says each file is still the one e was built from (see
// Rules.Seen); the devices' are looked at only when their last check is
// deviceRecheck old.
func (e *cacheEntry) current(now time.Time, seen func(string) (dev, ino uint64, ok bool)) bool {
	devices := now.Sub(e.devices) >= deviceRecheck
	for _, f := range e.files {
		if (devices || !f.device) && !f.current(seen) {
			return false
		}
	}
	if devices {
		e.devices = now
	}
	return true
}

func cacheKey(abi int, r Rules) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(abi))
	if r.FullDiskWrite {
		b.WriteString(" fulldisk")
	}
	if r.DenyNetwork {
		b.WriteString(" nonet")
	}
	for _, root := range r.WritableRoots {
		// Roots are paths: they hold no NUL.
		b.WriteByte(0)
		b.WriteString(root)
	}
	return b.String()
}

// Close lets go of the cache's rulesets: each is closed once the callers
// holding it are done with it. The cache is empty after, and may be used
// again.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		c.unref(e)
	}
	c.entries = nil
}
