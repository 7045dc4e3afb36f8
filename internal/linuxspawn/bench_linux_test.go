//go:build linux && cgo

package linuxspawn

import (
	"os"
	"sort"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSpawnPaths spawns and reaps /bin/true along each path a Start can
// take, one call of each in turn (so that a slow moment of the machine falls
// on all alike), and reports each path's median and its ratio to a spawn
// from the calling thread:
//
//	go test -run '^$' -bench SpawnPaths -benchtime 3000x ./internal/linuxspawn
//
// "pool" hands the spawn to a pool's thread (what a parent-death signal
// needs); "caps-in-child" drops capabilities in the child, bounding set
// included, as past the pooled states; "caps-inherited" takes the bounding
// set from the pool's thread.
func BenchmarkSpawnPaths(b *testing.B) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	attr := func(caps bool) *Attr {
		return &Attr{
			Path: "/bin/true", Argv: []string{"true"},
			Stdio:         [3]int{int(null.Fd()), int(null.Fd()), int(null.Fd())},
			CgroupProcsFD: -1, LandlockRulesetFD: -1,
			Pdeathsig:        syscall.SIGKILL,
			DropCapabilities: caps, KeepCapabilities: 1 << 0,
		}
	}
	plain, err := poolFor(threadState{})
	if err != nil {
		b.Fatal(err)
	}
	caps := attr(true)
	capsPool, err := poolFor(threadState{dropBounding: true, keep: caps.KeepCapabilities})
	if err != nil {
		b.Fatal(err)
	}
	paths := []struct {
		name string
		a    *Attr
		p    *pool
	}{
		{"direct", attr(false), nil},
		{"pool", attr(false), plain},
		{"caps-in-child", caps, plain},
		{"caps-inherited", caps, capsPool},
	}
	times := make([][]time.Duration, len(paths))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, path := range paths {
			t0 := time.Now()
			pid, err := start(path.a, path.p)
			if err != nil {
				b.Fatal(err)
			}
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
				b.Fatal(err)
			}
			times[j] = append(times[j], time.Since(t0))
		}
	}
	b.StopTimer()
	median := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds())
	}
	floor := median(times[0])
	for j, path := range paths {
		m := median(times[j])
		b.ReportMetric(m, path.name+"-µs")
		if j > 0 {
			b.ReportMetric(m/floor, path.name+"/direct")
		}
	}
}
