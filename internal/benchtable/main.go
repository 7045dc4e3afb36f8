//go:build linux

// Command benchtable measures sandboxexec side by side with what it is
// compared against, and prints one table:
//
//	go run ./internal/benchtable [-rounds N] [-quick] [-strict] [-sections spawn,capture,concurrency,network]
//
// Every row is measured in the same run, alternately: the run is a number of
// rounds, and each round measures every row once (spawn rows: a small batch,
// interleaved call by call), starting each section at a different row every
// round. A slow moment of a noisy machine then lands on all the rows alike,
// and the ratios, each row's median over the median of its floor row, stay
// meaningful where absolute numbers wander. Numbers from different runs are
// never compared.
//
// Rows:
//   - spawn /bin/true: bare os/exec (the floor), SandboxNone,
//     SandboxLinuxSeccomp (zero policy, one writable root), the same with a
//     root that holds a .git directory (which the policy keeps read-only, by
//     a mount namespace where the runner makes one), the same under
//     AllowedDomains (a network namespace and the call's proxy), bubblewrap,
//     and the sandboxed row again from a host holding 4 GiB of live heap;
//   - capture: 1 GiB from head and from dd through ProcessExecToolCall
//     (SandboxNone), with the host's heap growth during the call, against
//     `head | cat >/dev/null` (the floor), a reader that splices the pipe to
//     /dev/null (copying nothing, the least work a reader can do),
//     `head >/dev/null`, `dd | cat >/dev/null` (dd's own pipeline), and
//     dd's output spliced to /dev/null (dd's reader that copies nothing);
//   - concurrency: sandboxed /bin/true with 1, 8 and 64 calls in flight, and
//     bare os/exec with 1 and 8 in flight for reference: what this machine
//     allows any spawner;
//   - network: 256 MiB downloaded over loopback from inside the sandbox (curl,
//     else Python), straight with NetworkAccess (the floor), through a bare
//     TCP relay, and through the call's proxy under AllowedDomains; a
//     context line gives the most the proxied download's CPU time allows,
//     spread over every CPU.
//
// Beside wall time, each row shows the CPU time it took (this process and its
// reaped children, from getrusage) per call or per GiB: on a loaded machine
// a wall-time ratio also says how many cores were free, CPU time does not.
//
// Below the table it prints each target with PASS or MISS. Where this machine
// sets a limit that no library can pass, the target is a ratio to a row of
// the same run that measures that limit (a ceiling): the capture of head to
// the reader that copies nothing, the sandboxed calls' gain from 8 in
// flight to bare os/exec's own. The exit status is 0 unless a row could not
// run, or, with -strict, a target was missed. -sections measures some
// sections only; targets whose rows are not measured are skipped.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentbox/sandboxexec"
	"github.com/agentbox/sandboxexec/internal/heapsample"
	"golang.org/x/sys/unix"
)

const (
	gib = 1 << 30
	mib = 1 << 20

	// childEnv marks the re-executed large-host child (see largeHost).
	childEnv      = "SANDBOXEXEC_BENCHTABLE_CHILD"
	largeHostHeap = 4 * gib
)

var trueCmd = []string{"/bin/true"}

func main() {
	if os.Getenv(childEnv) == "largehost" {
		if err := largeHostChild(); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable large-host child:", err)
			os.Exit(1)
		}
		return
	}
	rounds := flag.Int("rounds", 15, "rounds; each measures every row once")
	quick := flag.Bool("quick", false, "a smoke run: 3 rounds (unless -rounds is given), small batches, 256 MiB captures")
	strict := flag.Bool("strict", false, "exit 1 when a target is missed")
	sections := flag.String("sections", "spawn,capture,concurrency,network", "the sections to measure, comma-separated")
	flag.Parse()
	cfg := config{rounds: *rounds, spawnBatch: 20, captureBytes: gib, downloadBytes: 256 * mib,
		concBatch: map[int]int{1: 32, 8: 64, 64: 256},
		sections:  map[string]bool{}}
	for _, name := range strings.Split(*sections, ",") {
		switch name = strings.TrimSpace(name); name {
		case "spawn", "capture", "concurrency", "network":
			cfg.sections[name] = true
		default:
			fmt.Fprintf(os.Stderr, "benchtable: -sections: no section %q (spawn, capture, concurrency, network)\n", name)
			os.Exit(2)
		}
	}
	if *quick {
		roundsSet := false
		flag.Visit(func(f *flag.Flag) { roundsSet = roundsSet || f.Name == "rounds" })
		if !roundsSet {
			cfg.rounds = 3
		}
		cfg.spawnBatch, cfg.captureBytes, cfg.downloadBytes = 5, 256*mib, 64*mib
		cfg.concBatch = map[int]int{1: 8, 8: 16, 64: 64}
	}
	if cfg.rounds < 1 {
		fmt.Fprintln(os.Stderr, "benchtable: -rounds must be at least 1")
		os.Exit(2)
	}
	missed, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if missed && *strict {
		os.Exit(1)
	}
}

