package sandboxexec

import (
	"os"
	"sync"
)

// spares holds descriptors that a call opens before its spawn, made ahead
// by the goroutine that makes the next standby, while the command of the
// call before runs: each open costs the caller 3-6 µs on a VM whose system
// calls trap. A spare was never handed to anyone, so it is as new as one
// opened by the call itself. Each is taken by one call; none is kept once
// the standbys are gone.
var spares struct {
	sync.Mutex
	pipes  [][2]*os.File // capture pipes, at most spareSets*2
	null   []*os.File    // openNull(true), at most spareSets
	killed []*os.File    // eventfds, at most spareSets
}

// spareSets is how many calls' worth of spares are kept.
const spareSets = 1

// takeSpare takes a kept spare of list; ok is false when there is none.
func takeSpare[T any](list *[]T) (v T, ok bool) {
	spares.Lock()
	defer spares.Unlock()
	if n := len(*list); n > 0 {
		v, *list = (*list)[n-1], (*list)[:n-1]
		return v, true
	}
	return v, false
}

// filling lets one fillSpares run at a time: the lists then never grow
// past their bounds, since the calls only take from them.
var filling sync.Mutex

// fillSpares opens what the next call will take, up to spareSets calls'
// worth, unless another fill is under way. A failure is left to that call,
// which opens its own.
func fillSpares() {
	if !filling.TryLock() {
		return
	}
	defer filling.Unlock()
	for spareWanted(&spares.pipes, 2*spareSets) {
		r, w, err := newCapturePipe()
		if err != nil {
			return
		}
		keepSpare(&spares.pipes, [2]*os.File{r, w})
	}
	for spareWanted(&spares.null, spareSets) {
		f, err := newReadOnlyNull()
		if err != nil {
			return
		}
		keepSpare(&spares.null, f)
	}
	for spareWanted(&spares.killed, spareSets) {
		f, err := newKilledEventfd()
		if err != nil {
			return
		}
		keepSpare(&spares.killed, f)
	}
}

func spareWanted[T any](list *[]T, max int) bool {
	spares.Lock()
	defer spares.Unlock()
	return len(*list) < max
}

func keepSpare[T any](list *[]T, v T) {
	spares.Lock()
	defer spares.Unlock()
	*list = append(*list, v)
}

// dropSpares closes the spares kept.
func dropSpares() {
	spares.Lock()
	defer spares.Unlock()
	for _, p := range spares.pipes {
		p[0].Close()
		p[1].Close()
	}
	for _, list := range [][]*os.File{spares.null, spares.killed} {
		for _, f := range list {
			f.Close()
		}
	}
	spares.pipes, spares.null, spares.killed = nil, nil, nil
}
