package sandboxexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var errNotDir error = syscall.ENOTDIR

// exitedBeforeKill cannot be told on Windows, where a killed process exits
// with killedExitCode, as one that exits by itself may.
func exitedBeforeKill(string, error) bool { return false }

// killedExitCode is the exit code TerminateJobObject gives the processes it
// ends.
const killedExitCode = 1

// startPlain starts req unconfined in a job object of its own, so that the
// command and everything it starts can be killed together: the process is
// created suspended, assigned to the job, and only then resumed, so that
// nothing it starts with CreateProcess escapes the job (which allows no
// breakaway; what WMI, a service or the Task Scheduler starts for it is
// not its child, and is out of reach). Closing the job's last handle kills
// whatever is still in it (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so not even
// a crash of this process leaves the tree running.
//
// The command gets a console of its own, without a window
// (CREATE_NO_WINDOW), as a Unix command gets a session without a
// controlling terminal: on the host's console it could read what the user
// types to the host (CONIN$: a password prompt's, git's or ssh's, takes the
// keys), write over the host's screen (CONOUT$), and send Ctrl+C or
// Ctrl+Break to every process on that console, the host included
// (GenerateConsoleCtrlEvent with group 0), whose default handler exits. A
// host without a console no longer flashes a window for each call either.
func startPlain(req *spawnRequest) (*child, error) {
	sys := &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW,
	}
	if isBatchFile(req.path) {
		// cmd.exe runs the command line, not req.path: see batchCommandLine.
		script, err := batchScriptPath(req.path, req.dir)
		if err != nil {
			return nil, fmt.Errorf("sandboxexec: %w", err)
		}
		if sys.CmdLine, err = batchCommandLine(script, req.argv); err != nil {
			return nil, err
		}
	}
	job, err := newKillOnCloseJob()
	if err != nil {
		return nil, fmt.Errorf("sandboxexec: job object: %w", err)
	}
	p, err := os.StartProcess(req.path, req.argv, &os.ProcAttr{
		Dir:   req.dir,
		Env:   req.env,
		Files: req.stdio[:],
		Sys:   sys,
	})
	if err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("sandboxexec: %w", err)
	}
	if err := adoptAndResume(job, p.Pid); err != nil {
		// The process never ran a user instruction. It is killed through
		// the handle p holds, which a failed OpenProcess cannot take away:
		// the Wait below must never wait on a process left suspended.
		p.Kill()
		windows.CloseHandle(job)
		p.Wait()
		return nil, fmt.Errorf("sandboxexec: %w", err)
	}
	j := &jobHandle{h: job}
	return &child{process: p, killAll: j.kill, release: j.close}, nil
}

// batchScriptPath is the absolute path of the batch file path, which
// lookPath keeps relative to dir where it was given so, without the
// trailing dots and spaces that Windows strips from a file name.
func batchScriptPath(path, dir string) (string, error) {
	p := strings.TrimRight(path, ". ")
	if !filepath.IsAbs(p) && dir != "" && filepath.VolumeName(p) == "" {
		p = filepath.Join(dir, p)
	}
	return filepath.Abs(p)
}

// newKillOnCloseJob creates an unnamed job object whose processes die when
// its last handle is closed.
func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// adoptAndResume puts the suspended process pid into job and resumes it.
// The pid cannot be reused meanwhile: the *os.Process holds a handle to it.
func adoptAndResume(job windows.Handle, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|
		windows.PROCESS_SUSPEND_RESUME|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return fmt.Errorf("assign process %d to its job: %w", pid, err)
	}
	if err := resumeProcess(h, pid); err != nil {
		return fmt.Errorf("resume process %d: %w", pid, err)
	}
	return nil
}

var (
	modntdll            = windows.NewLazySystemDLL("ntdll.dll")
	procNtResumeProcess = modntdll.NewProc("NtResumeProcess")
)

// resumeProcess resumes the threads of a process created suspended: with
// NtResumeProcess when ntdll has it, else thread by thread.
func resumeProcess(h windows.Handle, pid int) error {
	if procNtResumeProcess.Find() == nil {
		r, _, _ := procNtResumeProcess.Call(uintptr(h))
		if r != 0 {
			return windows.NTStatus(r)
		}
		return nil
	}
	return resumeThreads(uint32(pid))
}

// resumeThreads resumes every thread of process pid. A process created
// suspended has one, its main thread.
func resumeThreads(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return err
	}
	if resumed == 0 {
		return errors.New("no thread found")
	}
	return nil
}

// jobHandle is the job of one call. kill and close may race (a
// cancellation's kill can still be running when the call releases), so the
// handle is never used after it is closed.
type jobHandle struct {
	mu     sync.Mutex
	h      windows.Handle
	closed bool
}