type config struct {
	rounds        int
	spawnBatch    int         // spawn calls per row per round
	captureBytes  int64       // bytes per capture call
	downloadBytes int64       // bytes per download call
	concBatch     map[int]int // calls per round, by calls in flight
	sections      map[string]bool
}

// row is one line of the table. Every sample is seconds per unit of work
// (a call, a capture, or a call of a concurrent batch), so that the p90 is
// always the slow tail; rates are derived for display.
type row struct {
	name    string
	skip    string    // why the row is not measured
	wall    []float64 // seconds per unit
	cpu     []float64 // CPU seconds per unit; none where it cannot be seen
	growth  uint64    // capture rows: highest heap growth seen, bytes
	measure func(r *row) error
}

func (r *row) median() float64 { return quantile(r.wall, 0.5) }
func (r *row) p90() float64    { return quantile(r.wall, 0.9) }
func (r *row) ok() bool        { return r.skip == "" && len(r.wall) > 0 }

// quantile is the nearest-rank quantile q of s, NaN for none.
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	i := int(math.Ceil(q*float64(len(c)))) - 1
	return c[max(0, min(i, len(c)-1))]
}

// cpuTime is the CPU time of this process and of its reaped children.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	sum := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return sum(&self) + sum(&children)
}

// timed runs f, which does units of work, and records wall and CPU time per
// unit.
func (r *row) timed(units int, f func() error) error {
	c0, t0 := cpuTime(), time.Now()
	err := f()
	wall, cpu := time.Since(t0), cpuTime()-c0
	r.wall = append(r.wall, wall.Seconds()/float64(units))
	r.cpu = append(r.cpu, cpu.Seconds()/float64(units))
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	return nil
}

// simple is a row that times one run of f per measurement.
func simple(name string, f func() error) *row {
	return &row{name: name, measure: func(r *row) error { return r.timed(1, f) }}
}

