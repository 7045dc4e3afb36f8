//go:build linux && cgo

package sandboxexec

// A host-given stdin cannot be written through, whatever file it is.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A file given as stdin that the command could write through (open for
// writing, or a socket, or a pipe it could open anew for writing) would take
// it past the sandbox, which checks files when they are opened. A file or
// device open for writing is opened anew for reading only, at the same
// offset, which the host's file takes over; a socket or a pipe is copied
// through a pipe, and only while the call lasts, so that what the host reads
// from it next is its own. A read-only file is handed over as it is, and so
// is any file without a sandbox.
func TestLinuxStdinFileCannotBeWritten(t *testing.T) {
	requireSandbox(t)
	roots := []string{t.TempDir()}
	script := lxSh(`read line; echo "read $line"; echo written >&0 && echo "wrote"; echo forged >/proc/self/fd/0 && echo "forged"; test -t 0 && echo "tty"; readlink /proc/self/fd/0`)

	t.Run("file open for writing", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.WriteFile(outside, []byte("input\nmore\n"), 0o644))
		rw, err := os.OpenFile(outside, os.O_RDWR, 0)
		require.NoError(t, err)
		defer rw.Close()
		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(rw))
		require.NoError(t, err)
		// Opened anew through a read-only mount of its own, which no
		// namespace holds: its path reads "/" (see TestLinuxStdinMetadata).
		assert.Equal(t, "read input\n/\n", out.Stdout, "stderr: %s", out.Stderr)
		got, err := os.ReadFile(outside)
		require.NoError(t, err)
		assert.Equal(t, "input\nmore\n", string(got), "the file outside the roots is unchanged")
		off, err := rw.Seek(0, io.SeekCurrent)
		require.NoError(t, err)
		assert.EqualValues(t, len("input\n"), off, "the host's offset is where the command stopped reading")

		// Without a sandbox, os/exec's way: the file as it is.
		_, err = rw.Seek(0, io.SeekStart)
		require.NoError(t, err)
		out, err = ProcessExecToolCall(context.Background(), ExecParams{Command: script}, SandboxNone, nil, SandboxPolicy{}, WithStdin(rw))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "wrote")
	})

	t.Run("file open for reading", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "input")
		require.NoError(t, os.WriteFile(outside, []byte("input\n"), 0o644))
		ro, err := os.Open(outside)
		require.NoError(t, err)
		defer ro.Close()
		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(ro))
		require.NoError(t, err)
		assert.Equal(t, "read input\n/\n", out.Stdout, "stderr: %s", out.Stderr)

		// Where the rest of the host is writable anyway, the file as it is.
		_, err = ro.Seek(0, io.SeekStart)
		require.NoError(t, err)
		out, err = lxRun(t, lxSh(`readlink /proc/self/fd/0`), roots, SandboxPolicy{FullDiskWriteAccess: true}, WithStdin(ro))
		require.NoError(t, err)
		assert.Equal(t, outside+"\n", out.Stdout, "stderr: %s", out.Stderr)
	})

	t.Run("socket", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}()
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		peer := <-accepted
		require.NotNil(t, peer)
		defer peer.Close()
		sock, err := conn.(*net.TCPConn).File()
		require.NoError(t, err)
		defer sock.Close()
		_, err = peer.Write([]byte("input\n"))
		require.NoError(t, err)

		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(sock))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "read input\n")
		assert.NotContains(t, out.Stdout, "wrote")
		assert.Contains(t, out.Stdout, "pipe:") // the copy's, which goes nowhere else

		// Nothing reached the peer, and what the peer sends now is the
		// host's to read.
		_, err = peer.Write([]byte("for the host"))
		require.NoError(t, err)
		buf := make([]byte, 64)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "for the host", string(buf[:n]))
		peer.(*net.TCPConn).SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _ = peer.Read(buf)
		assert.Zero(t, n, "the command sent %q", buf[:n])
	})

	t.Run("pipe", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		require.NoError(t, err)
		defer pr.Close()
		defer pw.Close()
		_, err = pw.Write([]byte("input\n"))
		require.NoError(t, err)
		out, err := lxRun(t, script, roots, SandboxPolicy{}, WithStdin(pr))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "read input\n")

		// What the command wrote to a new open of its stdin went into the
		// copy's pipe, not the host's.
		_, err = pw.Write([]byte("for the host"))
		require.NoError(t, err)
		pr.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, err := pr.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "for the host", string(buf[:n]))
	})

	t.Run("terminal open for writing", func(t *testing.T) {
		master, tty := lxOpenPty(t)
		out, err := lxRun(t, lxSh(`echo written >&0 && echo "wrote"; test -t 0 && echo "tty"`), roots, SandboxPolicy{}, WithStdin(tty))
		require.NoError(t, err)
		assert.Equal(t, "tty\n", out.Stdout, "stderr: %s", out.Stderr)

		// The host's next line is the host's.
		_, err = master.Write([]byte("for the host\n"))
		require.NoError(t, err)
		line, err := bufio.NewReader(tty).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "for the host\n", line)
	})
}

