package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// buildNoCgo builds cmd/quarry as `go install` does on a machine without
// libhdf5: CGO_ENABLED=0 -tags nohdf5 (no C compiler, no libhdf5), with
// -trimpath as .goreleaser.yaml builds it and make vet vets it, so that in
// make test every package is compiled once (by vet) and this build and the
// release step (scripts/release-ci.sh) only link.
func buildNoCgo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quarry-nocgo")
	build := exec.Command("go", "build", "-trimpath", "-tags", "nohdf5", "-o", bin, "../cmd/quarry")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build -tags nohdf5: %v\n%s", err, out)
	}
	return bin
}

// TestNoCgoBuild: the cgo-free build serves stdio, answers a CSV query,
// leaves advanced_query out, lists an HDF5 file as a diagnostic and refuses
// read_dataset_slice with not_in_build.
func TestNoCgoBuild(t *testing.T) {
	bin := buildNoCgo(t)
	if out, err := exec.Command("go", "version", "-m", bin).Output(); err != nil || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	data := t.TempDir()
	writeBigCSV(t, filepath.Join(data, "big.csv"), 25, 0)
	h5, err := os.ReadFile("../demodata/files/physics/experiment.h5")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "experiment.h5"), h5, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startStdioWith(t, bin, env(), "--data", data)

	names := listToolNames(t, c)
	if slices.Contains(names, "advanced_query") || !slices.Contains(names, "query_data") {
		t.Fatalf("tools of the cgo-free build: %v", names)
	}
	var cat struct {
		Datasets []struct {
			ID string `json:"id"`
		} `json:"datasets"`
		Diagnostics []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"diagnostics"`
	}
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if len(cat.Datasets) != 1 || cat.Datasets[0].ID != "big" {
		t.Fatalf("datasets: %+v", cat.Datasets)
	}
	if len(cat.Diagnostics) != 1 || cat.Diagnostics[0].Path != "experiment.h5" || !strings.Contains(cat.Diagnostics[0].Reason, "built without HDF5") {
		t.Fatalf("diagnostics: %+v", cat.Diagnostics)
	}
	var q struct {
		RowCount int64 `json:"row_count"`
	}
	call(t, c, "query_data", map[string]any{"dataset": "big", "aggs": []map[string]any{{"col": "*", "fn": "count"}}}, &q)
	if q.RowCount != 1 {
		t.Fatalf("count query: %+v", q)
	}
	e := callErr(t, c, "read_dataset_slice", map[string]any{"uri": "h5://experiment.h5?path=/detector/image"})
	if e.Code != "not_in_build" || e.Diagnostics["feature"] != "hdf5" || !strings.Contains(e.Error, "built without HDF5") {
		t.Fatalf("read_dataset_slice: %+v", e)
	}
}

// listToolNames is tools/list's tool names.
func listToolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}