func run(cfg config) (missed bool, err error) {
	printMachine()

	root, err := os.MkdirTemp("", "benchtable-root-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(root)
	roots := []string{root}
	sandboxed := func() error { return sandboxedTrue(roots) }
	bareTrue := func() error { return exec.Command(trueCmd[0]).Run() }

	noSandbox := ""
	if s := sandboxexec.ProbeSandbox(); !s.Available {
		noSandbox = "the Linux sandbox is not available here: " + s.Detail
	}

	// Spawn rows.
	bare := simple("bare os/exec", bareTrue)
	none := simple("SandboxNone", func() error { return call(trueCmd, sandboxexec.SandboxNone, nil) })
	small := simple("SandboxLinuxSeccomp (zero policy, 1 root)", sandboxed)
	small.skip = noSandbox
	// What the zero policy adds to FullDiskWriteAccess: the mount namespace
	// (the read-only view of the host) and the private TMPDIR.
	fullDisk := simple("SandboxLinuxSeccomp, FullDiskWriteAccess (no mount namespace)", func() error {
		return call(trueCmd, sandboxexec.SandboxLinuxSeccomp, roots, sandboxexec.SandboxPolicy{FullDiskWriteAccess: true})
	})
	fullDisk.skip = noSandbox
	gitRoot, err := os.MkdirTemp("", "benchtable-git-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(gitRoot)
	git := simple("SandboxLinuxSeccomp, root with .git (read-only bind)", func() error { return sandboxedTrue([]string{gitRoot}) })
	git.skip = noSandbox
	if git.skip == "" {
		git.skip = makeGitRoot(gitRoot)
	}
	bwrap := &row{name: "bubblewrap (--ro-bind / / --unshare-net ...)"}
	if path, err := exec.LookPath("bwrap"); err != nil {
		bwrap.skip = "bwrap is not installed (apt-get install -y bubblewrap)"
	} else {
		args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--bind", root, root,
			"--unshare-net", "--die-with-parent", trueCmd[0]}
		bwrap.measure = func(r *row) error { return r.timed(1, exec.Command(path, args...).Run) }
		if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
			bwrap.skip = fmt.Sprintf("bwrap cannot run here: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	large := &row{name: "SandboxLinuxSeccomp, host with 4 GiB live heap", skip: noSandbox}
	if large.skip == "" && cfg.sections["spawn"] {
		fmt.Fprintln(os.Stderr, "starting the large-host child (it allocates and touches 4 GiB first)...")
		host, err := startLargeHost()
		if err != nil {
			large.skip = err.Error()
		} else {
			defer host.close()
			large.name = fmt.Sprintf("SandboxLinuxSeccomp, host with %.1f GiB live heap", float64(host.heap)/gib)
			large.measure = func(r *row) error {
				wall, cpu, err := host.call()
				if err != nil {
					return fmt.Errorf("%s: %w", r.name, err)
				}
				r.wall, r.cpu = append(r.wall, wall.Seconds()), append(r.cpu, cpu.Seconds())
				return nil
			}
		}
	}
	domains := simple("SandboxLinuxSeccomp, AllowedDomains (network namespace, proxy)", func() error {
		return callPolicy(trueCmd, roots, sandboxexec.SandboxPolicy{AllowedDomains: []string{"example.com"}})
	})
	domains.skip = noSandbox
	if s := sandboxexec.ProbeSandbox(); domains.skip == "" && !s.NetworkNamespace {
		domains.skip = "this host cannot make network namespaces"
	}
	spawn := []*row{bare, none, small, fullDisk, git, domains, bwrap, large}

	// Capture rows.
	size := strconv.FormatInt(cfg.captureBytes, 10)
	label := fmt.Sprintf("%d MiB", cfg.captureBytes/mib)
	if cfg.captureBytes%gib == 0 {
		label = fmt.Sprintf("%d GiB", cfg.captureBytes/gib)
	}
	headCmd := []string{"head", "-c", size, "/dev/zero"}
	ddCmd := []string{"dd", "if=/dev/zero", "bs=1M", "count=" + strconv.FormatInt(cfg.captureBytes/mib, 10), "status=none"}
	catCap := &row{name: "sh: head | cat >/dev/null", measure: func(r *row) error {
		return r.timed(1, exec.Command("sh", "-c", "head -c "+size+" /dev/zero | cat >/dev/null").Run)
	}}
	headCap := &row{name: "ProcessExecToolCall: head -c " + label,
		measure: func(r *row) error { return captureCall(r, headCmd, cfg.captureBytes) }}
	ddCap := &row{name: "ProcessExecToolCall: dd bs=1M",
		measure: func(r *row) error { return captureCall(r, ddCmd, cfg.captureBytes) }}
	nullCap := &row{name: "sh: head >/dev/null", measure: func(r *row) error {
		return r.timed(1, exec.Command("sh", "-c", "head -c "+size+" /dev/zero >/dev/null").Run)
	}}
	keepNothing := &row{name: "head | splice to /dev/null (copies nothing)", measure: func(r *row) error {
		return r.timed(1, func() error { return spliceAway(headCmd, cfg.captureBytes) })
	}}
	// dd's own pipeline, beside head's: the target compares the dd capture
	// with head's, the context line with the same writer's.
	ddCat := &row{name: "sh: dd bs=1M | cat >/dev/null", measure: func(r *row) error {
		return r.timed(1, exec.Command("sh", "-c", strings.Join(ddCmd, " ")+" | cat >/dev/null").Run)
	}}
	ddNothing := &row{name: "dd bs=1M | splice to /dev/null (copies nothing)", measure: func(r *row) error {
		return r.timed(1, func() error { return spliceAway(ddCmd, cfg.captureBytes) })
	}}
	capture := []*row{catCap, headCap, ddCap, keepNothing, nullCap, ddCat, ddNothing}

	// Concurrency rows.
	concRow := func(name string, f func() error, inFlight int, skip string) *row {
		batch := cfg.concBatch[inFlight]
		return &row{name: name, skip: skip, measure: func(r *row) error {
			return r.timed(batch, func() error { return concurrent(f, inFlight, batch) })
		}}
	}
	conc1 := concRow("sandboxed, 1 in flight", sandboxed, 1, noSandbox)
	conc8 := concRow("sandboxed, 8 in flight", sandboxed, 8, noSandbox)
	conc64 := concRow("sandboxed, 64 in flight", sandboxed, 64, noSandbox)
	bare1 := concRow("bare os/exec, 1 in flight (reference)", bareTrue, 1, "")
	bare8 := concRow("bare os/exec, 8 in flight (reference)", bareTrue, 8, "")
	concRows := []*row{conc1, conc8, conc64, bare1, bare8}

	// Network rows: a download over loopback from a server in this
	// process, straight (NetworkAccess) and through the call's proxy.
	var direct, relayed, proxied *row
	var downloadLabel string
	{
		d, stop, err := startDownloadServer(cfg.downloadBytes)
		if err != nil {
			return false, err
		}
		defer stop()
		downloadLabel = fmt.Sprintf("%d MiB", cfg.downloadBytes/mib)
		direct = simple("download "+downloadLabel+", NetworkAccess (straight)", func() error {
			return callPolicy(downloadCommand("http://127.0.0.1:"+d+"/"), roots, sandboxexec.SandboxPolicy{NetworkAccess: true})
		})
		proxied = simple("download "+downloadLabel+", AllowedDomains (through the proxy)", func() error {
			return callPolicy(downloadCommand("http://localhost:"+d+"/"), roots, sandboxexec.SandboxPolicy{AllowedDomains: []string{"localhost"}})
		})
		direct.skip, proxied.skip = noSandbox, domains.skip
		r, stopRelay, err := startRelay(d)
		if err != nil {
			return false, err
		}
		defer stopRelay()
		relayed = simple("download "+downloadLabel+", NetworkAccess through a bare TCP relay", func() error {
			return callPolicy(downloadCommand("http://127.0.0.1:"+r+"/"), roots, sandboxexec.SandboxPolicy{NetworkAccess: true})
		})
		relayed.skip = noSandbox
	}
	network := []*row{direct, relayed, proxied}

	all := append(append(append(append([]*row{}, spawn...), capture...), concRows...), network...)
	fmt.Printf("run: %d rounds after one warm-up round; each round runs every row once, in a rotating order\n", cfg.rounds)
	fmt.Printf("     (spawn rows: %d calls each, interleaved call by call; concurrency rows: one batch each)\n\n", cfg.spawnBatch)

	measure := func(rows []*row) error {
		for _, r := range rows {
			if r.skip == "" {
				if err := r.measure(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// The warm-up round (round -1) does the one-time work (Landlock and
	// cgroup probes, page cache, the child's first call) and is dropped.
	for round := -1; round < cfg.rounds; round++ {
		if round == 0 {
			for _, r := range all {
				r.wall, r.cpu, r.growth = nil, nil, 0
			}
		}
		start := time.Now()
		batch := cfg.spawnBatch
		if round < 0 {
			batch = 1
		}
		for i := 0; i < batch && cfg.sections["spawn"]; i++ {
			if err := measure(rotate(spawn, round*batch+i)); err != nil {
				return false, err
			}
		}
		if cfg.sections["capture"] {
			if err := measure(rotate(capture, round)); err != nil {
				return false, err
			}
		}
		if cfg.sections["concurrency"] {
			if err := measure(rotate(concRows, round)); err != nil {
				return false, err
			}
		}
		if cfg.sections["network"] {
			if err := measure(rotate(network, round)); err != nil {
				return false, err
			}
		}
		if round >= 0 {
			fmt.Fprintf(os.Stderr, "round %d/%d: %.1fs\n", round+1, cfg.rounds, time.Since(start).Seconds())
		}
	}

	// The table. Values are padded to a width so that they line up
	// right-aligned in tabwriter's left-aligned columns.
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tmedian\tp90\tratio\tvs\tcpu\theap growth\tn")
	ms := func(s float64) string { return fmt.Sprintf("%8.2f ms", s*1e3) }
	cpuMs := func(s float64) string { return fmt.Sprintf("%6.2f ms/call", s*1e3) }
	if !cfg.sections["spawn"] {
		spawn = nil
	} else {
		fmt.Fprintln(tw, "spawn /bin/true (latency per call)\t\t\t\t\t\t\t")
	}
	for _, r := range spawn {
		vs := "bare"
		if r == bare {
			vs = "(floor)"
		}
		printRow(tw, r, ms, cpuMs, r.median()/bare.median(), vs, "")
	}
	mbps := func(s float64) string { return fmt.Sprintf("%6.0f MB/s", float64(cfg.captureBytes)/s/1e6) }
	cpuGiB := func(s float64) string { return fmt.Sprintf("%6.2f s/GiB", s*gib/float64(cfg.captureBytes)) }
	if !cfg.sections["capture"] {
		capture = nil
	} else {
		fmt.Fprintf(tw, "capture %s (throughput; p90 = slow tail)\t\t\t\t\t\t\t\n", label)
	}
	for _, r := range capture {
		vs, growth := "| cat", ""
		if r == catCap {
			vs = "(floor)"
		}
		if r == headCap || r == ddCap {
			growth = fmt.Sprintf("%5.0f KiB", float64(r.growth)/1024)
		}
		printRow(tw, r, mbps, cpuGiB, catCap.median()/r.median(), vs, growth)
	}
	perSec := func(s float64) string { return fmt.Sprintf("%4.0f calls/s", 1/s) }
	if !cfg.sections["concurrency"] {
		concRows = nil
	} else {
		fmt.Fprintln(tw, "concurrency, /bin/true (calls/s; p90 = slow tail)\t\t\t\t\t\t\t")
	}
	for _, r := range concRows {
		floor, vs := conc1, "sandboxed, 1"
		if r == bare1 || r == bare8 {
			floor, vs = bare1, "bare, 1"
		}
		if r == floor {
			vs = "(floor)"
		}
		printRow(tw, r, perSec, cpuMs, floor.median()/r.median(), vs, "")
	}
	downloadMBps := func(s float64) string { return fmt.Sprintf("%6.0f MB/s", float64(cfg.downloadBytes)/s/1e6) }
	cpuPerCall := func(s float64) string { return fmt.Sprintf("%6.2f s/call", s) }
	if !cfg.sections["network"] {
		network = nil
	} else {
		fmt.Fprintf(tw, "network, %s over loopback (throughput)\t\t\t\t\t\t\t\n", downloadLabel)
	}
	for _, r := range network {
		vs := "straight"
		if r == direct {
			vs = "(floor)"
		}
		printRow(tw, r, downloadMBps, cpuPerCall, direct.median()/r.median(), vs, "")
	}
	tw.Flush()
	for _, r := range append(append(append(append([]*row{}, spawn...), capture...), concRows...), network...) {
		if r.skip != "" {
			fmt.Printf("skipped %s: %s\n", r.name, r.skip)
		}
	}

	// The targets: each ratio is of medians measured in this run. A
	// ceiling names the row of the run whose ratio is the limit.
	fmt.Println("\ntargets:")
	check := func(name string, value float64, op string, limit float64, ceiling string, needs ...*row) {
		for _, r := range needs {
			if !r.ok() {
				fmt.Printf("  SKIP  %-46s (%s not measured)\n", name, r.name)
				return
			}
		}
		ok := value <= limit
		if op == ">=" {
			ok = value >= limit
		}
		verdict := "PASS"
		if !ok {
			verdict, missed = "MISS", true
		}
		if ceiling != "" {
			ceiling = ": " + ceiling
		}
		fmt.Printf("  %s  %-46s %7.3f  (target %s %.2f%s)\n", verdict, name, value, op, limit, ceiling)
	}
	// A context line puts a ratio beside its target: what the least work a
	// reader can do, or the writer's own pace, allow here.
	context := func(name string, value float64, about string, needs ...*row) {
		for _, r := range needs {
			if !r.ok() {
				return
			}
		}
		fmt.Printf("        %-46s %7.3f  (%s)\n", name, value, about)
	}
	check("SandboxNone / bare os/exec", none.median()/bare.median(), "<=", 1.10, "", none, bare)
	check("sandboxed / bare os/exec", small.median()/bare.median(), "<=", 1.10, "", small, bare)
	context("zero policy / FullDiskWriteAccess, sandboxed", small.median()/fullDisk.median(),
		"the read-only view of the host and the private TMPDIR", small, fullDisk)
	check("root with .git / zero policy, sandboxed", git.median()/small.median(), "<=", 1.2, "", git, small)
	check("AllowedDomains / zero policy, sandboxed", domains.median()/small.median(), "<=", 1.3, "", domains, small)
	check("sandboxed / bubblewrap", small.median()/bwrap.median(), "<=", 0.4, "", small, bwrap)
	check("large host / small host, sandboxed", large.median()/small.median(), "<=", 1.15, "", large, small)
	check("capture head, throughput / copies nothing", keepNothing.median()/headCap.median(), ">=", 0.95,
		"of the reader that copies nothing", headCap, keepNothing)
	context("capture head, throughput / | cat", catCap.median()/headCap.median(),
		fmt.Sprintf("a reader that copies nothing: %.3f / | cat", catCap.median()/keepNothing.median()),
		headCap, keepNothing, catCap)
	context("capture head, writer without a pipe / | cat", catCap.median()/nullCap.median(),
		"no reader makes head faster than writing to /dev/null", nullCap, catCap)
	check("capture dd, throughput / | cat", catCap.median()/ddCap.median(), ">=", 1.3, "", ddCap, catCap)
	context("capture dd, throughput / dd | cat", ddCat.median()/ddCap.median(),
		"the same writer's pipeline", ddCap, ddCat)
	context("capture dd, throughput / copies nothing", ddNothing.median()/ddCap.median(),
		fmt.Sprintf("dd's reader that copies nothing: %.3f / | cat", catCap.median()/ddNothing.median()),
		ddCap, ddNothing, catCap)
	check("capture heap growth, MiB (max of head, dd)", float64(max(headCap.growth, ddCap.growth))/mib, "<=", 1, "", headCap, ddCap)
	check("sandboxed 8 in flight / 1 in flight, calls/s", conc1.median()/conc8.median(), ">=", bare1.median()/bare8.median(),
		"bare os/exec's own 8 / 1 in flight", conc1, conc8, bare1, bare8)
	check("download through the proxy / straight, MB/s", direct.median()/proxied.median(), ">=", 0.8, "", direct, proxied)
	context("download through the proxy / a bare relay", relayed.median()/proxied.median(),
		fmt.Sprintf("a relay that only splices: %.3f / straight", direct.median()/relayed.median()), proxied, relayed, direct)
	// Each loopback hop's TCP work is charged to its sender, so the
	// proxied download takes more CPU than the straight one: spread
	// perfectly over the CPUs, that CPU time bounds its throughput.
	if cpu := quantile(proxied.cpu, 0.5); cpu > 0 {
		context("download through the proxy at best / straight", direct.median()/(cpu/float64(runtime.NumCPU())),
			fmt.Sprintf("its CPU, %.2f s, over %d CPUs; straight's, %.2f s", cpu, runtime.NumCPU(), quantile(direct.cpu, 0.5)),
			proxied, direct)
	}
	return missed, nil
}

func printRow(tw io.Writer, r *row, unit, cpuUnit func(float64) string, ratio float64, vs, growth string) {
	if !r.ok() {
		fmt.Fprintf(tw, "  %s\tskipped\t\t\t\t\t\t\n", r.name)
		return
	}
	cpu := ""
	if len(r.cpu) > 0 {
		cpu = cpuUnit(quantile(r.cpu, 0.5))
	}
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%5.2fx\t%s\t%s\t%s\t%d\n", r.name, unit(r.median()), unit(r.p90()), ratio, vs, cpu, growth, len(r.wall))
}

// rotate returns rows starting at index k mod len(rows).
func rotate(rows []*row, k int) []*row {
	k = ((k % len(rows)) + len(rows)) % len(rows)
	return append(append([]*row{}, rows[k:]...), rows[:k]...)
}

// call runs cmd once and fails on any error or a non-zero exit.
func call(cmd []string, st sandboxexec.SandboxType, roots []string, policy ...sandboxexec.SandboxPolicy) error {
	_, err := callOutput(sandboxexec.ExecParams{Command: cmd}, st, roots, policy...)
	return err
}

// captureTimeoutMs replaces DefaultTimeout for the capture calls: 1 GiB may
// take more than 10 s on a slow or loaded machine.
var captureTimeoutMs uint64 = 300_000

func callOutput(p sandboxexec.ExecParams, st sandboxexec.SandboxType, roots []string, policy ...sandboxexec.SandboxPolicy) (sandboxexec.ExecToolCallOutput, error) {
	var pol sandboxexec.SandboxPolicy
	if len(policy) > 0 {
		pol = policy[0]
	}
	out, err := sandboxexec.ProcessExecToolCall(context.Background(), p, st, roots, pol)
	if err == nil && out.ExitCode != 0 {
		err = fmt.Errorf("%v: exit %d: %s", p.Command, out.ExitCode, out.Stderr)
	}
	return out, err
}

// makeGitRoot makes root a repository, with git where there is one, else
// with an empty .git directory; it returns why it could not, or "".
func makeGitRoot(root string) string {
	if path, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(path, "init", "-q", root).CombinedOutput()
		if err != nil {
			return fmt.Sprintf("git init: %v: %s", err, strings.TrimSpace(string(out)))
		}
		return ""
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		return err.Error()
	}
	return ""
}

// callPolicy runs cmd sandboxed under policy and fails on any error or a
// non-zero exit.
func callPolicy(cmd, roots []string, policy sandboxexec.SandboxPolicy) error {
	out, err := sandboxexec.ProcessExecToolCall(context.Background(), sandboxexec.ExecParams{Command: cmd, TimeoutMs: &captureTimeoutMs},
		sandboxexec.SandboxLinuxSeccomp, roots, policy, sandboxexec.WithEnv([]string{"PATH=/usr/bin:/bin"}))
	if err == nil && out.ExitCode != 0 {
		err = fmt.Errorf("%v: exit %d: %s", cmd, out.ExitCode, out.Stderr)
	}
	return err
}

// startRelay listens on 127.0.0.1 and relays each connection to port, both
// ways, as the least any proxy does: a second pass over loopback, spliced
// (io.Copy between TCP connections), with nothing parsed or checked.
func startRelay(port string) (relayPort string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				d, err := net.Dial("tcp", "127.0.0.1:"+port)
				if err != nil {
					return
				}
				defer d.Close()
				go func() {
					io.Copy(d, c)
					d.(*net.TCPConn).CloseWrite()
				}()
				io.Copy(c, d)
			}()
		}
	}()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), func() { l.Close() }, nil
}

// startDownloadServer serves n bytes on 127.0.0.1 and returns its port.
func startDownloadServer(n int64) (port string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	chunk := make([]byte, 1<<20)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		for left := n; left > 0; left -= int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
				return
			}
		}
	})}
	go srv.Serve(l)
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), func() { srv.Close() }, nil
}

