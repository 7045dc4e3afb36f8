//go:build linux

package sandboxexec

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The middle of a flood is spliced away rather than read; whatever the
// writer's block size and the stream's length, the result is what reading
// every byte gives.
func TestCaptureSplicedFlood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seq := engSeq(3_000_000) // about 20 MiB
	sizes := []int{MaxStreamOutput/2 + 1, MaxStreamOutput - 1, MaxStreamOutput + 1,
		3 * MaxStreamOutput, 1<<20 + 7, len(seq)}
	before := splicedAway.Load()
	for _, size := range sizes {
		full := seq[:size]
		f := filepath.Join(dir, strconv.Itoa(size))
		require.NoError(t, os.WriteFile(f, []byte(full), 0o644))
		for _, writer := range []string{"cat", "dd bs=1M", "dd bs=8k", "head -c " + strconv.Itoa(size)} {
			script := writer + ` <"$1"`
			if strings.HasPrefix(writer, "dd") {
				script = writer + ` status=none if="$1"`
			}
			out, _, err := engRun(t, engSh(script, f))
			require.NoError(t, err)
			require.Equal(t, int64(size), out.StdoutBytes, "%s, %d bytes", writer, size)
			require.Equal(t, size > MaxStreamOutput, out.StdoutTruncated)
			require.Equal(t, wantCaptured(full), out.Stdout, "%s, %d bytes", writer, size)
		}
	}
	assert.Greater(t, splicedAway.Load(), before, "the splice path ran")
}

// A backlog of writes in packet mode (O_DIRECT on the pipe) puts a few bytes
// in each of the tail pipe's slots, which run out before the backlog does:
// the splice stops there, and reading the rest gives an exact capture.
func TestCaptureSplicePacketBacklog(t *testing.T) {
	t.Parallel()
	pr, pw, err := unpolledPipe()
	require.NoError(t, err)
	defer pr.Close()
	enlargePipe(pr.Fd()) // the whole stream fits: it is all there before the splice
	const normal, packets = 164 << 10, 200
	full := engSeq(40_000)[:normal+packets]
	_, err = pw.Write([]byte(full[:normal]))
	require.NoError(t, err)
	flags, err := unix.FcntlInt(pw.Fd(), unix.F_GETFL, 0)
	require.NoError(t, err)
	_, err = unix.FcntlInt(pw.Fd(), unix.F_SETFL, flags|unix.O_DIRECT)
	require.NoError(t, err)
	for i := normal; i < len(full); i++ {
		_, err := pw.Write([]byte{full[i]})
		require.NoError(t, err)
	}
	require.NoError(t, pw.Close())

	// What a stream does, with a tail pipe of 64 slots: 25 full pages and
	// 39 packets fill it while 161 packets wait.
	s := newStream(pr, nil)
	defer s.close()
	c := s.capture
	n, err := pr.Read(s.buf)
	require.NoError(t, err)
	require.Equal(t, len(s.buf), n)
	c.Write(s.buf)
	require.True(t, c.headFull())
	tail := &s.backlog
	require.True(t, tail.open(c))
	tail.capacity, err = unix.FcntlInt(uintptr(tail.w), unix.F_SETPIPE_SZ, 256<<10)
	require.NoError(t, err)
	before := splicedAway.Load()
	assert.False(t, tail.splice(pr.Fd(), c, s.buf), "the stream has not ended")
	assert.Greater(t, splicedAway.Load(), before, "what the tail will not keep was spliced away")
	waiting, err := unix.IoctlGetInt(int(pr.Fd()), unix.TIOCINQ)
	require.NoError(t, err)
	assert.Equal(t, 161, waiting, "packets left in the stream")

	drainWays["poll"].drain(s)
	assert.Equal(t, int64(len(full)), c.total)
	assert.Equal(t, wantCaptured(full), c.String())
}

// A stream of small blocks, of every length, is read as it comes: each pump
// empties the pipe, and the capture is what reading every byte gives.
func TestCaptureSmallBlocks(t *testing.T) {
	pr, pw, s := pumpedStream(t)
	full := engSeq(60_000)
	before := splicedAway.Load()
	for written, block := 0, 1; written < len(full); block = block*7%4093 + 1 {
		chunk := full[written:min(written+block, len(full))]
		_, err := pw.Write([]byte(chunk))
		require.NoError(t, err)
		written += len(chunk)
		require.True(t, s.pump(pr.Fd()), "the stream goes on")
		require.Zero(t, pipeHolds(pr.Fd(), -1), "pump empties the pipe")
	}
	require.NoError(t, pw.Close())
	require.False(t, s.pump(pr.Fd()), "EOF ends the stream")
	assert.Equal(t, int64(len(full)), s.capture.total)
	assert.Equal(t, wantCaptured(full), s.capture.String())
	assert.Equal(t, before, splicedAway.Load(), "small blocks are read, not spliced")
}

