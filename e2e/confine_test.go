//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSwappedDataFileRefused: through the built binary and a real MCP
// client, a dataset file replaced after the catalog scan by a symlink to a
// readable file outside the data root (small CSV: read path; big CSV:
// memory-mapped; a symlink renamed over it) is refused by query_data and
// distinct_values with path_outside_root, never read; an in-root symlink
// keeps working.
func TestSwappedDataFileRefused(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	writeData := func(dir, name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := writeData(root, "small.csv", "name,n\nalice,1\nbob,2\n")
	big := writeData(root, "big.csv", "name,n\n"+strings.Repeat("alice,1\n", 150_000))
	if err := os.MkdirAll(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeData(filepath.Join(root, "real"), "inside.csv", "name,n\ncarol,3\n")
	if err := os.Symlink(filepath.Join("real", "inside.csv"), filepath.Join(root, "link.csv")); err != nil {
		t.Fatal(err)
	}
	secret := writeData(out, "secret.csv", "name,n\nSECRET,42\n")

	c := startStdio(t, "--data", root)
	for _, id := range []string{"small", "big", "link"} {
		res := callRaw(t, c, "query_data", map[string]any{"dataset": id, "limit": 3})
		if res.IsError {
			t.Fatalf("%s before the swap: %s", id, text(res))
		}
	}

	if err := os.Remove(small); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, small); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, big+".swap"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(big+".swap", big); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"query_data", map[string]any{"dataset": "small"}},
		{"distinct_values", map[string]any{"dataset": "big", "column": "name"}},
	} {
		res := callRaw(t, c, tc.tool, tc.args)
		if !res.IsError || strings.Contains(text(res), "SECRET") {
			t.Fatalf("%s after the swap: %s", tc.tool, text(res))
		}
		var e toolErr
		if err := json.Unmarshal([]byte(text(res)), &e); err != nil || e.Code != "path_outside_root" || strings.Contains(e.Error, out) {
			t.Fatalf("%s: %v %s", tc.tool, err, text(res))
		}
		// Asked again: still refused (the dataset is gone until restored).
		if e := callErr(t, c, tc.tool, tc.args); e.Code != "dataset_not_found" {
			t.Fatalf("%s again: %+v", tc.tool, e)
		}
	}
	res := callRaw(t, c, "query_data", map[string]any{"dataset": "link"})
	if res.IsError || !strings.Contains(text(res), "carol") {
		t.Fatalf("in-root symlink after the swap: %s", text(res))
	}
}
