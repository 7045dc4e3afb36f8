package sandboxexec

import (
	"encoding/json"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptrU64(n uint64) *uint64 { return &n }

func TestExecParamsWireFormat(t *testing.T) {
	t.Parallel()
	var p ExecParams
	require.NoError(t, json.Unmarshal([]byte(`{"command":["ls","-l"],"workdir":"/tmp","timeout":500}`), &p))
	assert.Equal(t, []string{"ls", "-l"}, p.Command)
	assert.Equal(t, "/tmp", p.Workdir)
	require.NotNil(t, p.TimeoutMs)
	assert.Equal(t, uint64(500), *p.TimeoutMs)
	d, ok := p.timeout()
	assert.True(t, ok)
	assert.Equal(t, 500*time.Millisecond, d)
}

func TestExecParamsDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    ExecParams
		wantErr string // substring; "" means success
	}{
		{name: "command only", in: `{"command":["echo","hi"]}`,
			want: ExecParams{Command: []string{"echo", "hi"}}},
		{name: "unknown fields ignored",
			in:   `{"command":["true"],"with_escalated_permissions":true,"justification":"x","extra":{"a":[1,2]}}`,
			want: ExecParams{Command: []string{"true"}}},
		{name: "nulls are absent", in: `{"command":null,"workdir":null,"timeout":null}`,
			want: ExecParams{}},
		{name: "timeout 0", in: `{"command":["true"],"timeout":0}`,
			want: ExecParams{Command: []string{"true"}, TimeoutMs: ptrU64(0)}},
		{name: "timeout max uint64", in: `{"command":["true"],"timeout":18446744073709551615}`,
			want: ExecParams{Command: []string{"true"}, TimeoutMs: ptrU64(math.MaxUint64)}},
		{name: "empty command array", in: `{"command":[]}`,
			want: ExecParams{Command: []string{}}},

		{name: "timeout as string", in: `{"command":["true"],"timeout":"500"}`, wantErr: `"timeout"`},
		{name: "timeout as float", in: `{"command":["true"],"timeout":1.5}`, wantErr: `"timeout"`},
		{name: "timeout negative", in: `{"command":["true"],"timeout":-1}`, wantErr: `"timeout"`},
		{name: "timeout above uint64", in: `{"command":["true"],"timeout":18446744073709551616}`, wantErr: `"timeout"`},
		{name: "timeout as bool", in: `{"command":["true"],"timeout":true}`, wantErr: `"timeout"`},
		{name: "timeout as array", in: `{"command":["true"],"timeout":[1]}`, wantErr: `"timeout"`},
		{name: "command as string", in: `{"command":"ls -l"}`, wantErr: `"command"`},
		{name: "command of numbers", in: `{"command":[1,2]}`, wantErr: `"command"`},
		{name: "command of mixed", in: `{"command":["ls",{"a":1}]}`, wantErr: `"command"`},
		{name: "command as object", in: `{"command":{"0":"ls"}}`, wantErr: `"command"`},
		{name: "workdir as number", in: `{"command":["ls"],"workdir":5}`, wantErr: `"workdir"`},
		{name: "not an object", in: `["ls"]`, wantErr: "exec params must be a JSON object, got [\"ls\"]"},
		{name: "a number", in: `5`, wantErr: "exec params must be a JSON object"},
		{name: "null in command", in: `{"command":["ls",null]}`, wantErr: `"command" must be an array of strings: element 1 is null`},
		{name: "truncated", in: `{"command":["ls"`, wantErr: "unexpected end of JSON input"},
		{name: "a name twice: the last counts", in: `{"command":["a"],"Command":["b"],"timeout":1,"timeout":null}`,
			want: ExecParams{Command: []string{"b"}}},
		{name: "a name twice: each is checked", in: `{"timeout":"500","timeout":null}`, wantErr: `"timeout"`},
		{name: "a name twice: each is checked, first", in: `{"command":true,"command":["ls"]}`, wantErr: `"command"`},
	}
	for _, tc := range tests {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p ExecParams
			err := json.Unmarshal([]byte(tc.in), &p)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, p)
		})
	}
}

