package sandboxexec

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// captureModel is what a capture of limit bytes must hold after being fed
// data, whatever the chunking: all of it when it fits, else the first
// limit/2 bytes, a marker line and the last limit-limit/2 bytes.
func captureModel(data []byte, limit int) (text string, omitted int64) {
	if len(data) <= limit {
		return string(data), 0
	}
	head, tail := limit/2, limit-limit/2
	omitted = int64(len(data) - limit)
	marker := fmt.Sprintf("\n[... sandboxexec: %d of %d bytes omitted ...]\n", omitted, len(data))
	return string(data[:head]) + marker + string(data[len(data)-tail:]), omitted
}

// capturePattern is n bytes that differ from one position to the next, so
// that a byte kept from the wrong place shows.
func capturePattern(n int) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[(i*7+i/len(alphabet))%len(alphabet)]
	}
	return b
}

// feedCapture writes data to c in chunks of the given sizes (the last one
// repeated until data runs out), checking every Write's result.
func feedCapture(t *testing.T, c *capture, data []byte, chunks []int) {
	t.Helper()
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(chunks) > 0 {
			n = min(chunks[min(i, len(chunks)-1)], len(data))
		}
		w, err := c.Write(data[:n])
		require.NoError(t, err)
		require.Equal(t, n, w)
		data = data[n:]
	}
}

func TestCaptureTable(t *testing.T) {
	t.Parallel()
	const limit = 16 // head 8, tail 8
	tests := []struct {
		name   string
		limit  int
		size   int
		chunks []int // nil: one Write of everything
	}{
		{"empty", limit, 0, nil},
		{"one byte", limit, 1, nil},
		{"fills head only", limit, limit / 2, nil},
		{"head plus one", limit, limit/2 + 1, nil},
		{"limit-1", limit, limit - 1, nil},
		{"limit", limit, limit, nil},
		{"limit+1", limit, limit + 1, nil},
		{"limit-1 byte by byte", limit, limit - 1, []int{1}},
		{"limit byte by byte", limit, limit, []int{1}},
		{"limit+1 byte by byte", limit, limit + 1, []int{1}},
		{"chunk straddles head/tail seam", limit, limit + 5, []int{5, 6, 100}},
		{"chunk ends exactly at seam", limit, limit + 3, []int{limit / 2, 1, 100}},
		{"first chunk bigger than head, smaller than limit", limit, 40, []int{12, 3}},
		{"single write far past limit", limit, 1000, nil},
		{"single write head+exactly tail", limit, limit, []int{limit}},
		{"write of exactly tail size after head", limit, limit/2 + limit/2 + limit/2, []int{limit / 2, limit / 2, limit / 2}},
		{"write bigger than tail after head", limit, 100, []int{limit / 2, limit/2 + 1, 7}},
		{"ring wraps once", limit, limit + limit/2 + 3, []int{3}},
		{"ring wraps many times", limit, 1000, []int{3}},
		{"ring wraps with uneven chunks", limit, 997, []int{7, 5, 1, 9, 13}},
		{"odd limit", 11, 30, []int{2}},
		{"odd limit exact", 11, 11, []int{4}},
		{"odd limit plus one", 11, 12, nil},
		{"limit 1 (no head)", 1, 5, []int{1}},
		{"limit 1 fits", 1, 1, nil},
		{"limit 0 keeps nothing", 0, 5, []int{2}},
		{"limit 2", 2, 9, []int{3}},
		{"real limit, 1 MiB in 64 KiB reads", MaxStreamOutput, 1 << 20, []int{64 << 10}},
		{"real limit, limit+1 in odd reads", MaxStreamOutput, MaxStreamOutput + 1, []int{4093}},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := capturePattern(tc.size)
			c := newCapture(tc.limit)
			feedCapture(t, c, data, tc.chunks)

			want, wantOmitted := captureModel(data, tc.limit)
			assert.Equal(t, int64(tc.size), c.total, "total")
			assert.Equal(t, wantOmitted, c.omitted(), "omitted")
			assert.Equal(t, want, c.String())
			assert.LessOrEqual(t, len(c.head), tc.limit/2, "head over its limit")
			assert.LessOrEqual(t, len(c.ring), tc.limit-tc.limit/2, "ring over its limit")
		})
	}
}

