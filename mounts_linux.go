//go:build linux && cgo

package sandboxexec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
	"github.com/agentbox/sandboxexec/internal/probe"
	"github.com/agentbox/sandboxexec/internal/seccomp"
)

// mountMode is how this host gives a call a mount namespace of its own.
type mountMode int

const (
	mountsNone   mountMode = iota
	mountsDirect           // CLONE_NEWNS, with CAP_SYS_ADMIN
	mountsInUserNamespace
)

// mountProbes hold, for each mode, whether a child could be given such a
// namespace, without and with a network namespace too; each is asked once,
// by the first call that needs it.
var mountProbes [3][2]probe.Result[struct{}]

// forcedMountMode, when not -1, replaces the probed mode, so that tests
// can play a host that cannot make a mount namespace.
var forcedMountMode = mountMode(-1)

var hostHasSysAdmin = sync.OnceValue(hasSysAdmin)

// availableMountMode is the best mode this host offers, with a network
// namespace too where network, or mountsNone and why there is none.
func availableMountMode(network bool) (mountMode, error) {
	if forcedMountMode >= 0 {
		if forcedMountMode == mountsNone {
			return mountsNone, errors.New("mount namespaces disabled for a test")
		}
		return forcedMountMode, nil
	}
	var direct error
	if hostHasSysAdmin() {
		if direct = probeMountMode(mountsDirect, network); direct == nil {
			return mountsDirect, nil
		}
	}
	user := probeMountMode(mountsInUserNamespace, network)
	if user == nil {
		return mountsInUserNamespace, nil
	}
	if probe.Temporary(user) {
		return mountsNone, user
	}
	if direct != nil {
		return mountsNone, fmt.Errorf("a mount namespace failed (%v), and so did one in a user namespace (%v)", direct, user)
	}
	return mountsNone, fmt.Errorf("no CAP_SYS_ADMIN, and a user namespace cannot be made here "+
		"(unprivileged user namespaces disabled, or refused by a container's seccomp profile or by AppArmor): %v", user)
}

func probeMountMode(mode mountMode, network bool) error {
	n := 0
	if network {
		n = 1
	}
	_, err := mountProbes[mode][n].Get(context.Background(), func() (struct{}, error) {
		m := linuxspawn.Mounts{}
		if mode == mountsInUserNamespace {
			m = linuxspawn.Mounts{UserNamespace: true, UID: os.Geteuid(), GID: os.Getegid()}
		}
		// A failure for want of memory or processes (probe.Temporary) is
		// asked again by the next call.
		return struct{}{}, linuxspawn.ProbeNamespaces(m, network)
	})
	return err
}

