package sandboxexec

// fileIdentity is not kept on Windows, whose calls resolve no policy for
// a sandbox: nothing is cached.
type fileIdentity struct{}

func lstatIdentity(string) (id fileIdentity, ok, absent bool) { return fileIdentity{}, false, false }

func readRegularIdentity(path string, max int64) ([]byte, fileIdentity, bool, error) {
	b, err := readRegular(path, max)
	return b, fileIdentity{}, false, err
}