// TestCaptureEveryChunking checks every chunk size from 1 to past the limit,
// and random chunkings, against the model for sizes around the limit.
func TestCaptureEveryChunking(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	for _, limit := range []int{1, 2, 7, 8, 16} {
		for size := 0; size <= 3*limit+2; size++ {
			data := capturePattern(size)
			want, wantOmitted := captureModel(data, limit)
			for chunk := 1; chunk <= limit+2; chunk++ {
				c := newCapture(limit)
				feedCapture(t, c, data, []int{chunk})
				require.Equal(t, want, c.String(), "limit %d size %d chunk %d", limit, size, chunk)
				require.Equal(t, wantOmitted, c.omitted())
			}
			for round := 0; round < 20; round++ {
				var chunks []int
				for n := 0; n < size; {
					k := 1 + rng.Intn(limit+3)
					chunks = append(chunks, k)
					n += k
				}
				c := newCapture(limit)
				feedCapture(t, c, data, chunks)
				require.Equal(t, want, c.String(), "limit %d size %d chunks %v", limit, size, chunks)
			}
		}
	}
}

func TestCaptureMarkerAndUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		limit int
		input string
		want  string
	}{
		{"marker line", 4, "aaXXXXbb", "aa\n[... sandboxexec: 4 of 8 bytes omitted ...]\nbb"},
		{"invalid bytes replaced", 100, "\xff\xfeok", "\uFFFDok"},
		{"valid multibyte kept", 100, "héllo, 世界", "héllo, 世界"},
		// "é" is 2 bytes: the head keeps its first byte only.
		{"rune cut by the head", 8, "abcé" + "0123456789" + "xy", "abc\uFFFD\n[... sandboxexec: 9 of 17 bytes omitted ...]\n89xy"},
		// The tail starts inside "世" (3 bytes).
		{"rune cut by the tail", 4, "ab" + "0123456789" + "世", "ab\n[... sandboxexec: 11 of 15 bytes omitted ...]\n\uFFFD"},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCapture(tc.limit)
			feedCapture(t, c, []byte(tc.input), []int{1})
			got := c.String()
			assert.Equal(t, tc.want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

// TestCaptureMemoryBounded writes far more than the limit and checks that
// the capture's own buffers never outgrow it.
func TestCaptureMemoryBounded(t *testing.T) {
	t.Parallel()
	c := newCapture(MaxStreamOutput)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	for i := 0; i < 256; i++ {                              // 16 MiB
		_, _ = c.Write(chunk)
	}
	assert.Equal(t, int64(16<<20), c.total)
	assert.LessOrEqual(t, cap(c.head), 2*MaxStreamOutput/2, "head capacity")
	assert.Equal(t, MaxStreamOutput-MaxStreamOutput/2, len(c.ring), "ring size")
	assert.Equal(t, int64(16<<20-MaxStreamOutput), c.omitted())
}

type failingWriter struct{ calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	return 0, errors.New("live writer broke")
}

// drainWay is one of the ways the engine reads a stream on this OS: a pipe
// of the kind it reads, and the reading, to EOF.
type drainWay struct {
	pipe  func() (r, w *os.File, err error)
	drain func(*stream)
}

// drainWays are this OS's drainWays, by name.
var drainWays = map[string]drainWay{"goroutine": {os.Pipe, (*stream).drain}}

// TestDrainLiveWriterFails checks that a live writer that fails is dropped
// while the capture goes on to EOF.
func TestDrainLiveWriterFails(t *testing.T) {
	t.Parallel()
	for way, d := range drainWays {
		r, w, err := d.pipe()
		require.NoError(t, err)
		go func() {
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "line %d\n", i)
			}
			w.Close()
		}()
		live := &failingWriter{}
		s := newStream(r, live)
		d.drain(s)
		assert.Equal(t, "line 0\nline 1\nline 2\n", s.capture.String(), way)
		assert.Equal(t, 1, live.calls, "%s: a failed live writer must not be called again", way)
		s.close()
		r.Close()
	}
}

func TestDrainLiveWriterSeesAll(t *testing.T) {
	t.Parallel()
	data := capturePattern(3 * MaxStreamOutput)
	want, _ := captureModel(data, MaxStreamOutput)
	for way, d := range drainWays {
		r, w, err := d.pipe()
		require.NoError(t, err)
		go func() {
			w.Write(data)
			w.Close()
		}()
		var live strings.Builder
		s := newStream(r, &live)
		d.drain(s)
		assert.Equal(t, string(data), live.String(), way)
		assert.Equal(t, want, s.capture.String(), way)
		s.close()
		r.Close()
	}
}

// TestDrainAfterDeadline: when the drain grace ran out before the drain
// goroutine got to read (a loaded host), what the pipe already holds must
// still be read, and the drain must still end although the writer is open.
func TestDrainAfterDeadline(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close() // held open, as by a process that escaped the kill
	_, err = w.Write([]byte("written before the exit\n"))
	require.NoError(t, err)
	require.NoError(t, r.SetReadDeadline(time.Now().Add(-time.Second)))

	s := newStream(r, nil)
	defer s.close()
	start := time.Now()
	s.drain()
	assert.Equal(t, "written before the exit\n", s.capture.String())
	assert.Less(t, time.Since(start), time.Second, "the drain does not wait for a writer that stays open")
}
