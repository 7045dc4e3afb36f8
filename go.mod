module github.com/agentbox/sandboxexec

go 1.22

require golang.org/x/sys v0.30.0
