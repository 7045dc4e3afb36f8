//go:build linux && cgo

package linuxspawn

/*
#include <stdlib.h>
#include "spawn_linux.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// StandbySupported says NewStandby can work here: the standby's steps are
// raw system calls, written for amd64 and arm64.
var StandbySupported = C.ls_standby_supported() != 0

// Standby is a child cloned ahead of its command (standby_linux.c). It has
// taken every step of Start that does not depend on the command: the
// namespaces of the clone, the cgroup, setsid, Network.Namespace,
// MountNamespace, Rlimits, Pdeathsig, NormalScheduling, NoNewPrivs,
// LandlockRulesetFD, capabilities, the signal handlers and the seccomp
// filters (SeccompTailFilter too); and it waits.
// Exec hands it the command, which leaves it only stdio, the working
// directory, the signal mask and the execve to do. A standby that is never
// used must be closed.
type Standby struct {
	// Sleep has Exec sleep through the command's execve rather than spin:
	// where the CPUs have other work (more calls in flight than CPUs), the
	// spin takes time their commands and standbys need.
	Sleep bool

	mu    sync.Mutex
	req   *C.struct_ls_req // C memory the child reads until it execs; nil once done
	pid   int
	pidfd int
}

// NewStandby starts a standby for a, which Start would otherwise have
// spawned. a's Path, Argv, Env, Dir and Stdio are ignored (Exec gives them).
// It makes no namespace of its own but PID and IPC: Mounts, and a Network
// other than one to join (Network.Namespace), are refused. The descriptors
// of a need to stay open only until NewStandby returns.
func NewStandby(a Attr) (*Standby, error) {
	if !StandbySupported {
		return nil, errors.New("linuxspawn: no standby on this architecture")
	}
	if a.Mounts != nil || a.Network != nil && a.Network.Namespace <= 0 {
		return nil, errors.New("linuxspawn: a standby makes no namespace of its own but PID and IPC")
	}
	a.Path, a.Argv, a.Env, a.Dir = "", nil, nil, ""
	a.Stdio = [3]int{-1, -1, -1}
	var pidfd int
	a.PidFD = &pidfd
	s := &Standby{pidfd: -1}
	a.standby = s
	if _, err := Start(&a); err != nil {
		return nil, err
	}
	return s, nil
}

// Pid is the standby's pid, which its command keeps.
func (s *Standby) Pid() int { return s.pid }

// Exec hands the standby its command: path (absolute, or relative to the
// working directory), argv, env, dirFD (above 0: a descriptor of the
// working directory, entered with fchdir, which the caller opened as the
// standby would see it, since its seccomp filter refuses openat2; else the
// standby keeps the one it has) and the descriptors to place at 0, 1 and 2
// (negative: closed). It returns once
// the command has execve'd, with its pid and a pidfd of it (close-on-exec)
// that the caller owns; the standby is used up either way. A failed step
// is a *StageError, the standby reaped; a standby that was gone before
// (killed) gives a *StageError of stage "standby" and ESRCH.
func (s *Standby) Exec(path string, argv, env []string, dirFD int, stdio [3]int) (pid, pidfd int, err error) {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return 0, -1, fmt.Errorf("linuxspawn: bad path %q", path)
	}
	for _, ss := range [][]string{argv, env} {
		for _, v := range ss {
			if strings.IndexByte(v, 0) >= 0 {
				return 0, -1, fmt.Errorf("linuxspawn: %q contains a NUL byte", v)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.req
	if r == nil {
		return 0, -1, errors.New("linuxspawn: standby already used or closed")
	}
	s.req = nil
	defer C.free(unsafe.Pointer(r))

	// [argv pointers | envp pointers | strings], freed once the child has
	// execve'd (or is gone).
	const word = unsafe.Sizeof(uintptr(0))
	size := uintptr(len(argv)+len(env)+2)*word + uintptr(len(path)+1)
	for _, v := range argv {
		size += uintptr(len(v) + 1)
	}
	for _, v := range env {
		size += uintptr(len(v) + 1)
	}
	base := C.calloc(1, C.size_t(size))
	if base == nil {
		C.ls_standby_discard(r)
		return 0, -1, errors.New("linuxspawn: out of memory")
	}
	defer C.free(base)
	mem := unsafe.Slice((*byte)(base), size)
	strs := uintptr(len(argv)+len(env)+2) * word
	putString := func(v string) unsafe.Pointer {
		p := strs
		copy(mem[p:], v)
		strs += uintptr(len(v) + 1)
		return unsafe.Add(base, p)
	}
	ptrs := unsafe.Slice((*uintptr)(base), len(argv)+len(env)+2)
	for i, v := range argv {
		ptrs[i] = uintptr(putString(v))
	}
	for i, v := range env {
		ptrs[len(argv)+1+i] = uintptr(putString(v))
	}
	r.argv = (**C.char)(base)
	r.envp = (**C.char)(unsafe.Add(base, uintptr(len(argv)+1)*word))
	r.path = (*C.char)(putString(path))
	r.dir, r.dir_fd = nil, C.int(dirFD)
	r.sb_sleep = 0
	if s.Sleep {
		r.sb_sleep = 1
	}
	for i, fd := range stdio {
		r.stdio[i] = C.int(fd)
	}
	if C.ls_standby_exec(r) != 0 {
		stage := int(r.stage)
		name := "standby"
		if stage > 0 && stage < len(stageNames) {
			name = stageNames[stage]
		}
		return 0, -1, &StageError{Stage: name, Err: syscall.Errno(r.err)}
	}
	return s.pid, s.pidfd, nil
}

// Close kills and reaps a standby that was not used; it does nothing to one
// that was.
func (s *Standby) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.req == nil {
		return
	}
	C.ls_standby_discard(s.req)
	C.free(unsafe.Pointer(s.req))
	s.req = nil
}