// One pump reads until the pipe is empty, not once: with packets queued (one
// per read), a single pump takes them all.
func TestCapturePumpReadsUntilEmpty(t *testing.T) {
	pr, pw, s := pumpedStream(t)
	flags, err := unix.FcntlInt(pw.Fd(), unix.F_GETFL, 0)
	require.NoError(t, err)
	_, err = unix.FcntlInt(pw.Fd(), unix.F_SETFL, flags|unix.O_DIRECT)
	require.NoError(t, err)
	for _, packet := range []string{"one\n", "two\n", "three\n"} {
		_, err := pw.Write([]byte(packet))
		require.NoError(t, err)
	}
	require.True(t, s.pump(pr.Fd()), "the stream goes on")
	assert.Zero(t, pipeHolds(pr.Fd(), -1), "one pump empties the pipe")
	assert.Equal(t, "one\ntwo\nthree\n", s.capture.String())
}

// pumpedStream is a stream on a pipe that the test writes to and pumps
// itself.
func pumpedStream(t *testing.T) (pr, pw *os.File, s *stream) {
	pr, pw, err := unpolledPipe()
	require.NoError(t, err)
	s = newStream(pr, nil)
	t.Cleanup(func() {
		s.close()
		pr.Close()
		pw.Close()
	})
	return pr, pw, s
}

// A pipe that has grown to 1 MiB can hold more than a read has room for,
// and a read that reaches a packet (a write in O_DIRECT mode) with less room
// left than the packet loses the rest of it: after 63,000 normal bytes, a
// 64 KiB read has 2,536 bytes of room for a 4 KiB packet. The pump splices
// such a backlog, and sizes its reads to what the pipe holds, so every byte
// is counted.
func TestCaptureEnlargedPipeKeepsPackets(t *testing.T) {
	pr, pw, s := pumpedStream(t)
	written := 0
	write := func(b []byte) {
		t.Helper()
		n, err := pw.Write(b)
		require.NoError(t, err)
		written += n
	}
	write(make([]byte, len(s.buf))) // backs the pipe up: the head fills, the pipe grows
	require.True(t, s.pump(pr.Fd()))
	require.True(t, s.enlarged)
	for _, normal := range []int{63000, 1000} { // more, then less, than the buffer in all
		write(bytes.Repeat([]byte{'n'}, normal))
		_, err := unix.FcntlInt(pw.Fd(), unix.F_SETFL, unix.O_DIRECT)
		require.NoError(t, err)
		for range 3 {
			write(bytes.Repeat([]byte{'p'}, 4096))
		}
		_, err = unix.FcntlInt(pw.Fd(), unix.F_SETFL, 0)
		require.NoError(t, err)
		require.True(t, s.pump(pr.Fd()))
	}
	require.NoError(t, pw.Close())
	for s.pump(pr.Fd()) {
	}
	assert.Equal(t, int64(written), s.capture.total)
	assert.True(t, strings.HasSuffix(s.capture.String(), strings.Repeat("n", 1000)+strings.Repeat("p", 3*4096)))
}

// A command that backs its pipe up and then mixes normal and packet-mode
// writes loses no byte, whether a live writer takes every byte (its pipe
// then keeps the default size) or the backlog is spliced.
func TestCaptureCommandMixesPackets(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	script := `import fcntl, os
fl = fcntl.fcntl(1, fcntl.F_GETFL)
os.write(1, b"h" * (1 << 20))
for i in range(100):
    fcntl.fcntl(1, fcntl.F_SETFL, fl)
    os.write(1, b"a" * 128536)
    fcntl.fcntl(1, fcntl.F_SETFL, fl | os.O_DIRECT)
    os.write(1, b"b" * 4096)
`
	const want = 1<<20 + 100*(128536+4096)
	for _, live := range []bool{false, true} {
		var opts []Option
		var w countingWriter
		if live {
			w.pause = time.Millisecond // the pipe backs up behind it
			opts = append(opts, WithLiveOutput(&w, nil))
		}
		out, _, err := engRun(t, engCmd("python3", "-c", script), opts...)
		require.NoError(t, err)
		assert.EqualValues(t, want, out.StdoutBytes, "live writer: %v", live)
		assert.True(t, strings.HasSuffix(out.Stdout, "a"+strings.Repeat("b", 4096)), "live writer: %v", live)
		if live {
			assert.EqualValues(t, want, w.n)
		}
	}
}