// kill ends every process in the job.
func (j *jobHandle) kill() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		windows.TerminateJobObject(j.h, killedExitCode)
	}
}

// close releases the job; anything still in it is killed.
func (j *jobHandle) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		j.closed = true
		windows.CloseHandle(j.h)
	}
}

// checkHostWaits has nothing to check: Windows keeps a process's exit code
// while a handle to it is open.
func checkHostWaits() error { return nil }

// waitCommand waits for the command, then calls exited. Its exit code is as
// Windows reports it (an NTSTATUS such as 0xC0000005 for a crash); Windows
// has no signals. The kill in exited goes through the call's job object,
// which no other process can come to hold.
func waitCommand(c *child, exited func()) (exitCode int, signal string, err error) {
	state, err := c.process.Wait()
	exited()
	if err != nil {
		return 0, "", err
	}
	return state.ExitCode(), "", nil
}

// lookPath finds the program the child will execute. A name with a path
// separator or drive is taken as it is (relative to dir, where the child
// starts); any other name is searched in the PATH of env (the host's PATH if
// env has none), skipping relative entries. Like cmd.exe, a name without an
// extension is tried with each extension of PATHEXT.
func lookPath(name, dir string, env []string) (string, error) {
	exts := pathExts(env)
	if strings.ContainsAny(name, `:\/`) {
		p := name
		if !filepath.IsAbs(p) && dir != "" && filepath.VolumeName(p) == "" {
			p = filepath.Join(dir, p)
		}
		found, err := findExecutable(p, exts)
		if err != nil {
			return "", fmt.Errorf("sandboxexec: %w", &os.PathError{Op: "exec", Path: p, Err: err})
		}
		// Keep the name as given (plus the extension found): the child is
		// started relative to its own directory.
		return name + found[len(p):], nil
	}
	pathList, ok := envLookup(env, "PATH")
	if !ok {
		pathList = os.Getenv("PATH")
	}
	var permErr error
	for _, d := range filepath.SplitList(pathList) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p, err := findExecutable(filepath.Join(d, name), exts)
		if err == nil {
			return p, nil
		}
		if permErr == nil && errors.Is(err, fs.ErrPermission) {
			permErr = &os.PathError{Op: "exec", Path: filepath.Join(d, name), Err: err}
		}
	}
	if permErr != nil {
		return "", fmt.Errorf("sandboxexec: %w", permErr)
	}
	return "", fmt.Errorf("sandboxexec: %w", &exec.Error{Name: name, Err: exec.ErrNotFound})
}

// checkProgramArgs refuses what the command line of program would not pass
// as argv: os.StartProcess quotes the arguments for CommandLineToArgvW, and a
// batch file's cmd.exe parses them otherwise (see checkBatchArgs).
func checkProgramArgs(program string, argv []string) error {
	return checkBatchArgs(program, argv)
}

// envLookup finds key in env; Windows variable names ignore case.
func envLookup(env []string, key string) (string, bool) {
	value, found := "", false
	for _, kv := range env {
		// Skip the leading '=' of the hidden per-drive variables (=C:=C:\x).
		i := strings.IndexByte(kv[min(1, len(kv)):], '=')
		if i < 0 {
			continue
		}
		i += min(1, len(kv))
		if strings.EqualFold(kv[:i], key) {
			value, found = kv[i+1:], true
		}
	}
	return value, found
}

// pathExts is the executable extensions of env's PATHEXT, lower case.
func pathExts(env []string) []string {
	list, ok := envLookup(env, "PATHEXT")
	if !ok {
		list = os.Getenv("PATHEXT")
	}
	var exts []string
	for _, e := range strings.Split(strings.ToLower(list), ";") {
		if e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		exts = append(exts, e)
	}
	if len(exts) == 0 {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}

// findExecutable returns p, or p with an extension from exts, whichever
// names a file. A name that already has an extension is tried as it is
// first.
func findExecutable(p string, exts []string) (string, error) {
	var firstErr error
	try := func(f string) bool {
		fi, err := os.Stat(f)
		if err == nil && !fi.IsDir() {
			return true
		}
		if err == nil {
			err = fs.ErrPermission // a directory cannot be run
		}
		if firstErr == nil || (errors.Is(firstErr, fs.ErrNotExist) && !errors.Is(err, fs.ErrNotExist)) {
			firstErr = underlying(err)
		}
		return false
	}
	if filepath.Ext(p) != "" && try(p) {
		return p, nil
	}
	for _, e := range exts {
		if try(p + e) {
			return p + e, nil
		}
	}
	if firstErr == nil {
		firstErr = fs.ErrNotExist
	}
	return "", firstErr
}

func underlying(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// rawRead never runs on Windows, whose pipes have no read deadlines.
func rawRead(uintptr, []byte) (int, error) { return 0, nil }
