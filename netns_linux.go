//go:build linux && cgo

package sandboxexec

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// proxyPort is where the call's proxy listens in the command's network
// namespace, which has nothing else: any port is free there.
const proxyPort = 3128

var proxyAddr = "127.0.0.1:" + strconv.Itoa(proxyPort)

// serveProxy serves the listener fd (made in the command's namespace) with
// p, from this process's goroutines, which dial out from the host's.
func serveProxy(p callProxy, fd int) error {
	f := os.NewFile(uintptr(fd), "proxy listener")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("sandboxexec: the proxy's listener: %w", err)
	}
	go p.Serve(l)
	return nil
}

// abandon kills and reaps a command that started but cannot be run as
// asked.
func abandon(pid, pidfd int) {
	unix.Kill(-pid, unix.SIGKILL) // its process group, without a PID namespace
	unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
}

// A network namespace costs about 0.7 ms to make and set up (clone with
// CLONE_NEWNET, then lo up), most of a call's cost under AllowedDomains.
// A host with CAP_SYS_ADMIN makes the next call's namespace, with its
// proxy listener, ahead of time on a thread of its own, and the child
// joins it: each namespace still serves one call only. Where none is
// ready (calls in flight at once, or a user namespace needed), the child
// makes its own as before.
type readyNetns struct {
	ns       int // the namespace, O_CLOEXEC
	listener int // listening on proxyAddr in it
}

var netnsSpare struct {
	sync.Mutex
	ready  []readyNetns
	making bool
	done   chan struct{} // closed when the current making ends
}

// netnsSpareCount is how many namespaces are kept ready.
const netnsSpareCount = 2

// takeNetns returns a namespace made ahead, if one is ready, and starts
// making the next.
func takeNetns() (readyNetns, bool) {
	netnsSpare.Lock()
	defer netnsSpare.Unlock()
	var n readyNetns
	ok := len(netnsSpare.ready) > 0
	if ok {
		n = netnsSpare.ready[0]
		netnsSpare.ready = netnsSpare.ready[1:]
	}
	if !netnsSpare.making {
		netnsSpare.making = true
		netnsSpare.done = make(chan struct{})
		go refillNetns(netnsSpare.done)
	}
	return n, ok
}

func refillNetns(done chan struct{}) {
	defer close(done)
	for {
		netnsSpare.Lock()
		if len(netnsSpare.ready) >= netnsSpareCount {
			netnsSpare.making = false
			netnsSpare.Unlock()
			return
		}
		netnsSpare.Unlock()
		n, err := makeNetns()
		netnsSpare.Lock()
		if err != nil {
			// The children make their own, which reports the error.
			netnsSpare.making = false
			netnsSpare.Unlock()
			return
		}
		netnsSpare.ready = append(netnsSpare.ready, n)
		netnsSpare.Unlock()
	}
}

// waitNetnsSpare waits until no namespace is being made (for tests).
func waitNetnsSpare() {
	netnsSpare.Lock()
	done := netnsSpare.done
	netnsSpare.Unlock()
	if done != nil {
		<-done
	}
}

// makeNetns makes a network namespace with lo up and a listener on
// proxyAddr, from a thread that returns to the host's namespace after; a
// thread that cannot return is not unlocked, so the runtime ends it.
func makeNetns() (readyNetns, error) {
	type result struct {
		n   readyNetns
		err error
	}
	c := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		host, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			c <- result{err: err}
			return
		}
		defer unix.Close(host)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			c <- result{err: fmt.Errorf("unshare: %w", err)}
			return
		}
		n, err := setUpNetns()
		if err := unix.Setns(host, unix.CLONE_NEWNET); err != nil {
			n.close()
			c <- result{err: fmt.Errorf("back to the host's network namespace: %w", err)}
			return // still locked: the thread goes
		}
		runtime.UnlockOSThread()
		c <- result{n, err}
	}()
	r := <-c
	return r.n, r.err
}

// setUpNetns, on a thread in a new network namespace, brings lo up and
// listens on proxyAddr.
func setUpNetns() (readyNetns, error) {
	n := readyNetns{ns: -1, listener: -1}
	fail := func(what string, err error) (readyNetns, error) {
		n.close()
		return readyNetns{ns: -1, listener: -1}, fmt.Errorf("%s: %w", what, err)
	}
	var err error
	if n.ns, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return fail("the new namespace", err)
	}
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail("socket", err)
	}
	ifr, err := unix.NewIfreq("lo")
	if err == nil {
		err = unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr)
	}
	if err == nil {
		ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
		err = unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
	}
	unix.Close(s)
	if err != nil {
		return fail("lo up", err)
	}
	if n.listener, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fail("socket", err)
	}
	if err := unix.SetsockoptInt(n.listener, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("SO_REUSEADDR", err)
	}
	if err := unix.Bind(n.listener, &unix.SockaddrInet4{Port: proxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(n.listener, 128); err != nil {
		return fail("listen", err)
	}
	return n, nil
}

func (n readyNetns) close() {
	if n.ns >= 0 {
		unix.Close(n.ns)
	}
	if n.listener >= 0 {
		unix.Close(n.listener)
	}
}