// countingWriter counts what it is given, pausing on each write.
type countingWriter struct {
	pause time.Duration
	n     int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	time.Sleep(w.pause)
	w.n += int64(len(b))
	return len(b), nil
}

// A live writer that takes its time holds up a call by no more than a few
// of its writes past the drain grace, whether the process left behind writes
// lines (each pump ends once it has taken a while, and the engine looks at
// the deadline) or floods its pipe, which has grown to 1 MiB by then (the
// last sweep feeds the writer for a moment only).
func TestCaptureSlowLiveWriterKeepsGrace(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) not installed")
	}
	const pause = 30 * time.Millisecond
	for name, writer := range map[string]string{
		"lines": `while :; do echo ` + strings.Repeat("x", 99) + `; done`,
		"flood": `exec timeout 20 cat /dev/zero`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			script := `setsid sh -c 'echo "$$" >&2; ` + writer + `' & sleep 0.1; echo done >&2`
			out, elapsed, err := engRun(t, engSh(script), WithLiveOutput(slowWriter(pause), nil))
			for _, pid := range engPids(t, out.Stderr) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			require.NoError(t, err)
			assert.Less(t, elapsed, 100*time.Millisecond+drainGrace+10*pause, "the call waited for many writes past its grace")
		})
	}
}

// A writer in packet mode (O_DIRECT on its end of the pipe) gets each write
// read whole (a read drops what of a packet its buffer cannot hold): the
// capture loses no byte of packets that do not divide the capture's halves.
func TestCaptureTailPackets(t *testing.T) {
	pr, pw, s := pumpedStream(t)
	const packet = 3000
	full := engSeq(60_000)[:MaxStreamOutput/2+60*packet]
	_, err := pw.Write([]byte(full[:MaxStreamOutput/2]))
	require.NoError(t, err)
	require.True(t, s.pump(pr.Fd()))
	require.True(t, s.capture.headFull())
	flags, err := unix.FcntlInt(pw.Fd(), unix.F_GETFL, 0)
	require.NoError(t, err)
	_, err = unix.FcntlInt(pw.Fd(), unix.F_SETFL, flags|unix.O_DIRECT)
	require.NoError(t, err)
	for i := MaxStreamOutput / 2; i < len(full); i += packet {
		_, err := pw.Write([]byte(full[i : i+packet]))
		require.NoError(t, err)
		require.True(t, s.pump(pr.Fd()))
	}
	require.NoError(t, pw.Close())
	require.False(t, s.pump(pr.Fd()), "EOF ends the stream")
	assert.Equal(t, int64(len(full)), s.capture.total)
	assert.True(t, wantCaptured(full) == s.capture.String(), "the capture is what was written")
}

// The same through a call: the command puts its own stdout in packet mode.
func TestCaptureCommandWritesPackets(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	full := engSeq(60_000)[:MaxStreamOutput/2+60*3000]
	f := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(f, []byte(full), 0o644))
	script := `import fcntl, os, sys
fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_DIRECT)
d = open(sys.argv[1], "rb").read()
for i in range(0, len(d), 3000):
    os.write(1, d[i:i+3000])
`
	out, _, err := engRun(t, engCmd("python3", "-c", script, f))
	require.NoError(t, err)
	assert.Equal(t, int64(len(full)), out.StdoutBytes)
	assert.True(t, wantCaptured(full) == out.Stdout, "the capture is what was written")
}

// A process that escaped the kill holds the pipe open after a flood: the
// drain stops at its deadline, and keeps the stream's last bytes, which sat
// in the tail pipe.
func TestCaptureSplicedFloodHeldOpen(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) not installed")
	}
	full := engSeq(400_000)
	f := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(f, []byte(full), 0o644))
	out, elapsed, err := engRun(t, engSh(`setsid sh -c 'echo "$$" >&2; exec sleep 30' & sleep 0.2; cat "$1"`, f))
	for _, pid := range engPids(t, out.Stderr) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	require.NoError(t, err)
	assert.Less(t, elapsed, 3*time.Second, "hang check")
	assert.Equal(t, int64(len(full)), out.StdoutBytes)
	assert.Equal(t, wantCaptured(full), out.Stdout)
}

