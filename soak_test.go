//go:build linux && cgo

package sandboxexec

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentbox/sandboxexec/internal/cgroup"
	"github.com/stretchr/testify/require"
)

// soakFigures are what a leak would make grow.
type soakFigures struct {
	goroutines int
	fds        int
	children   int    // processes whose parent is this one (zombies included)
	threads    int    // OS threads of this process
	rssKiB     int64  // VmRSS
	heapInuse  uint64 // after a GC
	cgroups    int    // call cgroups of this process still present
}

func soakMeasure(t *testing.T, cgroupParent string) soakFigures {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f := soakFigures{goroutines: runtime.NumGoroutine(), heapInuse: ms.HeapInuse}

	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	f.fds = len(fds)

	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		switch k {
		case "VmRSS":
			f.rssKiB, _ = strconv.ParseInt(fields[0], 10, 64)
		case "Threads":
			f.threads, _ = strconv.Atoi(fields[0])
		}
	}

	me := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				if strings.TrimSpace(v) == me {
					f.children++
				}
				break
			}
		}
	}
	if cgroupParent != "" {
		f.cgroups = len(relCallCgroups(cgroupParent, os.Getpid()))
	}
	return f
}

func (f soakFigures) log(t *testing.T, when string) {
	t.Logf("%-9s goroutines %d, fds %d, children %d, threads %d, RSS %.1f MiB, heap in use %.1f MiB, call cgroups %d",
		when+":", f.goroutines, f.fds, f.children, f.threads, float64(f.rssKiB)/1024, float64(f.heapInuse)/(1<<20), f.cgroups)
}

// TestSoak runs 10,000 sequential and 1,000 concurrent sandboxed calls and
// checks that goroutines, descriptors, child processes, call cgroups and
// memory come back to where they were. SANDBOXEXEC_SOAK=1 enables it
// (make soak).
func TestSoak(t *testing.T) {
	if os.Getenv("SANDBOXEXEC_SOAK") != "1" {
		t.Skip("set SANDBOXEXEC_SOAK=1 to run the soak test")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	requireSandbox(t)
	var cgroupParent string
	if cgroups() != nil {
		mnt, linePrefix := relPidsMount(t)
		cgroupParent = relCgroupParent(t, mnt, linePrefix)
	}

	root := t.TempDir()
	var failures atomic.Int64
	var firstFailure atomic.Value
	call := func() {
		out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"/bin/true"}},
			SandboxLinuxSeccomp, []string{root}, SandboxPolicy{})
		if err != nil || out.ExitCode != 0 || out.TimedOut {
			if failures.Add(1) == 1 {
				firstFailure.Store([]any{out, err})
			}
		}
	}

	// Warm up what is made once (spawner threads, the cgroup manager, the
	// Landlock ABI, the seccomp program) and what is kept for reuse (empty
	// cgroups, private TMPDIRs: calls in flight fill their pools), then take
	// the baseline.
	for i := 0; i < 20; i++ {
		call()
	}
	var warm sync.WaitGroup
	for i := 0; i < 2*cgroup.PoolSize; i++ {
		warm.Add(1)
		go func() { defer warm.Done(); call() }()
	}
	warm.Wait()
	// Kept mount namespaces (two descriptors and a watching goroutine, for
	// 10 s unused), standbys and kept TMPDIRs are dropped before each
	// measure.
	mnsDropKept(t)
	tmpDropKept()
	base := soakMeasure(t, cgroupParent)
	base.log(t, "baseline")

	const sequential = 10_000
	start := time.Now()
	for i := 0; i < sequential; i++ {
		call()
	}
	seqTime := time.Since(start)
	t.Logf("sequential: %d calls in %v, %.0f calls/s", sequential, seqTime.Round(time.Millisecond),
		float64(sequential)/seqTime.Seconds())
	soakMeasure(t, cgroupParent).log(t, "after seq")

	const concurrent, inFlight = 1_000, 64
	start = time.Now()
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i := 0; i < concurrent; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			call()
		}()
	}
	wg.Wait()
	concTime := time.Since(start)
	t.Logf("concurrent: %d calls (%d in flight) in %v, %.0f calls/s", concurrent, inFlight,
		concTime.Round(time.Millisecond), float64(concurrent)/concTime.Seconds())

	require.Zero(t, failures.Load(), "calls that failed; the first: %v", firstFailure.Load())

	// Let what ends asynchronously end (timers, drains, reaping).
	var after soakFigures
	settleStart := time.Now()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mnsDropKept(t)
		tmpDropKept()
		after = soakMeasure(t, cgroupParent)
		if (after.goroutines <= base.goroutines && after.fds <= base.fds &&
			after.children <= base.children && after.cgroups <= base.cgroups+cgroup.PoolSize) || time.Now().After(deadline) {
			break
		}
	}
	after.log(t, "after")
	t.Logf("settled in %v; RSS %+.1f MiB, heap in use %+.1f MiB, threads %+d",
		time.Since(settleStart).Round(time.Millisecond),
		float64(after.rssKiB-base.rssKiB)/1024,
		(float64(after.heapInuse)-float64(base.heapInuse))/(1<<20),
		after.threads-base.threads)

	assert.LessOrEqual(t, after.goroutines, base.goroutines, "goroutines leaked")
	assert.LessOrEqual(t, after.fds, base.fds, "descriptors leaked")
	assert.LessOrEqual(t, after.children, base.children, "child processes left (or not reaped)")
	assert.LessOrEqual(t, after.cgroups, base.cgroups+cgroup.PoolSize, "call cgroups left behind beyond the kept empty ones")
	assert.Less(t, after.rssKiB-base.rssKiB, int64(20<<10), "RSS grew by 20 MiB or more")
}
