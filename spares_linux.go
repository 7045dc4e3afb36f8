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

// takeSpare returns a kept spare of list, or nil.
func takeSpare[T any](list *[]T) (v T, ok bool) {
	spares.Lock()
	defer spares.Unlock()
	if n := len(*list); n > 0 {
		v, *list = (*list)[n-1], (*list)[:n-1]
		return v, true
	}
	return v, false
}

// fillSpares opens what the next call will take, up to spareSets calls'
// worth. A failure is left to that call, which opens its own.
func fillSpares() {
	for spareWanted(&spares.pipes, 2*spareSets) {
		r, w, err := newCapturePipe()
		if err != nil || !keepSpare(&spares.pipes, [2]*os.File{r, w}, 2*spareSets) {
			return
		}
	}
	for spareWanted(&spares.null, spareSets) {
		f, err := newReadOnlyNull()
		if err != nil || !keepSpare(&spares.null, f, spareSets) {
			return
		}
	}
	for spareWanted(&spares.killed, spareSets) {
		f, err := newKilledEventfd()
		if err != nil || !keepSpare(&spares.killed, f, spareSets) {
			return
		}
	}
}

func spareWanted[T any](list *[]T, max int) bool {
	spares.Lock()
	defer spares.Unlock()
	return len(*list) < max
}

// keepSpare adds v to list unless another filler has filled it since: then
// it closes v and says so.
func keepSpare[T any](list *[]T, v T, max int) bool {
	spares.Lock()
	if len(*list) < max {
		*list = append(*list, v)
		spares.Unlock()
		return true
	}
	spares.Unlock()
	switch v := any(v).(type) {
	case [2]*os.File:
		v[0].Close()
		v[1].Close()
	case *os.File:
		v.Close()
	}
	return false
}

// dropSpares closes the spares kept.
func dropSpares() {
	spares.Lock()
	defer spares.Unlock()
	for _, p := range spares.pipes {
		p[0].Close()
		p[1].Close()
	}
	for _, f := range append(spares.null, spares.killed...) {
		f.Close()
	}
	spares.pipes, spares.null, spares.killed = nil, nil, nil
}
