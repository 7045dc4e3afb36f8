//go:build linux && cgo

package sandboxexec

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
)

// A call's mount namespace is made once per set of mounts and joined by
// later calls that ask for the same: making one (a copy of every host
// mount, the set-up, the seccomp filter the set-up needs out of the way,
// and the teardown when its last process exits) costs more than the rest
// of the sandbox. Nothing inside can change it (no command holds
// CAP_SYS_ADMIN, and seccomp refuses the mount calls). A namespace is
// dropped as soon as the host's own mounts change (/proc/self/mountinfo
// polls readable), when what a path it mounted on holds in it is no
// longer what it mounted (the host unlinked or replaced that path, which
// takes the mount with it), and after c.idle unused: a kept
// namespace holds each file system of the host that it copied. Only
// namespaces made directly (CAP_SYS_ADMIN) are kept: one inside a user
// namespace cannot be joined alone. See docs/filesystem-policy.md.
var mountNamespaces = &mountNamespaceCache{entries: map[string]*sharedMountNamespace{}, idle: 10 * time.Second}

const mountNamespaceMax = 16

// mountNamespaceMadeHook, when not nil, runs after a namespace is made and
// before it is kept (tests change the host's mounts there).
var mountNamespaceMadeHook func()

// mountWatchSawHook, when not nil, runs when watch has seen a change of the
// host's mounts, before it drops the namespaces (tests run a call there).
var mountWatchSawHook atomic.Pointer[func()]

type mountNamespaceCache struct {
	mu       sync.Mutex
	entries  map[string]*sharedMountNamespace
	mounts   int           // /proc/self/mountinfo, polled for a change, once opened
	opened   bool          // mounts is open (0 is a descriptor like any other)
	watching bool          // watch runs
	idle     time.Duration // how long a namespace is kept unused
	made     int           // namespaces made, for tests
	// dropped counts the times every namespace was dropped: one made
	// across such a time may lack what the host mounted, and is not kept.
	dropped int
}

type sharedMountNamespace struct {
	key     string
	fd      int // the namespace
	root    int // its root (O_PATH)
	targets []seenTarget
	refs    int
	used    time.Time
	dropped bool
}

// seenTarget is a path the namespace mounted on and what it held in the
// namespace once made: the mount and the file.
type seenTarget struct {
	path            string
	mount, dev, ino uint64
}

// get returns the namespace for m, made now if no kept one is still good,
// or nil where none can be kept: the caller then has the child make its
// own, which reports any error. Each namespace get returns is released.
func (c *mountNamespaceCache) get(m *linuxspawn.Mounts) *sharedMountNamespace {
	if m.UserNamespace {
		return nil
	}
	key := mountNamespaceKey(m)
	c.mu.Lock()
	if !c.openMounts() {
		c.mu.Unlock()
		return nil // asked again by the next call
	}
	if c.hostChanged(0) {
		c.dropAll()
	}
	if e := c.entries[key]; e != nil {
		if e.current() {
			e.refs++
			e.used = time.Now()
			c.mu.Unlock()
			return e
		}
		c.drop(e)
	}
	dropped := c.dropped
	c.mu.Unlock()

	e := makeSharedMountNamespace(key, m)
	if e == nil {
		return nil
	}
	if mountNamespaceMadeHook != nil {
		mountNamespaceMadeHook()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hostChanged(0) {
		c.dropAll()
	}
	e.refs, e.used = 1, time.Now()
	c.made++
	if c.dropped != dropped {
		// Made from a mount table the host has changed since: this call
		// may have it (it started before the change), no later one.
		e.dropped = true
		return e
	}
	if old := c.entries[key]; old != nil {
		c.drop(old)
	}
	for len(c.entries) >= mountNamespaceMax {
		c.dropOldest()
	}
	c.entries[key] = e
	if !c.watching {
		c.watching = true
		go c.watch()
	}
	return e
}

// stillKept says e, which get returned earlier, still holds what get would
// return for its mounts now: the host's mounts have not changed since, and
// each target holds what it held.
func (c *mountNamespaceCache) stillKept(e *sharedMountNamespace) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hostChanged(0) {
		c.dropAll()
	}
	if e.dropped {
		return false
	}
	if !e.current() {
		c.drop(e)
		return false
	}
	return true
}

// kept says e, which get returned, is still kept for later calls (not
// dropped since, nor made across a change of the host's mounts).
func (c *mountNamespaceCache) kept(e *sharedMountNamespace) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !e.dropped
}

// retire keeps e, which get returned, from every later call: a command
// that can send a descriptor out of its call (see
// linuxRunner.sendsDescriptors) enters it, and a descriptor of its root or
// its /dev/pts, held by a process that outlives the call, would open the
// files of the calls that join it later, their terminals among them (found
// in review: another call's command read what a later call typed into a
// pseudo-terminal). Calls in it already run beside the command, as calls
// that share a namespace do. Such a command's spawn takes no kept
// namespace (its child makes one); its standby, which can only join one,
// retires the one it joined as it hands the command over.
func (c *mountNamespaceCache) retire(e *sharedMountNamespace) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !e.dropped {
		c.drop(e)
	}
}

// release gives back a namespace get returned, once the child has joined
// it (or failed to).
func (c *mountNamespaceCache) release(e *sharedMountNamespace) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.dropped && e.refs == 0 {
		e.close()
	}
}

