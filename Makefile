# sandboxexec: `make test` checks everything CI checks; `make demo` shows the
# sandbox allowing and denying.

GO ?= go

.PHONY: all deps deps-build cgo-check test fuzz-short fuzz soak demo bench

# Fuzz targets as package:target. Budgets are counts, not times: a timed
# -fuzztime can end in a spurious "context deadline exceeded" from the fuzz
# coordinator on a loaded machine.
FUZZ_TARGETS = .:FuzzExecParamsJSON .:FuzzCapture .:FuzzFilterSecrets .:FuzzResolvePath \
	.:FuzzCreateSeatbeltCommand .:FuzzFilesystemPolicy .:FuzzGitConfig .:FuzzGitScan ./internal/landlock:FuzzHandled \
	./internal/netproxy:FuzzNewMatcher ./internal/netproxy:FuzzReadRequest ./internal/netproxy:FuzzSOCKS
FUZZ_SHORT ?= 3000x
FUZZ_LONG ?= 300000x

# The release go.mod's go line names (go1.22 is the toolchain go1.22.0):
# users vendor this library into their own builds, so the code must compile
# there, not only with the Go at hand. The go command fetches it.
OLDEST_GO := $(shell awk '/^go /{v=$$2; if (split(v, p, ".") == 2) v = v ".0"; print "go" v}' go.mod)

all: test

# The system packages are listed once, in .ci/deps (which .ci/run uses too):
# it installs what is missing when run as root with apt-get, and otherwise
# prints the one command to run. deps is what make test needs, deps-build
# the part make demo needs. Other systems need neither.
deps:
	@sh .ci/deps test
	@$(MAKE) --no-print-directory cgo-check

deps-build:
	@sh .ci/deps build
	@$(MAKE) --no-print-directory cgo-check

# Without cgo the Linux sandbox is not built in (CGO_ENABLED=0 set by hand,
# or no C compiler when go started).
cgo-check:
	@[ "$$(uname -s)" != Linux ] || [ "$$($(GO) env CGO_ENABLED)" = 1 ] || \
		{ echo "cgo is off (CGO_ENABLED=0 or no C compiler): unset CGO_ENABLED, or run: sudo apt-get install -y gcc libc6-dev" >&2; exit 1; }

test: deps
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then \
		echo "gofmt needed on:" >&2; echo "$$unformatted" >&2; exit 1; fi
	$(GO) vet ./...
	$(GO) test -race ./...
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) test -count=1 -run 'WithoutCgo' .
	GOOS=darwin CGO_ENABLED=0 $(GO) vet ./...
	GOOS=windows CGO_ENABLED=0 $(GO) vet ./...
	GOOS=darwin CGO_ENABLED=0 $(GO) test -c -o /dev/null .
	GOOS=windows CGO_ENABLED=0 $(GO) test -c -o /dev/null .
	GOTOOLCHAIN=$(OLDEST_GO) $(GO) vet ./...
	$(MAKE) --no-print-directory fuzz-short

# A few seconds of each fuzz target (make test); make fuzz runs longer.
fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $$t ($(FUZZ_SHORT))"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZ_SHORT) "$${t%%:*}" || exit 1; \
	done

fuzz:
	$(MAKE) --no-print-directory fuzz-short FUZZ_SHORT=$(FUZZ_LONG)

# 10,000 sequential and 1,000 concurrent sandboxed calls; checks that
# goroutines, fds, children and memory come back to their baseline.
soak: deps-build
	SANDBOXEXEC_SOAK=1 $(GO) test -run '^TestSoak$$' -v -timeout 30m .

# Runs examples/sandboxrun under this OS's sandbox: one allowed write, one
# denied write, one denied connection. Each step prints what happened; a
# denied step (or a sandbox this machine lacks) does not fail the target.
demo: deps-build
	@set -u; d="$$(mktemp -d)"; trap 'rm -rf "$$d"' EXIT; \
	mkdir "$$d/root" "$$d/outside"; \
	$(GO) build -o "$$d/sandboxrun" ./examples/sandboxrun || exit 1; \
	step() { echo; echo "== $$1"; shift; printf '$$ sandboxrun'; \
		for a; do case "$$a" in *[!A-Za-z0-9_./=-]*) printf ' "%s"' "$$a";; *) printf ' %s' "$$a";; esac; done; echo; \
		"$$d/sandboxrun" "$$@" 2>&1; echo "-> exit $$?"; }; \
	step "allowed: write inside the writable root" \
		-sandbox auto -w "$$d/root" -- sh -c "echo hello > '$$d/root/file' && cat '$$d/root/file'"; \
	step "denied: write outside the writable roots" \
		-sandbox auto -w "$$d/root" -- sh -c "echo hello > '$$d/outside/file'"; \
	step "denied: network connection without -net" \
		-sandbox auto -timeout 5s -w "$$d/root" -- bash -c "exec 3<>/dev/tcp/127.0.0.1/9 && echo connected"; \
	echo; echo "demo done"

# One table, every row measured alternately in the same run, with ratios to
# the floor rows and PASS/MISS per target. BENCHFLAGS=-quick for a smoke run.
bench: deps-build
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q bubblewrap >/dev/null 2>&1; }; }; } || \
		echo "bubblewrap is not installed and cannot be installed here: its row is skipped"
	$(GO) run ./internal/benchtable $(BENCHFLAGS)