// More cases of a file given as stdin in a sandbox: a file open for writing
// only is not read (the command could not read it without the sandbox
// either); a pseudo-terminal's master, which a new open would turn into a
// new terminal, is copied; a pipe that another call, or the host, reads at
// the same time is not read once the call is over.
func TestLinuxStdinFileKinds(t *testing.T) {
	requireSandbox(t)
	roots := []string{t.TempDir()}

	t.Run("file open for writing only", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret")
		require.NoError(t, os.WriteFile(secret, []byte("secret\n"), 0o644))
		wo, err := os.OpenFile(secret, os.O_WRONLY, 0)
		require.NoError(t, err)
		defer wo.Close()
		out, err := lxRun(t, lxSh(`cat; echo "done"`), roots, SandboxPolicy{}, WithStdin(wo))
		require.NoError(t, err)
		assert.Equal(t, "done\n", out.Stdout)
	})

	t.Run("memfd open for reading", func(t *testing.T) {
		// A file on an internal mount, which Landlock does not check: a
		// new open of /proc/self/fd/0 would give write access to it.
		mfd, err := unix.MemfdCreate("sandboxexec-test", unix.MFD_CLOEXEC)
		require.NoError(t, err)
		defer unix.Close(mfd)
		_, err = unix.Write(mfd, []byte("original\n"))
		require.NoError(t, err)
		ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", mfd))
		require.NoError(t, err)
		defer ro.Close()
		out, err := lxRun(t, lxSh(`read line; echo "read $line"; echo PWNED >/proc/self/fd/0 && echo "wrote"`), roots, SandboxPolicy{}, WithStdin(ro))
		require.NoError(t, err)
		assert.Contains(t, out.Stdout, "read original\n", "stderr: %s", out.Stderr)
		// (What it wrote went into the copy's pipe.)
		buf := make([]byte, 64)
		n, err := unix.Pread(mfd, buf, 0)
		require.NoError(t, err)
		assert.Equal(t, "original\n", string(buf[:n]))
	})

	t.Run("terminal master", func(t *testing.T) {
		master, tty := lxOpenPty(t)
		_, err := tty.Write([]byte("hello\n"))
		require.NoError(t, err)
		p := ExecParams{Command: lxSh(`read line; echo "got $line"`), TimeoutMs: ptrU64Linux(5000)}
		out, err := lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(master))
		require.NoError(t, err)
		assert.False(t, out.TimedOut, "the command waited on a new terminal")
		assert.Contains(t, out.Stdout, "got hello")
	})

	t.Run("terminal master open for reading only", func(t *testing.T) {
		// Its TIOCSIG would signal the terminal's foreground processes,
		// the host's: the command gets a copy.
		master, err := os.OpenFile("/dev/ptmx", os.O_RDONLY|unix.O_NOCTTY, 0)
		if err != nil {
			t.Skipf("no pseudo-terminals here: %v", err)
		}
		defer master.Close()
		script := `import errno, fcntl, signal
try:
    fcntl.ioctl(0, 0x40045436, signal.SIGINT)  # TIOCSIG
    print("signalled")
except OSError as e:
    print(errno.errorcode[e.errno])`
		p := ExecParams{Command: []string{lxPython(t), "-c", script}, TimeoutMs: ptrU64Linux(5000)}
		out, err := lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(master))
		require.NoError(t, err)
		assert.Equal(t, "ENOTTY\n", out.Stdout, "stderr: %s", out.Stderr)
	})

	t.Run("terminal master read by the host too", func(t *testing.T) {
		// The host reads the master while the copy does: where it takes
		// what the copy's poll saw, the copy's read blocks until the
		// terminal gives more, and the call must come back all the same
		// (found in review: it hung in 5 of 15).
		for i := range 15 {
			master, tty := lxOpenPty(t)
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // the terminal's other end, typing for 10 ms or so
				defer wg.Done()
				for range 200 {
					tty.Write([]byte("x"))
					time.Sleep(50 * time.Microsecond)
				}
			}()
			go func() { // the host's own reader of the master
				defer wg.Done()
				buf := make([]byte, 64)
				for !stop.Load() {
					if _, err := master.Read(buf); err != nil {
						return
					}
				}
			}()
			// The typing is over before the command is: nothing unblocks
			// a read that lost the race for the last of it.
			p := ExecParams{Command: []string{"sleep", "0.1"}, TimeoutMs: ptrU64Linux(5000)}
			done := make(chan error, 1)
			var out ExecToolCallOutput
			go func() {
				var err error
				out, err = lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(master))
				done <- err
			}()
			select {
			case err := <-done:
				require.NoError(t, err)
				assert.False(t, out.TimedOut, "iteration %d", i)
			case <-time.After(10 * time.Second):
				stop.Store(true)
				t.Fatalf("iteration %d: the call has not returned in 10 s", i)
			}
			stop.Store(true)
			tty.Close() // the master's reads end (EIO), the copy's too
			wg.Wait()
		}
	})

	t.Run("eventfd read by the host too", func(t *testing.T) {
		// An anonymous inode, of no file kind: its read blocks as a
		// terminal's does (found in review: the call hung until the next
		// write).
		for i := range 15 {
			efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
			require.NoError(t, err)
			f := os.NewFile(uintptr(efd), "eventfd")
			one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // a few events, over before the command is
				defer wg.Done()
				for range 10 {
					unix.Write(efd, one)
					time.Sleep(2 * time.Millisecond)
				}
			}()
			go func() { // the host's own reader
				defer wg.Done()
				buf := make([]byte, 8)
				for !stop.Load() {
					fds := []unix.PollFd{{Fd: int32(efd), Events: unix.POLLIN}}
					if n, _ := unix.Poll(fds, 10); n > 0 {
						unix.Read(efd, buf)
					}
				}
			}()
			p := ExecParams{Command: []string{"sleep", "0.1"}, TimeoutMs: ptrU64Linux(5000)}
			done := make(chan error, 1)
			go func() {
				_, err := lxRunParams(t, p, roots, SandboxPolicy{}, WithStdin(f))
				done <- err
			}()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				stop.Store(true)
				unix.Write(efd, one)
				t.Fatalf("iteration %d: the call has not returned in 10 s", i)
			}
			// The host's reader, and a copy, may be blocked in a read:
			// events until both have ended.
			stop.Store(true)
			readers := make(chan struct{})
			go func() { wg.Wait(); close(readers) }()
			for ended := false; !ended; {
				unix.Write(efd, one)
				select {
				case <-readers:
					ended = true
				case <-time.After(10 * time.Millisecond):
				}
			}
			unix.Write(efd, one)
			time.Sleep(10 * time.Millisecond)
			f.Close()
		}
	})

	t.Run("pipe fed while the call ends", func(t *testing.T) {
		// The copy may have polled input just before the command ended: it
		// must be over when the call returns, or it reads what the host
		// writes next (found in review, with one P: the copier had not run
		// yet when the call returned).
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		for i := range 20 {
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			var stop atomic.Bool
			fed := make(chan struct{})
			go func() {
				defer close(fed)
				block := bytes.Repeat([]byte("Y"), 512)
				for !stop.Load() {
					pw.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
					pw.Write(block)
					runtime.Gosched()
				}
			}()
			_, err = lxRun(t, []string{"head", "-c", "20000"}, roots, SandboxPolicy{}, WithStdin(pr))
			require.NoError(t, err)
			stack := make([]byte, 1<<20)
			stack = stack[:runtime.Stack(stack, true)]
			require.NotContains(t, string(stack), "copyFromFD", "iteration %d: the copy outlived the call", i)
			stop.Store(true)
			<-fed
			// What the host writes now is the host's to read. (Fd makes
			// the file blocking: once.)
			fd := int(pr.Fd())
			require.NoError(t, unix.SetNonblock(fd, true))
			for buf := make([]byte, 1<<16); ; {
				if n, _ := unix.Read(fd, buf); n <= 0 {
					break
				}
			}
			require.NoError(t, pw.SetWriteDeadline(time.Time{}))
			_, err = pw.Write([]byte("for the host"))
			require.NoError(t, err)
			buf := make([]byte, 64)
			n, err := unix.Read(fd, buf)
			require.NoError(t, err)
			assert.Equal(t, "for the host", string(buf[:n]))
			pr.Close()
			pw.Close()
		}
	})

	t.Run("pipe read by two calls", func(t *testing.T) {
		for range 5 {
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			stop := make(chan struct{})
			fed := make(chan struct{})
			go func() {
				defer close(fed)
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
						pw.Write([]byte{'.'})
					}
				}
			}()
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := lxRun(t, lxSh(`sleep 0.2`), roots, SandboxPolicy{}, WithStdin(pr))
					assert.NoError(t, err)
				}()
			}
			wg.Wait()
			close(stop)
			<-fed
			// Drain what the calls left (pr is blocking now: the call took
			// its descriptor), then the host's next bytes are its.
			fd := int(pr.Fd())
			require.NoError(t, unix.SetNonblock(fd, true))
			buf := make([]byte, 4096)
			for {
				if n, _ := unix.Read(fd, buf); n <= 0 {
					break
				}
			}
			_, err = pw.Write([]byte("for the host"))
			require.NoError(t, err)
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
			require.NoError(t, err)
			require.Equal(t, 1, n, "a copier of a finished call took the host's bytes")
			n, err = unix.Read(fd, buf)
			require.NoError(t, err, "a copier of a finished call took the host's bytes")
			assert.Equal(t, "for the host", string(buf[:n]))
			pr.Close()
			pw.Close()
		}
	})
}