// watch drops every namespace when the host's mounts change, and those
// left unused for c.idle, while any is kept.
//
// It polls a descriptor of its own: poll reports each change once per
// open file, and one that only this goroutine sees between its poll and
// its drop would leave get a namespace the change has made stale.
func (c *mountNamespaceCache) watch() {
	c.mu.Lock()
	idle := c.idle
	c.mu.Unlock()
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		mounts = -1 // get still sees each change; this only drops idle ones
	}
	defer unix.Close(mounts)
	for {
		changed := hostMountsChanged(mounts, int(idle/4/time.Millisecond))
		if hook := mountWatchSawHook.Load(); changed && hook != nil {
			(*hook)()
		}
		c.mu.Lock()
		idle = c.idle
		if changed {
			c.dropAll()
		}
		c.dropUnused(idle)
		if len(c.entries) == 0 {
			c.watching = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// hostChanged says the host's mount table changed since get last looked.
// The caller holds c.mu.
// openMounts opens c.mounts, once; the caller holds c.mu.
func (c *mountNamespaceCache) openMounts() bool {
	if !c.opened {
		fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		c.mounts, c.opened = fd, true
	}
	return true
}

func (c *mountNamespaceCache) hostChanged(timeout int) bool {
	return hostMountsChanged(c.mounts, timeout)
}

// hostMountsChanged says the host's mount table changed since the last
// look through mounts (an open /proc/self/mountinfo), waiting up to timeout
// milliseconds for it: poll reports each change once per open file.
func hostMountsChanged(mounts, timeout int) bool {
	if mounts < 0 {
		time.Sleep(time.Duration(timeout) * time.Millisecond)
		return false
	}
	fds := []unix.PollFd{{Fd: int32(mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, timeout)
	return err == nil && n > 0
}

// dropUnused drops the namespaces no call holds that were last used at
// least idle ago; the caller holds c.mu.
func (c *mountNamespaceCache) dropUnused(idle time.Duration) {
	for _, e := range c.entries {
		if e.refs == 0 && time.Since(e.used) >= idle {
			c.drop(e)
		}
	}
}

func (c *mountNamespaceCache) dropAll() {
	c.dropped++
	for _, e := range c.entries {
		c.drop(e)
	}
}

func (c *mountNamespaceCache) drop(e *sharedMountNamespace) {
	delete(c.entries, e.key)
	e.dropped = true
	if e.refs == 0 {
		e.close()
	}
}

func (c *mountNamespaceCache) dropOldest() {
	var oldest *sharedMountNamespace
	for _, e := range c.entries {
		if oldest == nil || e.used.Before(oldest.used) {
			oldest = e
		}
	}
	c.drop(oldest)
}

// current says each target still holds, in the namespace, the mount and
// file it held when the namespace was made. A mount sits on a directory
// entry of the host's file system: the host unlinking that entry (or
// renaming another over it) takes the mount away in every namespace, and
// the path then shows the file system below, or whatever replaced it.
func (e *sharedMountNamespace) current() bool {
	for _, t := range e.targets {
		if seen, ok := lookIn(e.root, t.path); !ok || seen != t {
			return false
		}
	}
	return true
}

// lookIn is what path holds in the namespace whose root is root.
func lookIn(root int, path string) (seenTarget, bool) {
	var st unix.Statx_t
	err := unix.Statx(root, "."+path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, unix.STATX_INO|unix.STATX_MNT_ID, &st)
	if err != nil || st.Mask&unix.STATX_MNT_ID == 0 {
		return seenTarget{}, false
	}
	return seenTarget{path, st.Mnt_id, unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino}, true
}

// close lets the namespace go; its teardown (every mount of it, unmounted)
// is left to another goroutine.
func (e *sharedMountNamespace) close() {
	go func() {
		unix.Close(e.root)
		unix.Close(e.fd)
	}()
}

// makeSharedMountNamespace makes the namespace and records what each
// target holds in it.
func makeSharedMountNamespace(key string, m *linuxspawn.Mounts) *sharedMountNamespace {
	fd, root, err := linuxspawn.MakeMountNamespace(*m)
	if err != nil {
		return nil
	}
	e := &sharedMountNamespace{key: key, fd: fd, root: root}
	for kind, ts := range [][]linuxspawn.Target{m.Writable, m.Pinned, m.ReadOnly, m.DenyDirs, m.DenyFiles} {
		for _, t := range ts {
			seen, ok := lookIn(root, t.Path)
			// A writable, pinned or read-only target is bound over
			// itself: one that shows another file was replaced between
			// the look and the recording here (the mount went with the
			// old one), and a later call would find its mounts where
			// they are not.
			if !ok || kind < 3 && (seen.dev != t.Dev || seen.ino != t.Ino) {
				e.close()
				return nil
			}
			e.targets = append(e.targets, seen)
		}
	}
	return e
}

// mountNamespaceKey names the mounts m asks for, each target by its path
// and the identity the call found there.
func mountNamespaceKey(m *linuxspawn.Mounts) string {
	var b strings.Builder
	if m.ReadOnlyRest {
		b.WriteString("rest")
	}
	for kind, ts := range [][]linuxspawn.Target{m.Writable, m.Pinned, m.ReadOnly, m.DenyDirs, m.DenyFiles} {
		b.WriteString("\x00\x00" + strconv.Itoa(kind))
		for _, t := range ts {
			b.WriteString("\x00" + t.Path + "\x00" + strconv.FormatUint(t.Dev, 16) + ":" + strconv.FormatUint(t.Ino, 16))
		}
	}
	return b.String()
}
