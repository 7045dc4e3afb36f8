module github.com/agentbox/sandboxexec

go 1.22

require (
	github.com/seccomp/libseccomp-golang v0.11.1
	github.com/stretchr/testify v1.11.1
	golang.org/x/net v0.35.0
	golang.org/x/sys v0.30.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	golang.org/x/text v0.22.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