// downloadCommand fetches u to /dev/null inside the sandbox: with curl
// where there is one, else with Python.
func downloadCommand(u string) []string {
	if _, err := exec.LookPath("curl"); err == nil {
		return []string{"curl", "-sSf", "-o", "/dev/null", u}
	}
	return []string{"python3", "-c", "import sys, urllib.request\nr = urllib.request.urlopen(sys.argv[1])\nwhile r.read(1 << 20): pass", u}
}

// sandboxedTrue is the sandboxed spawn, the same in this process and in the
// large-host child.
func sandboxedTrue(roots []string) error {
	return call(trueCmd, sandboxexec.SandboxLinuxSeccomp, roots)
}

// captureCall times one capture of want bytes and records the heap growth:
// the highest HeapInuse sampled during the call over HeapInuse before it,
// after a GC that makes the baseline low and steady (outside the timing).
func captureCall(r *row, cmd []string, want int64) error {
	runtime.GC()
	h, base := heapsample.Start()
	var out sandboxexec.ExecToolCallOutput
	err := r.timed(1, func() (err error) {
		out, err = callOutput(sandboxexec.ExecParams{Command: cmd, TimeoutMs: &captureTimeoutMs}, sandboxexec.SandboxNone, nil)
		return err
	})
	if peak := h.Finish(); peak > base {
		r.growth = max(r.growth, peak-base)
	}
	if err == nil && out.StdoutBytes != want {
		err = fmt.Errorf("%s: %d bytes on stdout, want %d", r.name, out.StdoutBytes, want)
	}
	return err
}

