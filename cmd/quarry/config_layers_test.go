package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/mcpapi/transport"
)

// printConfig runs `quarry serve --print-config args...` in-process and
// returns stdout, stderr and the exit code.
func printConfig(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"serve", "--print-config"}, args...), strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// effective parses print-config output into key -> (value, source).
func effective(t *testing.T, out string) map[string][2]string {
	t.Helper()
	m := map[string][2]string{}
	re := regexp.MustCompile(`^([a-z0-9-]+) = (.*?)\s+# (.*)$`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if g := re.FindStringSubmatch(line); g != nil {
			m[g[1]] = [2]string{g[2], g[3]}
		}
	}
	if len(m) < 20 {
		t.Fatalf("print-config shows %d keys:\n%s", len(m), out)
	}
	return m
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "quarry.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigPrecedence: flag > environment > file > default, each value
// printed with its source.
func TestConfigPrecedence(t *testing.T) {
	cfg := writeConfig(t, "# settings\nmax-rows = 11\nmax-cells = 12\npage-rows = 13\nquery-timeout = \"2m\"\nsql = false\nallow-origin = [\"https://a.example\", \"https://b.example\"]\n")
	t.Setenv("QUARRY_MAX_ROWS", "21")
	t.Setenv("QUARRY_MAX_CELLS", "22")
	t.Setenv("QUARRY_DATA", "/srv/data")
	t.Setenv("QUARRY_PAGE_ROWS", "") // empty: unset
	out, errOut, code := printConfig(t, "--config", cfg, "--max-rows", "31")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := effective(t, out)
	want := map[string][2]string{
		"max-rows":      {"31", "flag"},
		"max-cells":     {"22", "env QUARRY_MAX_CELLS"},
		"data":          {`"/srv/data"`, "env QUARRY_DATA"},
		"page-rows":     {"13", "file " + cfg + ":4"},
		"query-timeout": {`"2m0s"`, "file " + cfg + ":5"},
		"sql":           {"false", "file " + cfg + ":6"},
		"allow-origin":  {`["https://a.example", "https://b.example"]`, "file " + cfg + ":7"},
		"max-bytes":     {"65536", "default"},
		"transport":     {`"stdio"`, "default"},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
}

// TestConfigFromEnvOnly: QUARRY_CONFIG names the file.
func TestConfigFromEnvOnly(t *testing.T) {
	cfg := writeConfig(t, "max-handles = 7\n")
	t.Setenv("QUARRY_CONFIG", cfg)
	out, errOut, code := printConfig(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := effective(t, out)["max-handles"]; got != [2]string{"7", "file " + cfg + ":1"} {
		t.Fatalf("max-handles: %q", got)
	}
}

// TestConfigErrors: each bad setting stops serve with one message naming
// the file and line (or the variable) and what is wrong.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        map[string]string
		want       []string
	}{
		{name: "typo", file: "data = \"/x\"\n\nmax-row = 5\n",
			want: []string{":3: unknown key \"max-row\"", "did you mean max-rows", "known keys: addr, allow-origin,", "max-rows,"}},
		{name: "table", file: "[serve]\nmax-rows = 5\n", want: []string{":1: unknown key \"serve\"", "not tables"}},
		{name: "syntax", file: "max-rows = = 5\n", want: []string{":1:"}},
		{name: "bad value", file: "\nmax-rows = \"many\"\n", want: []string{":2: max-rows = \"many\"", "parse error"}},
		{name: "array for a single flag", file: "max-rows = [1, 2]\n", want: []string{":1: max-rows: an array is only accepted for a repeatable flag"}},
		{name: "date", file: "max-rows = 1979-05-27\n", want: []string{":1: max-rows: a ", "not accepted"}},
		{name: "config in the file", file: "config = \"other.toml\"\n", want: []string{"unknown key \"config\""}},
		{name: "bad env", env: map[string]string{"QUARRY_MAX_ROWS": "lots"}, want: []string{`QUARRY_MAX_ROWS="lots": invalid value for --max-rows`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var args []string
			if tc.file != "" {
				args = []string{"--config", writeConfig(t, tc.file)}
			}
			out, errOut, code := printConfig(t, args...)
			if code != 1 || out != "" {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("not one line: %q", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// TestPrintConfigRoundTrip: print-config's output, read back as a config
// file, gives the same configuration; secrets are not printed.
func TestPrintConfigRoundTrip(t *testing.T) {
	first, errOut, code := printConfig(t, "--max-rows", "77", "--sql=false", "--auth-token", "s3cret-token", "--artifact-ttl", "90m", "--max-gz-ratio", "12.5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(first, "s3cret") || !strings.Contains(first, "# auth-token = (1 value(s), hidden)") {
		t.Fatalf("auth token shown:\n%s", first)
	}
	cfg := writeConfig(t, first)
	second, errOut, code := printConfig(t, "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	a, b := effective(t, first), effective(t, second)
	for k, v := range a {
		if b[k][0] != v[0] {
			t.Errorf("%s: %s, read back %s", k, v[0], b[k][0])
		}
	}
	if b["artifact-ttl"][0] != `"1h30m0s"` || !strings.HasPrefix(b["max-rows"][1], "file ") {
		t.Errorf("read back: %q %q", b["artifact-ttl"], b["max-rows"])
	}
}

// serveFlagSet is a flag set with serve's settings flags, for the parser's
// fuzz target.
func serveFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	c.register(fs)
	var h transport.HTTPFlags
	h.Register(fs)
	newLayers(fs)
	return fs
}

// FuzzConfigFile: any bytes either parse into settings of known keys, each
// with a line inside the file, or fail with a configuration error; nothing
// panics.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{"max-rows = 5\n", "data = \"/srv\"\nsql = false\n", "allow-origin = [\"https://a\", \"https://b\"]\n",
		"[t]\nx = 1\n", "a.b = 1\n", "max-gz-ratio = 1e3\n", "'max-rows' = 1\n", "max-rows = 0x10\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := serveFlagSet()
		settings, err := parseConfigFile("f.toml", data, fs)
		if err != nil {
			if !strings.Contains(err.Error(), "f.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, s := range settings {
			if fs.Lookup(s.key) == nil || s.line < 1 || s.line > lines {
				t.Fatalf("setting %+v (file of %d lines)", s, lines)
			}
		}
	})
}

// TestServeHelp: `serve --help` lists the flags with their defaults; the
// flag package's probe of a zero flag value (to tell a zero default) does
// not reach a nil wrapped value.
func TestServeHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"serve", "--help"}, strings.NewReader(""), &stdout, &stderr)
	help := stderr.String()
	for _, want := range []string{"  -addr value", `(default 127.0.0.1:8765)`, "  -flightsql-addr value"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, help)
		}
	}
	for _, bad := range []string{"panic", "(default false)"} {
		if strings.Contains(help, bad) {
			t.Errorf("serve --help shows %q:\n%s", bad, help)
		}
	}
}
