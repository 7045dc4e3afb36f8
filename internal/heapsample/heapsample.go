// Package heapsample follows the Go heap's in-use size while something runs,
// for the benchmarks' heap-growth figures.
package heapsample

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// samplePeriod is how often Sampler reads the heap. The buffers a
// call allocates stay live until it returns, and finish reads the heap once
// more after it (nothing is freed before the next GC), so a coarse period
// loses nothing while keeping the sampler's wakeups out of the timing.
const samplePeriod = 5 * time.Millisecond

// Sampler follows HeapInuse (heap objects plus unused heap spans, as in
// runtime.MemStats, but read through runtime/metrics, which does not stop
// the world) every samplePeriod and keeps its highest value.
type Sampler struct {
	samples []metrics.Sample
	max     atomic.Uint64
	stop    chan struct{}
	done    sync.WaitGroup
}

func inuse(s []metrics.Sample) uint64 {
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

func newSamples() []metrics.Sample {
	return []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
}

// Start returns the sampler and HeapInuse now.
func Start() (*Sampler, uint64) {
	h := &Sampler{samples: newSamples(), stop: make(chan struct{})}
	base := inuse(h.samples)
	h.max.Store(base)
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(samplePeriod)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				if v := inuse(h.samples); v > h.max.Load() {
					h.max.Store(v)
				}
			}
		}
	}()
	return h, base
}

// finish stops the sampler and returns the highest HeapInuse seen, the
// present value included.
func (h *Sampler) Finish() uint64 {
	close(h.stop)
	h.done.Wait()
	return max(h.max.Load(), inuse(h.samples))
}

// Now is the heap's in-use size now.
func Now() uint64 { return inuse(newSamples()) }