// spliceAway runs cmd with its stdout in a 1 MiB pipe that it splices to
// /dev/null as the pipe fills, waiting in poll(2) as the engine does: the
// least work a reader can do, since it copies nothing and keeps nothing. A
// capture's distance to this row is what copying and keeping cost; this
// row's distance to `| cat` is the writer's and the pipe's, which no reader
// wins back.
func spliceAway(cmd []string, want int64) error {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	// The read end stays out of Go's poller, whose wake per write costs
	// more than the splice.
	pr, pw := os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1")
	defer pr.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		pw.Close()
		return err
	}
	defer null.Close()
	unix.FcntlInt(pr.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdout = pw
	err = c.Start()
	pw.Close()
	if err != nil {
		return err
	}
	fds := []unix.PollFd{{Fd: int32(p[0]), Events: unix.POLLIN}}
	var moved int64
	fail := func(err error) error {
		c.Process.Kill()
		c.Wait()
		return err
	}
splicing:
	for {
		n, err := unix.Splice(p[0], nil, int(null.Fd()), nil, 1<<20, unix.SPLICE_F_NONBLOCK)
		switch {
		case n > 0:
			moved += int64(n) // n is an int on 32-bit platforms
		case err == nil: // EOF
			break splicing
		case err == unix.EAGAIN:
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return fail(err)
			}
		case err != unix.EINTR:
			return fail(err)
		}
	}
	if err := c.Wait(); err != nil {
		return err
	}
	if moved != want {
		return fmt.Errorf("%d bytes spliced, want %d", moved, want)
	}
	return nil
}

