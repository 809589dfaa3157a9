package main

import (
	"strings"
	"testing"
)

// TestConfigFlightSQL: [[flightsql]] remotes in the config file are
// parsed beside the flag keys, printed by --print-config (header values
// hidden) and read back the same; a bad remote stops serve with one line.
func TestConfigFlightSQL(t *testing.T) {
	cfg := writeConfig(t, `max-rows = 5

[[flightsql]]
name = "lake"
uri = "grpc://127.0.0.1:31337"
token_env = "LAKE_TOKEN"
headers = { database = "secret-db" }
allow = ["sales.*"]
timeout = "45s"
`)
	out, errOut, code := printConfig(t, "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"[[flightsql]]", "name = 'lake'", "token_env = 'LAKE_TOKEN'", "timeout = '45s'", "# headers = (database, values hidden)"} {
		if !strings.Contains(out, want) {
			t.Errorf("print-config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret-db") {
		t.Errorf("a header value is printed:\n%s", out)
	}
	if effective(t, out)["max-rows"][0] != "5" {
		t.Errorf("max-rows lost:\n%s", out)
	}
	again, errOut, code := printConfig(t, "--config", writeConfig(t, out))
	if code != 0 {
		t.Fatalf("read back: exit %d: %s", code, errOut)
	}
	tail := func(s string) string { // the remote without its headers comment
		s = s[strings.Index(s, "[[flightsql]]"):]
		return s[:strings.Index(s+"# headers", "# headers")]
	}
	if tail(again) != tail(out) {
		t.Errorf("read back differs:\n%s\n---\n%s", tail(out), tail(again))
	}

	bad := writeConfig(t, "[[flightsql]]\nname = \"x\"\nuri = \"grpc://h:1\"\ntokenfile = \"t\"\n")
	out, errOut, code = printConfig(t, "--config", bad)
	if code != 1 || out != "" || !strings.Contains(errOut, "unknown key") || !strings.Contains(errOut, "tokenfile") ||
		strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
