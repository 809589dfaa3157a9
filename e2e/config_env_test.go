package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// serveCatalogIDs starts `quarry serve` over stdio with args and extra
// environment and returns the dataset ids of get_catalog.
func serveCatalogIDs(t *testing.T, extraEnv []string, args ...string) []string {
	t.Helper()
	c := startStdioWith(t, binary, append(env(), extraEnv...), args...)
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	var ids []string
	for _, d := range cat.Datasets {
		ids = append(ids, d.ID)
	}
	return ids
}

// TestServeConfigEnvAndFile: QUARRY_DATA and a --config file choose the
// data root of a real server (the flag beats both); a config file with a
// typo stops serve with the line and the known keys; --print-config shows
// the sources.
func TestServeConfigEnvAndFile(t *testing.T) {
	envData, fileData, flagData := flagData(t, 3), t.TempDir(), flagData(t, 4)
	writeBigCSV(t, filepath.Join(fileData, "fromfile.csv"), 2, 0)
	cfg := filepath.Join(t.TempDir(), "quarry.toml")
	if err := os.WriteFile(cfg, []byte("data = \""+fileData+"\"\nmax-rows = 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ids := serveCatalogIDs(t, []string{"QUARRY_DATA=" + envData}); strings.Join(ids, ",") != "big" {
		t.Fatalf("QUARRY_DATA: %v", ids)
	}
	if ids := serveCatalogIDs(t, nil, "--config", cfg); strings.Join(ids, ",") != "fromfile" {
		t.Fatalf("--config: %v", ids)
	}
	if ids := serveCatalogIDs(t, []string{"QUARRY_CONFIG=" + cfg, "QUARRY_DATA=" + envData}); strings.Join(ids, ",") != "big" {
		t.Fatalf("env over file: %v", ids)
	}
	if ids := serveCatalogIDs(t, []string{"QUARRY_DATA=" + envData}, "--data", flagData, "--config", cfg); strings.Join(ids, ",") != "big" {
		t.Fatalf("flag over env and file: %v", ids)
	}

	cmd := exec.Command(binary, "serve", "--config", cfg, "--print-config")
	cmd.Env = append(env(), "QUARRY_MAX_CELLS=99")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--print-config: %v", err)
	}
	for _, want := range []string{"max-cells = 99", "# env QUARRY_MAX_CELLS", "max-rows = 50", "# file " + cfg + ":2", "max-bytes = 65536"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--print-config lacks %q:\n%s", want, out)
		}
	}

	typo := filepath.Join(t.TempDir(), "typo.toml")
	if err := os.WriteFile(typo, []byte("# mine\nmax-row = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(binary, "serve", "--config", typo)
	cmd.Env = env()
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("typo: %v\n%s", err, out)
	}
	for _, want := range []string{typo + ":2: unknown key \"max-row\"", "did you mean max-rows", "known keys: addr,"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("typo error lacks %q: %s", want, out)
		}
	}
}