// mounts is the mount namespace a call gets, or nil for none:
//   - whenever the policy protects a path that exists (ReadOnlySubpaths,
//     DenyRead), which fails closed, unless BestEffort, where the host
//     cannot make one;
//   - and, without FullDiskWriteAccess or / among the roots, to make every
//     mount but the writable roots read-only: a root command keeps
//     CAP_CHOWN and CAP_FOWNER, and Landlock has no right for metadata
//     (chmod, chown, utimes, xattrs). A root host that cannot make one
//     fails closed too, unless BestEffort; a host user's command goes
//     without where user namespaces are refused (it can change the
//     metadata of that user's files alone).
//   - and with AllowedDomains, which needs a network namespace, made
//     through a user namespace where the host has no CAP_SYS_ADMIN: that
//     fails closed, BestEffort or not.
func (r *linuxRunner) mounts(tmp string) (*linuxspawn.Mounts, error) {
	readOnlyRest := r.readOnlyView()
	network := r.network() == seccomp.NetworkLoopback
	if r.masks.empty() && !readOnlyRest && !network {
		return nil, nil
	}
	mode, why := availableMountMode(network)
	if mode == mountsNone {
		switch {
		case probe.Temporary(why):
			return nil, fmt.Errorf("%w: mount namespace, for now: %w", ErrSandboxUnavailable, why)
		case network:
			return nil, fmt.Errorf("%w: AllowedDomains needs a network namespace, which this host cannot make: %v",
				ErrSandboxUnavailable, why)
		case r.policy.BestEffort:
			return nil, nil
		case !r.masks.empty():
			optOut := "set ReadOnlySubpaths to an empty slice and leave DenyRead empty, or ask for BestEffort"
			if os.Geteuid() == 0 && readOnlyRest {
				// Without them, the case below: root needs the namespace
				// for what lies outside the roots too.
				optOut = "ask for BestEffort, or for FullDiskWriteAccess with an empty ReadOnlySubpaths and no DenyRead"
			}
			return nil, fmt.Errorf("%w: ReadOnlySubpaths and DenyRead need a mount namespace, which this host cannot make: %v; "+
				"to run without them, %s", ErrSandboxUnavailable, why, optOut)
		case os.Geteuid() == 0:
			return nil, fmt.Errorf("%w: a root command could change metadata (chmod, chown) outside the writable roots "+
				"without a mount namespace, which this host cannot make: %v; ask for BestEffort to run without it",
				ErrSandboxUnavailable, why)
		}
		return nil, nil
	}
	m := &linuxspawn.Mounts{ReadOnlyRest: readOnlyRest}
	if mode == mountsInUserNamespace {
		m.UserNamespace, m.UID, m.GID = true, os.Geteuid(), os.Getegid()
	}
	var err error
	if readOnlyRest {
		writable := r.roots
		if tmp != "" {
			writable = append(slices.Clip(writable), tmp)
		}
		if m.Writable, err = mountTargets(outermost(writable), nil); err != nil {
			return nil, err
		}
	}
	if m.Pinned, err = mountTargets(r.masks.Pinned, r.masks.found); err != nil {
		return nil, err
	}
	if m.ReadOnly, err = mountTargets(r.masks.ReadOnly, r.masks.found); err != nil {
		return nil, err
	}
	if m.DenyDirs, err = mountTargets(r.masks.DenyDirs, r.masks.found); err != nil {
		return nil, err
	}
	if m.DenyFiles, err = mountTargets(r.masks.DenyFiles, r.masks.found); err != nil {
		return nil, err
	}
	return m, nil
}

// readOnlyView: every mount but the writable roots is read-only in the
// command's view, where mounts can make one (see readOnlyViewer). With / a
// writable root there is no rest: the clone of / would go on top of /, and
// the command's root stay on the read-only mount below.
func (r *linuxRunner) readOnlyView() bool {
	return !r.policy.FullDiskWriteAccess && !slices.Contains(r.roots, "/")
}

// outermost keeps the paths not below another of them, parents first.
func outermost(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(paths, func(q string) bool { return q != p && pathWithin(p, q) }) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	return out
}

// mountTargets gives each path the identity the child checks: the one
// found when the policy was resolved, or, for a path not in found, the one
// it has now.
func mountTargets(paths []string, found map[string]fs.FileInfo) ([]linuxspawn.Target, error) {
	ts := make([]linuxspawn.Target, 0, len(paths))
	for _, p := range paths {
		var st *syscall.Stat_t
		if fi, ok := found[p]; ok {
			st, _ = fi.Sys().(*syscall.Stat_t)
		}
		if st == nil {
			st = new(syscall.Stat_t)
			if err := syscall.Lstat(p, st); err != nil {
				return nil, fmt.Errorf("sandboxexec: %w", &os.PathError{Op: "lstat", Path: p, Err: err})
			}
		}
		ts = append(ts, linuxspawn.Target{Path: p, Dev: uint64(st.Dev), Ino: st.Ino})
	}
	return ts, nil
}

func mountNamespaceSupported() bool {
	mode, _ := availableMountMode(false)
	return mode != mountsNone
}

func networkNamespaceSupported() bool {
	mode, _ := availableMountMode(true)
	return mode != mountsNone
}