// TestExecParamsDecodeReplaces checks that decoding into a used value does
// not keep fields of the old one.
func TestExecParamsDecodeReplaces(t *testing.T) {
	t.Parallel()
	p := ExecParams{Command: []string{"old"}, Workdir: "/old", TimeoutMs: ptrU64(7)}
	require.NoError(t, json.Unmarshal([]byte(`{"command":["new"]}`), &p))
	assert.Equal(t, ExecParams{Command: []string{"new"}}, p)

	// A null document changes nothing, as encoding/json has it.
	require.NoError(t, json.Unmarshal([]byte(` null `), &p))
	assert.Equal(t, ExecParams{Command: []string{"new"}}, p)
}

// A direct call of UnmarshalJSON gets what json.Unmarshal would have
// refused before it: more than one value (found in review).
func TestExecParamsUnmarshalJSONDirect(t *testing.T) {
	t.Parallel()
	var p ExecParams
	require.NoError(t, p.UnmarshalJSON([]byte(` {"command":["ls"]} `)))
	assert.Equal(t, ExecParams{Command: []string{"ls"}}, p)
	for _, in := range []string{
		`{"command":["ls"]} {"command":["rm"]}`,
		`{"command":["ls"]}]`,
		`{"command":["ls"]} x`,
		`{} null`,
	} {
		p := ExecParams{Workdir: "/kept"}
		err := p.UnmarshalJSON([]byte(in))
		require.Error(t, err, "%s", in)
		assert.Contains(t, err.Error(), "exec params", "%s", in)
		assert.Equal(t, ExecParams{Workdir: "/kept"}, p, "a failed decode changes nothing")
	}
	err := p.UnmarshalJSON([]byte(`{"command":["ls"]} {"command":["rm"]}`))
	assert.EqualError(t, err, `sandboxexec: exec params: data after the object: {"command":["rm"]}`)
}

func TestExecParamsTimeout(t *testing.T) {
	t.Parallel()
	maxMs := uint64(math.MaxInt64 / int64(time.Millisecond))
	tests := []struct {
		name   string
		ms     *uint64
		want   time.Duration
		wantOK bool
	}{
		{"absent means default", nil, DefaultTimeout, true},
		{"zero means default", ptrU64(0), DefaultTimeout, true},
		{"one millisecond", ptrU64(1), time.Millisecond, true},
		{"500 ms", ptrU64(500), 500 * time.Millisecond, true},
		{"an hour", ptrU64(3600_000), time.Hour, true},
		{"largest representable", ptrU64(maxMs), time.Duration(maxMs) * time.Millisecond, true},
		{"one past largest means none", ptrU64(maxMs + 1), 0, false},
		{"max uint64 means none", ptrU64(math.MaxUint64), 0, false},
		{"max int64 means none", ptrU64(math.MaxInt64), 0, false},
	}
	for _, tc := range tests {
		d, ok := ExecParams{TimeoutMs: tc.ms}.timeout()
		assert.Equal(t, tc.wantOK, ok, tc.name)
		if ok {
			assert.Equal(t, tc.want, d, tc.name)
			assert.Positive(t, d, "%s: overflowed", tc.name)
		}
	}
	assert.Equal(t, 10*time.Second, DefaultTimeout)
}