// lxOpenPty opens a pseudo-terminal: its master, and its terminal open for
// reading and writing, as an interactive stdin is.
func lxOpenPty(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	return m, tty
}

// A root command cannot change the metadata of the file it was given as
// stdin: the file is on the host's mount, which the call's read-only view
// of the host does not cover, so it is opened anew through a read-only
// mount of its own (the null device too). Through fd 0, and through
// /proc/self/fd/0, chmod, chown, utimes and xattrs fail with EROFS, and the
// file is unchanged.
func TestLinuxStdinMetadata(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("a non-root command has no capability over files it does not own")
	}
	roots := []string{lxRealDir(t)}
	const body = `
attempt("fchmod", lambda: os.chmod(0, int(sys.argv[1], 8)))
attempt("fchown", lambda: os.chown(0, int(sys.argv[2]), int(sys.argv[2])))
attempt("futimes", lambda: os.utime(0, (946684800, 946684800)))
attempt("fsetxattr", lambda: os.setxattr(0, "trusted.sbx", b"x"))
attempt("chmod_proc", lambda: os.chmod("/proc/self/fd/0", int(sys.argv[1], 8)))
attempt("read", lambda: os.read(0, 1))
`
	type snapshot struct {
		mode, uid, gid uint32
		mtime, ctime   unix.Timespec
		xattr          string
	}
	snap := func(path string) snapshot {
		var st unix.Stat_t
		require.NoError(t, unix.Stat(path, &st))
		buf := make([]byte, 64)
		n, _ := unix.Getxattr(path, "trusted.sbx", buf)
		return snapshot{st.Mode, st.Uid, st.Gid, st.Mtim, st.Ctim, string(buf[:max(n, 0)])}
	}
	run := func(t *testing.T, path string, flag int, mode, uid string) {
		t.Helper()
		f, err := os.OpenFile(path, flag, 0)
		require.NoError(t, err)
		defer f.Close()
		before := snap(path)
		out, err := lxRun(t, lxPy(t, body, mode, uid), roots, SandboxPolicy{}, WithStdin(f))
		lxDeniedOrNil(t, out, err)
		require.Empty(t, out.Stderr)
		res := lxResults(out.Stdout)
		for _, op := range []string{"fchmod", "fchown", "futimes", "fsetxattr", "chmod_proc"} {
			assert.Equal(t, "EROFS", res[op], "%s on the stdin file: %s", op, out.Stdout)
		}
		assert.Equal(t, "OK", res["read"])
		assert.Equal(t, before, snap(path), "the stdin file is unchanged")
	}

	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "input")
		require.NoError(t, os.WriteFile(path, []byte("input\n"), 0o644))
		require.NoError(t, unix.Setxattr(path, "trusted.sbx", []byte("host"), 0))
		run(t, path, os.O_RDONLY, "777", "65534")
		run(t, path, os.O_RDWR, "777", "65534")
	})
	t.Run("null device node", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "null")
		require.NoError(t, unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
		run(t, path, os.O_RDONLY, "600", "65534")
	})
	t.Run("terminal", func(t *testing.T) {
		master, tty := lxOpenPty(t)
		_, err := master.Write([]byte("x\n"))
		require.NoError(t, err)
		run(t, tty.Name(), os.O_RDWR, "666", "65534")
	})
	t.Run("default null device", func(t *testing.T) {
		// The host's own /dev/null: only changes that change nothing
		// (its mode and owner as they are) are tried.
		var st unix.Stat_t
		require.NoError(t, unix.Stat(os.DevNull, &st))
		out, err := lxRun(t, lxPy(t, `
attempt("fchmod", lambda: os.chmod(0, int(sys.argv[1], 8)))
attempt("fchown", lambda: os.chown(0, -1, -1))
attempt("null", lambda: os.stat(0).st_rdev == os.makedev(1, 3) or sys.exit("not the null device"))
`, strconv.FormatUint(uint64(st.Mode&0o7777), 8)), roots, SandboxPolicy{})
		lxDeniedOrNil(t, out, err)
		res := lxResults(out.Stdout)
		assert.Equal(t, "EROFS", res["fchmod"], "%s%s", out.Stdout, out.Stderr)
		assert.Equal(t, "EROFS", res["fchown"])
		assert.Equal(t, "OK", res["null"])
	})
}
