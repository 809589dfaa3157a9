package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConformanceSuite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in interop/conformance) against
// `quarry serve --transport http --conformance-fixtures`: every server
// scenario of revisions 2025-11-25 and 2026-07-28 (--suite all: pending ones
// included) and every extension scenario. The suite's exit code decides:
// a check that fails and is not in interop/conformance/expected-failures-*.yml
// fails the test, and so does a listed one that passes (stale baseline).
// Node.js 20+ and npm are required (a failure, not a skip: CI has both);
// the pinned lockfile is installed once (nodePackage).
func TestConformanceSuite(t *testing.T) {
	cli := filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node, dir := nodePackage(t, "conformance", cli)
	if out, err := exec.Command(node, "--version").Output(); err != nil || nodeMajor(string(out)) < 20 {
		t.Fatalf("the conformance suite needs Node.js 20+, found %q (%v)", strings.TrimSpace(string(out)), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	_, base := startHTTP(t, "--conformance-fixtures")
	results := t.TempDir()
	suite := func(args ...string) (string, error) {
		// node20.mjs lets the CLI start on Node.js 20 (see its comment).
		cmd := exec.CommandContext(ctx, node, append([]string{"--import", "./node20.mjs", cli}, args...)...)
		cmd.Dir, cmd.Env = dir, env()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	server := func(args ...string) []string {
		return append([]string{"server", "--url", base + "/mcp", "-o", results}, args...)
	}
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			args := server("--spec-version", rev, "--suite", "all")
			if baseline := filepath.Join(dir, "expected-failures-"+rev+".yml"); fileExists(baseline) {
				args = append(args, "--expected-failures", baseline)
			}
			start := time.Now()
			out, err := suite(args...)
			summary := suiteSummary(out)
			if err != nil {
				t.Fatalf("conformance suite %s: %v\n%s", rev, err, out)
			}
			if !strings.Contains(summary, "passed") {
				t.Fatalf("conformance suite %s ran no scenario:\n%s", rev, out)
			}
			t.Logf("%s (%v):\n%s", rev, time.Since(start).Round(time.Millisecond), summary)
		})
	}
	// Without --spec-version the suite runs each scenario at its own
	// revision, extension scenarios included; their baseline is the
	// extensions file plus the 2026-07-28 one (server-stateless runs again).
	t.Run("extensions", func(t *testing.T) {
		baseline := filepath.Join(t.TempDir(), "expected-failures.yml")
		var entries []string
		for _, f := range []string{"expected-failures-2026-07-28.yml", "expected-failures-extensions.yml"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, regexp.MustCompile(`(?m)^  - \S+$`).FindAllString(string(b), -1)...)
		}
		if err := os.WriteFile(baseline, []byte("server:\n"+strings.Join(entries, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := suite(server("--suite", "all", "--expected-failures", baseline)...)
		if err != nil {
			t.Fatalf("conformance suite (all scenarios): %v\n%s", err, out)
		}
		if !strings.Contains(out, "tasks-lifecycle") {
			t.Fatalf("the extension scenarios did not run:\n%s", out)
		}
		t.Logf("all scenarios, extensions included (%v):\n%s", time.Since(start).Round(time.Millisecond), suiteSummary(out))
	})
}

// suiteSummary returns the SUMMARY part of the suite's output.
func suiteSummary(out string) string {
	if i := strings.Index(out, "=== SUMMARY ==="); i >= 0 {
		return out[i:]
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
