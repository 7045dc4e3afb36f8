//go:build linux

package sandboxexec

import (
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

// A writer in packet mode (O_DIRECT on its pipe) makes a pipe buffer of
// every write: one-byte writes fill the tail pipe's slots long before its
// bytes reach the tail, and the drain goes back to reading, still exact.
func TestCaptureSpliceFallsBackOnPacketWrites(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	const size = 200_000
	full := engSeq(40_000)[:size]
	script := `import fcntl, os, sys
fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_DIRECT)
data = open(sys.argv[1], "rb").read()
for i in range(len(data)):
    os.write(1, data[i:i+1])
`
	f := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(f, []byte(full), 0o644))
	before := spliceFallBacks.Load()
	out, _, err := engRun(t, engCmd(python, "-c", script, f))
	require.NoError(t, err)
	require.Equal(t, 0, out.ExitCode, out.Stderr)
	require.Equal(t, int64(size), out.StdoutBytes)
	require.Equal(t, wantCaptured(full), out.Stdout)
	assert.Greater(t, spliceFallBacks.Load(), before, "the drain fell back to reading")
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