// A stream whose reads fill the buffer gets a 1 MiB pipe where the engine
// polls the pipes and splices the backlog from then on; one that never backs
// up, one that feeds a live writer (every byte is read), and one drained by
// a goroutine (its reads are not sized to the pipe: see enlarge) keep the
// size they had.
func TestDrainEnlargesBackedUpPipe(t *testing.T) {
	t.Parallel()
	for way, d := range drainWays {
		for _, written := range []int{100, 64 << 10} {
			for _, live := range []io.Writer{nil, io.Discard} {
				pr, pw, err := d.pipe()
				require.NoError(t, err)
				initial := pipeSize(t, pr)
				_, err = pw.Write(make([]byte, written))
				require.NoError(t, err)
				require.NoError(t, pw.Close())
				s := newStream(pr, live)
				d.drain(s)
				s.close()
				want := initial
				if written == 64<<10 && live == nil && way == "poll" {
					want = max(initial, 1<<20)
				}
				assert.Equal(t, want, pipeSize(t, pr), "%s: %d bytes written, live writer %v", way, written, live)
				pr.Close()
			}
		}
	}
}

func pipeSize(t *testing.T, f *os.File) int {
	rc, err := f.SyscallConn()
	require.NoError(t, err)
	var size int
	require.NoError(t, rc.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }))
	require.NoError(t, err)
	return size
}

// A stream's read end is non-blocking. Where the engine polls the pipes
// itself, the read end stays out of Go's poller; elsewhere it is in it, so
// that its reads take a deadline. The write end, the child's stdout or
// stderr, is blocking and stays out of the poller.
func TestCapturePipeEnds(t *testing.T) {
	r, w, err := capturePipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	// Through SyscallConn: Fd would put a descriptor Go made non-blocking
	// back into blocking mode.
	fcntl := func(f *os.File, cmd int) int {
		rc, err := f.SyscallConn()
		require.NoError(t, err)
		var v int
		require.NoError(t, rc.Control(func(fd uintptr) {
			v, err = unix.FcntlInt(fd, cmd, 0)
		}))
		require.NoError(t, err)
		return v
	}
	assert.NotZero(t, fcntl(r, unix.F_GETFL)&unix.O_NONBLOCK, "read end")
	assert.Zero(t, fcntl(w, unix.F_GETFL)&unix.O_NONBLOCK, "write end")
	assert.NotZero(t, fcntl(r, unix.F_GETFD)&unix.FD_CLOEXEC, "read end")
	assert.NotZero(t, fcntl(w, unix.F_GETFD)&unix.FD_CLOEXEC, "write end")
	assert.ErrorIs(t, w.SetWriteDeadline(time.Now()), os.ErrNoDeadline, "the write end is not in the poller")

	if pidfdUsable() {
		assert.ErrorIs(t, r.SetReadDeadline(time.Now()), os.ErrNoDeadline, "the read end is not in the poller")
		return
	}
	require.NoError(t, r.SetReadDeadline(time.Now().Add(10*time.Millisecond)))
	_, err = r.Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, r.SetReadDeadline(time.Time{}))
	b := make([]byte, 2)
	n, err := r.Read(b)
	require.NoError(t, err)
	assert.Equal(t, "x", string(b[:n]))
}

func init() {
	drainWays["poll"] = drainWay{unpolledPipe, func(s *stream) { follow(-1, -1, []*stream{s}, 0, nil) }}
}

// unpolledPipe is a pipe as capturePipe makes it where the engine polls the
// pipes itself: its read end is non-blocking and out of Go's poller.
func unpolledPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	r = os.NewFile(uintptr(p[0]), "|0") // blocking still: out of the poller
	if err := unix.SetNonblock(p[0], true); err != nil {
		r.Close()
		unix.Close(p[1])
		return nil, nil, err
	}
	return r, os.NewFile(uintptr(p[1]), "|1"), nil
}

// slowWriter is a live writer that takes its value's time over every write
// and never fails.
type slowWriter time.Duration

func (w slowWriter) Write(p []byte) (int, error) {
	time.Sleep(time.Duration(w))
	return len(p), nil
}

// Once the drain grace is over, the last look at the pipe takes what it
// holds then, not what a process that escaped the kill keeps adding: with a
// live writer slower than the flood, reading until the pipe is empty never
// ended.
func TestCaptureSweepBoundedUnderEscapedFlood(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) not installed")
	}
	p := engSh(`setsid sh -c 'echo "$$" >&2; exec timeout 20 cat /dev/zero' & sleep 0.3; echo done >&2`)
	out, elapsed, err := engRun(t, p, WithLiveOutput(slowWriter(time.Millisecond), nil))
	for _, pid := range engPids(t, out.Stderr) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	require.NoError(t, err)
	assert.Less(t, elapsed, 5*time.Second, "hang check: the command exited at 0.3 s")
	assert.Contains(t, out.Stderr, "done")
	assert.True(t, out.StdoutTruncated)
}
