//go:build linux && cgo

package linuxspawn

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A descriptor that does not fit under this process's open-file limit is
// reported as EMFILE: it read "no descriptor in the message (<nil>)".
func TestReceiveFDAtTheLimit(t *testing.T) {
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(pair[0])
	defer syscall.Close(pair[1])
	require.NoError(t, syscall.Sendmsg(pair[0], []byte{0}, syscall.UnixRights(pair[0]), nil, 0))

	var was syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was))
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was)
	low := was
	low.Cur = uint64(max(pair[0], pair[1]) + 8)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	var filler []int
	defer func() {
		for _, fd := range filler {
			syscall.Close(fd)
		}
	}()
	for {
		fd, err := syscall.Dup(pair[1])
		if err != nil {
			require.ErrorIs(t, err, syscall.EMFILE)
			break
		}
		filler = append(filler, fd)
	}
	fd, err := receiveFD(pair[1])
	assert.Equal(t, -1, fd)
	assert.ErrorIs(t, err, syscall.EMFILE)
}