func TestExecToolCallOutputJSON(t *testing.T) {
	t.Parallel()
	out := ExecToolCallOutput{
		ExitCode:        143,
		Stdout:          "out",
		Stderr:          "err",
		Duration:        1500 * time.Millisecond,
		TimedOut:        true,
		StdoutTruncated: true,
		StderrTruncated: false,
		Signal:          "SIGTERM",
		StdoutBytes:     12345,
		StderrBytes:     3,
	}
	data, err := json.Marshal(out)
	require.NoError(t, err)

	var fields map[string]any
	require.NoError(t, json.Unmarshal(data, &fields))
	assert.Equal(t, map[string]any{
		"exit_code":        float64(143),
		"stdout":           "out",
		"stderr":           "err",
		"duration_ms":      float64(1500),
		"timed_out":        true,
		"stdout_truncated": true,
		"stderr_truncated": false,
		"signal":           "SIGTERM",
		"stdout_bytes":     float64(12345),
		"stderr_bytes":     float64(3),
	}, fields)

	var back ExecToolCallOutput
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, out, back)

	// Signal is omitted when empty; every other field is always there.
	data, err = json.Marshal(ExecToolCallOutput{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"exit_code":0,"stdout":"","stderr":"","duration_ms":0,"timed_out":false,
		"stdout_truncated":false,"stderr_truncated":false,"stdout_bytes":0,"stderr_bytes":0}`, string(data))

	// Decoding: null changes nothing; a duration out of range, or a value
	// of the wrong type, is an error that names the field.
	keep := ExecToolCallOutput{ExitCode: 7}
	require.NoError(t, json.Unmarshal([]byte(`null`), &keep))
	assert.Equal(t, 7, keep.ExitCode)
	// Called directly, a form feed is no JSON white space.
	assert.Error(t, keep.UnmarshalJSON([]byte("\fnull")))
	for in, want := range map[string]string{
		`{"duration_ms":9223372036854775807}`: `"duration_ms"`,
		`{"duration_ms":-1}`:                  `"duration_ms"`,
		`{"exit_code":"x"}`:                   `"exit_code"`,
		`[1]`:                                 "a JSON object",
	} {
		err := json.Unmarshal([]byte(in), &keep)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
		assert.NotContains(t, err.Error(), "outputJSON", in)
	}

	// A pointer marshals the same way.
	data2, err := json.Marshal(&out)
	require.NoError(t, err)
	assert.Contains(t, string(data2), `"duration_ms":1500`)
	assert.NotContains(t, string(data2), "Duration")
}

func TestSandboxTypeString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "none", SandboxNone.String())
	assert.Equal(t, "macos-seatbelt", SandboxMacosSeatbelt.String())
	assert.Equal(t, "linux-seccomp", SandboxLinuxSeccomp.String())
	assert.Equal(t, "SandboxType(42)", SandboxType(42).String())
}

func TestFilterSecrets(t *testing.T) {
	t.Parallel()
	in := []string{
		"PATH=/usr/bin",
		"HOME=/root",
		"FOO_API_KEY=1",
		"MY_SECRET=2",
		"GH_TOKEN=3",
		"db_password=4",
		"Keyring=5", // contains KEY in another case
		"LANG=C.UTF-8",
		"NOVALUE",
		"EMPTY=",
		"X=KEY=TOKEN", // only the name counts
	}
	got := filterSecrets(in)
	assert.Equal(t, []string{"PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8", "NOVALUE", "EMPTY=", "X=KEY=TOKEN"}, got)
	assert.Equal(t, "PATH=/usr/bin", in[0], "the input must not be changed")
	assert.Equal(t, "FOO_API_KEY=1", in[2], "the input must not be changed")
}

func TestWithEnvCopies(t *testing.T) {
	t.Parallel()
	env := []string{"A=1", "B=2"}
	var cfg config
	WithEnv(env)(&cfg)
	env[0] = "A=changed"
	assert.Equal(t, []string{"A=1", "B=2"}, cfg.environ())

	var empty config
	WithEnv(nil)(&empty)
	assert.Empty(t, empty.environ(), "WithEnv(nil) is an empty environment, not the host's")

	var host config
	for _, kv := range host.environ() {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		for _, bad := range []string{"KEY", "SECRET", "TOKEN", "PASSWORD"} {
			assert.NotContains(t, upper, bad)
		}
	}
}

// The sandbox variables say what confines the command: its own sandbox, and
// one the host runs in (as the host's own environment tells); nothing else
// that a given or inherited environment claims. Not parallel: t.Setenv.
func TestWithSandboxEnv(t *testing.T) {
	for _, name := range []string{EnvSandbox, EnvNetworkDisabled} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	given := []string{"A=1", EnvSandbox + "=spoofed", "sandboxexec_network_disabled=1", EnvNetworkDisabled + "=1"}
	want := []string{"A=1", "sandboxexec_network_disabled=1"}
	if runtime.GOOS == "windows" { // names without case
		want = []string{"A=1"}
	}
	assert.Equal(t, want, withSandboxEnv(given, "", false))
	assert.Equal(t, append(want, EnvSandbox+"=linux", EnvNetworkDisabled+"=1"), withSandboxEnv(given, "linux", true))

	// The host runs in a sandbox without network: so does the command.
	t.Setenv(EnvSandbox, "linux")
	t.Setenv(EnvNetworkDisabled, "1")
	assert.Equal(t, append(want, EnvSandbox+"=linux", EnvNetworkDisabled+"=1"), withSandboxEnv(given, "", false))
	assert.Equal(t, append(want, EnvSandbox+"=seatbelt", EnvNetworkDisabled+"=1"), withSandboxEnv(given, "seatbelt", false))
}
