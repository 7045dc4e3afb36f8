//go:build linux && cgo

package linuxspawn

/*
#include <stdlib.h>
#include "spawn_linux.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// threadState is what the threads of a pool put on themselves, for their
// children to inherit at clone.
type threadState struct {
	filter       string // seccomp filter, with no_new_privs; "" for none
	dropBounding bool   // the bounding set is shrunk to keep
	keep         uint64
}

func (s threadState) restricted() bool { return s.filter != "" || s.dropBounding }

// ThreadsPerPool is how many spawning threads serve one thread state:
// a spawn holds its thread only until the child execs, so a few serve many
// concurrent calls, and a large machine does not get a hundred idle
// threads per state.
func ThreadsPerPool() int { return min(max(2, runtime.GOMAXPROCS(0)), 8) }

// maxRestrictedPools bounds the threads kept for distinct filters and
// bounding sets; past it, a child applies its own.
const maxRestrictedPools = 4

// pool is a few C threads (pool_linux.c) that live as long as the process,
// carry a thread state, and clone the children of Starts that need either:
// a parent-death signal fires when the thread that cloned the child exits,
// and applying the state in each child would pay for it at every spawn
// (installing a filter means preparing and JIT-compiling it, and freeing it
// again at exit, which costs more than all the child's other steps together;
// shrinking the bounding set takes a system call per capability, about
// 60 µs). Only those threads are restricted, not the rest of the host; they
// run nothing but spawns.
type pool struct {
	c     *C.struct_ls_pool
	state threadState
	// slots admits as many callers into ls_pool_start at a time as the
	// pool has threads: a caller waits there on its own thread, so the rest
	// wait here, as goroutines, rather than each holding a thread that Go
	// would then keep for good.
	slots chan struct{}
}

// start runs ls_start(r) on one of p's threads.
func (p *pool) start(r *C.struct_ls_req) C.int {
	p.slots <- struct{}{}
	defer func() { <-p.slots }()
	return C.ls_pool_start(p.c, r)
}

var pools struct {
	sync.Mutex
	byState    map[threadState]*pool
	restricted int // pools whose state is restricted
}

// poolFor returns the pool for want, starting its threads on first use. An
// error is the state failing to apply, or no thread starting.
func poolFor(want threadState) (*pool, error) {
	pools.Lock()
	defer pools.Unlock()
	p, ok := pools.byState[want]
	if !ok && want.restricted() && pools.restricted >= maxRestrictedPools {
		// The child applies the state itself.
		want = threadState{}
		p, ok = pools.byState[want]
	}
	if ok {
		return p, nil
	}
	var filter unsafe.Pointer
	if want.filter != "" {
		filter = C.CBytes([]byte(want.filter))
		defer C.free(filter)
	}
	var stage, errno C.int
	threads := C.int(ThreadsPerPool())
	c := C.ls_pool_new(boolInt(want.dropBounding), C.uint64_t(want.keep), filter,
		C.ushort(len(want.filter)/8), &threads, &stage, &errno)
	if c == nil {
		if stage == C.LS_STAGE_NONE {
			return nil, fmt.Errorf("linuxspawn: starting a spawning thread: %w", syscall.Errno(errno))
		}
		return nil, &StageError{Stage: stageNames[stage], Err: syscall.Errno(errno)}
	}
	p = &pool{c: c, state: want, slots: make(chan struct{}, int(threads))}
	if pools.byState == nil {
		pools.byState = make(map[threadState]*pool)
	}
	pools.byState[want] = p
	if want.restricted() {
		pools.restricted++
	}
	return p, nil
}
