//go:build linux && cgo

package sandboxexec

// Benchmarks, side by side with what they are compared against:
//
//	go test -run '^$' -bench . -benchtime 200x .
//
// The spawn benchmarks run /bin/true: bare os/exec (the floor), SandboxNone,
// SandboxLinuxSeccomp and bubblewrap. The capture benchmarks pipe 1 GiB
// through a call (MB/s, and the host's heap growth during the call) beside
// shell pipelines that do the same without the library. The concurrency
// benchmarks keep 1, 8 or 64 sandboxed calls in flight (calls/s).
//
// Each capture iteration moves 1 GiB, so at 200x the capture benchmarks take
// minutes; -bench Capture -benchtime 5x is enough for them. With -short the
// capture benchmarks and 64 in flight are skipped.
//
// These numbers come from separate benchmark runs, one after the other; for
// ratios measured alternately in one run, use go run ./internal/benchtable.

import (
	"context"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbox/sandboxexec/internal/heapsample"
)

const benchCaptureBytes = 1 << 30

// benchCaptureTimeoutMs replaces DefaultTimeout for the capture calls: 1 GiB
// may take more than 10 s on a slow or loaded machine.
var benchCaptureTimeoutMs uint64 = 300_000

// benchSandbox skips b when the platform sandbox cannot be enforced here.
func benchSandbox(b *testing.B) {
	b.Helper()
	if s := ProbeSandbox(); !s.Available {
		b.Skipf("the Linux sandbox is not available here: %s", s.Detail)
	}
}

// benchRun is one call of cmd, failing b on any error or a non-zero exit.
func benchRun(b *testing.B, cmd []string, st SandboxType, roots []string) ExecToolCallOutput {
	return benchRunParams(b, ExecParams{Command: cmd}, st, roots)
}

func benchRunParams(b *testing.B, p ExecParams, st SandboxType, roots []string) ExecToolCallOutput {
	cmd := p.Command
	out, err := ProcessExecToolCall(context.Background(), p, st, roots, SandboxPolicy{})
	if err != nil {
		b.Fatalf("%v: %v", cmd, err)
	}
	if out.ExitCode != 0 {
		b.Fatalf("%v: exit %d, stderr %q", cmd, out.ExitCode, out.Stderr)
	}
	return out
}

func benchBare(b *testing.B, name string, args ...string) {
	b.Helper()
	if err := exec.Command(name, args...).Run(); err != nil {
		b.Fatalf("%s %v: %v", name, args, err)
	}
}

func BenchmarkSpawnBareOSExec(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchBare(b, "/bin/true")
	}
}

func BenchmarkSpawnNone(b *testing.B) {
	cmd := []string{"/bin/true"}
	for i := 0; i < b.N; i++ {
		benchRun(b, cmd, SandboxNone, nil)
	}
}

func BenchmarkSpawnLinuxSandbox(b *testing.B) {
	benchSandbox(b)
	cmd, roots := []string{"/bin/true"}, []string{b.TempDir()}
	benchRun(b, cmd, SandboxLinuxSeccomp, roots) // one-time probes (Landlock ABI, cgroup manager)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchRun(b, cmd, SandboxLinuxSeccomp, roots)
	}
}

func BenchmarkSpawnBubblewrap(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bubblewrap (bwrap) is not installed; apt-get install -y bubblewrap to compare against it")
	}
	root := b.TempDir()
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--bind", root, root,
		"--unshare-net", "--die-with-parent", "/bin/true"}
	if out, err := exec.Command(bwrap, args...).CombinedOutput(); err != nil {
		b.Skipf("bwrap cannot run here: %v: %s", err, out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchBare(b, bwrap, args...)
	}
}

// benchCapture runs cmd through ProcessExecToolCall(SandboxNone) b.N times;
// each call must carry exactly benchCaptureBytes on stdout.
func benchCapture(b *testing.B, cmd []string) {
	if testing.Short() {
		b.Skip("moves 1 GiB per iteration; skipped with -short")
	}
	b.SetBytes(benchCaptureBytes)
	var growth uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC() // a low, steady baseline for the heap growth
		h, base := heapsample.Start()
		b.StartTimer()
		out := benchRunParams(b, ExecParams{Command: cmd, TimeoutMs: &benchCaptureTimeoutMs}, SandboxNone, nil)
		b.StopTimer()
		if peak := h.Finish(); peak > base {
			growth = max(growth, peak-base)
		}
		if out.StdoutBytes != benchCaptureBytes {
			b.Fatalf("%v: %d bytes on stdout, want %d", cmd, out.StdoutBytes, benchCaptureBytes)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(growth), "heap-growth-B")
}

func BenchmarkCapture1GiBHead(b *testing.B) {
	benchCapture(b, []string{"head", "-c", "1073741824", "/dev/zero"})
}

func BenchmarkCapture1GiBDD(b *testing.B) {
	benchCapture(b, []string{"dd", "if=/dev/zero", "bs=1M", "count=1024", "status=none"})
}

// The baselines: the same bytes through a pipe to cat, and straight to the
// null device (no pipe at all), via os/exec and a shell.
func BenchmarkCapture1GiBPipeCatBaseline(b *testing.B) {
	if testing.Short() {
		b.Skip("moves 1 GiB per iteration; skipped with -short")
	}
	b.SetBytes(benchCaptureBytes)
	for i := 0; i < b.N; i++ {
		benchBare(b, "sh", "-c", "head -c 1073741824 /dev/zero | cat >/dev/null")
	}
}

func BenchmarkCapture1GiBDevNullBaseline(b *testing.B) {
	if testing.Short() {
		b.Skip("moves 1 GiB per iteration; skipped with -short")
	}
	b.SetBytes(benchCaptureBytes)
	for i := 0; i < b.N; i++ {
		benchBare(b, "sh", "-c", "head -c 1073741824 /dev/zero >/dev/null")
	}
}

// benchConcurrency runs b.N sandboxed /bin/true calls with inFlight of them
// running at any time, and reports the throughput.
func benchConcurrency(b *testing.B, inFlight int) {
	benchSandbox(b)
	if testing.Short() && inFlight > 8 {
		b.Skipf("%d calls in flight; skipped with -short", inFlight)
	}
	cmd, roots := []string{"/bin/true"}, []string{b.TempDir()}
	benchRun(b, cmd, SandboxLinuxSeccomp, roots)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < inFlight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				out, err := ProcessExecToolCall(context.Background(), ExecParams{Command: cmd}, SandboxLinuxSeccomp, roots, SandboxPolicy{})
				if err == nil && out.ExitCode != 0 {
					err = &SandboxDeniedError{Output: out}
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

func BenchmarkConcurrency1(b *testing.B)  { benchConcurrency(b, 1) }
func BenchmarkConcurrency8(b *testing.B)  { benchConcurrency(b, 8) }
func BenchmarkConcurrency64(b *testing.B) { benchConcurrency(b, 64) }