// concurrent runs f n times with inFlight runs going on at any time.
func concurrent(f func() error, inFlight, n int) error {
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for w := 0; w < inFlight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := f(); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := first.Load(); err != nil {
		return *err
	}
	return nil
}

// The large-host row.
//
// It runs in a re-executed child process of this same binary that allocates
// 4 GiB of heap, touches every page once, keeps it alive, and then runs one
// sandboxed /bin/true per request read from its stdin, answering with the
// call's wall and CPU time (taken in the child, so the pipe round trip is
// not in them). The parent asks for these calls interleaved call by call
// with its own small-host sandboxed calls, so the two rows are measured
// alternately under the same machine load, while the parent itself keeps a
// small heap. With the 4 GiB in the parent instead, every other row (and
// every GC of the parent) would run beside it, and small-host and large-host
// calls could only alternate by phases, not call by call. The same code
// (sandboxedTrue) runs on both sides. The heap is pointer-free ([]byte
// chunks), so what the row measures is what a large, resident address space
// costs a spawn (page tables, mm work in clone and exit), not the GC marking
// a large heap.

type largeHost struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	heap uint64 // the child's HeapInuse once its heap was allocated
}

func startLargeHost() (*largeHost, error) {
	if avail, ok := memAvailable(); ok && avail < largeHostHeap+gib {
		return nil, fmt.Errorf("only %.1f GiB of memory available; the large-host row needs 5", float64(avail)/gib)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=largehost")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &largeHost{cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := h.out.ReadString('\n')
	heap, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if err != nil || !ok {
		h.close()
		return nil, fmt.Errorf("large-host child did not start: %q %v", line, err)
	}
	h.heap, _ = strconv.ParseUint(heap, 10, 64)
	return h, nil
}

// call has the child run one sandboxed call, and returns its wall and CPU
// time as the child measured them.
func (h *largeHost) call() (wall, cpu time.Duration, err error) {
	if _, err := io.WriteString(h.in, "call\n"); err != nil {
		return 0, 0, err
	}
	line, err := h.out.ReadString('\n')
	if err != nil {
		return 0, 0, fmt.Errorf("large-host child: %w", err)
	}
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, "err "); ok {
		return 0, 0, errors.New(msg)
	}
	var w, c int64
	if _, err := fmt.Sscanf(line, "ok %d %d", &w, &c); err != nil {
		return 0, 0, fmt.Errorf("large-host child: bad answer %q", line)
	}
	return time.Duration(w), time.Duration(c), nil
}

func (h *largeHost) close() {
	h.in.Close()
	h.cmd.Wait()
}

func largeHostChild() error {
	root, err := os.MkdirTemp("", "benchtable-largehost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	roots := []string{root}

	const chunk = 64 * mib
	heap := make([][]byte, largeHostHeap/chunk)
	page := os.Getpagesize()
	for i := range heap {
		heap[i] = make([]byte, chunk)
		for j := 0; j < chunk; j += page {
			heap[i][j] = 1
		}
	}
	runtime.GC()
	if err := sandboxedTrue(roots); err != nil { // the one-time probes
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "ready %d\n", heapsample.Now())
	w.Flush()
	s := bufio.NewScanner(os.Stdin)
	for s.Scan() {
		c0, t0 := cpuTime(), time.Now()
		err := sandboxedTrue(roots)
		wall, cpu := time.Since(t0), cpuTime()-c0
		if err != nil {
			fmt.Fprintf(w, "err %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Fprintf(w, "ok %d %d\n", wall.Nanoseconds(), cpu.Nanoseconds())
		}
		w.Flush()
	}
	runtime.KeepAlive(heap)
	return s.Err()
}

func memAvailable() (uint64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			if f := strings.Fields(rest); len(f) >= 1 {
				kb, err := strconv.ParseUint(f[0], 10, 64)
				return kb * 1024, err == nil
			}
		}
	}
	return 0, false
}

func printMachine() {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = fmt.Sprintf("; load average %s %s %s at start", f[0], f[1], f[2])
		}
	}
	fmt.Printf("machine: CPU %s; nproc %d; kernel %s; %s %s/%s%s\n", cpu, runtime.NumCPU(), kernel, runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
}
