package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestKillDuringArtifactWrite: bin/quarry killed with SIGKILL while it
// writes a Parquet result file leaves only a temp file (never a partial
// artifact); the next server on the same artifact directory deletes it
// and writes new results normally. (The store-level crash test is
// internal/artifacts TestCrashedWriterCleanedOnOpen; spills go through the
// same writer.)
func TestKillDuringArtifactWrite(t *testing.T) {
	data := flagData(t, 1_000_000)
	arts := t.TempDir()
	args := []string{"--data", data, "--artifact-dir", arts, "--confirm-rows", "-1", "--confirm-bytes", "-1"}
	list := func() (temps, files []string) {
		t.Helper()
		temps, files, _ = artifactDirState(t, arts)
		return temps, files
	}

	killMidWrite(t, args, arts, "query_data", map[string]any{"dataset": "big", "output_format": "parquet"}, 2*time.Minute, "artifact write")

	// The next server (after the orphan age of a temp file) cleans up.
	time.Sleep(2500 * time.Millisecond)
	p2 := launchHTTP(t, nil, args...)
	if temps, files := list(); len(temps) != 0 || len(files) != 0 {
		t.Fatalf("after restart: temp files %v, artifacts %v; want none", temps, files)
	}
	c2 := connectHTTP(t, p2.base, nil, false)
	var r queryResult
	call(t, c2, "query_data", map[string]any{"dataset": "big", "columns": []string{"id"}, "limit": 1000, "output_format": "parquet"}, &r)
	if r.Method != "file" {
		t.Fatalf("after restart: %+v", r)
	}
	if temps, files := list(); len(temps) != 0 || len(files) != 1 {
		t.Fatalf("after a write on the restarted server: temp files %v, artifacts %v; want one artifact", temps, files)
	}
}

// TestDeliverySourceTruncatedOrDeleted: the source file truncated or
// deleted between query_data and query_next_page changes nothing in the
// pages of the handle (in memory and spilled alike); a new query of a
// deleted file is dataset_not_found, of a truncated one an answer or a
// structured error, never internal.
func TestDeliverySourceTruncatedOrDeleted(t *testing.T) {
	for _, mode := range []string{"truncate", "delete"} {
		for _, spill := range []string{"-1", "1000"} {
			t.Run(mode+"/spill-rows="+spill, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "src.csv")
				writeBigCSV(t, path, 3000, 0.5)
				c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir(), "--max-rows", "100", "--page-rows", "100", "--spill-rows", spill)
				p := callPage(t, c, "query_data", map[string]any{"dataset": "src"})
				checkNeverSilent(t, p, 3000)

				switch mode {
				case "truncate":
					st, err := os.Stat(path)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.Truncate(path, st.Size()/3); err != nil {
						t.Fatal(err)
					}
				case "delete":
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}

				next := p.PageInfo.Offset + int64(len(p.Data))
				for q := p; q.PageInfo.HasMore; {
					q = callPage(t, c, "query_next_page", map[string]any{"result_handle": q.ResultHandle, "page_token": q.PageInfo.PageToken})
					checkNeverSilent(t, q, 3000)
					for _, r := range q.Data {
						if r != wantRow(next, 0.5) {
							t.Fatalf("row %d after the %s: %+v", next, mode, r)
						}
						next++
					}
				}
				if next != 3000 {
					t.Fatalf("walk ended at %d", next)
				}

				res := callRaw(t, c, "query_data", map[string]any{"dataset": "src"})
				var e toolErr
				if res.IsError {
					if err := json.Unmarshal([]byte(text(res)), &e); err != nil {
						t.Fatalf("unstructured error: %s", text(res))
					}
				}
				switch {
				case mode == "delete" && e.Code != "dataset_not_found":
					t.Fatalf("a new query of the deleted file: %s", text(res))
				case mode == "truncate" && (e.Code == "internal" || !res.IsError && !strings.Contains(text(res), `"total_rows"`)):
					t.Fatalf("a new query of the truncated file: %s", text(res))
				}
			})
		}
	}
}

// TestHDF5ErrorIsolated: a cataloged HDF5 file overwritten with a broken
// one (the corpus's truncated copy, which libhdf5 fails to open) fails its
// own queries with a structured error,
// never internal and never a crash, while an intact copy of the same file
// keeps answering before, between and after: a libhdf5 error on one file
// does not poison the library's state for the others.
func TestHDF5ErrorIsolated(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../demodata/files/physics/calibration.h5")
	if err != nil {
		t.Fatal(err)
	}
	broken, err := os.ReadFile("../internal/app/testdata/broken/h5/truncated.h5")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"good.h5", "bad.h5"} {
		if err := os.WriteFile(filepath.Join(dir, name), good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := startStdio(t, "--data", dir)
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	var goodID, badID string
	for _, d := range cat.Datasets {
		switch {
		case goodID == "" && d.Path == "good.h5":
			goodID = d.ID
		case badID == "" && d.Path == "bad.h5":
			badID = d.ID
		}
	}
	if goodID == "" || badID == "" {
		t.Fatalf("datasets of the two copies: %+v", cat.Datasets)
	}
	query := func(id string) *mcp.CallToolResult {
		return callRaw(t, c, "query_data", map[string]any{"dataset": id, "limit": 5})
	}
	if res := query(goodID); res.IsError {
		t.Fatalf("good before: %s", text(res))
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(filepath.Join(dir, "bad.h5"), broken, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(filepath.Join(dir, "bad.h5"), later, later)
	for range 3 {
		res := query(badID)
		var e toolErr
		if !res.IsError || json.Unmarshal([]byte(text(res)), &e) != nil || e.Code == "" || e.Code == "internal" {
			t.Fatalf("the broken file: %s", text(res))
		}
		if res := query(goodID); res.IsError {
			t.Fatalf("the intact file after the broken one failed (%s): %s", e.Code, text(res))
		}
	}
}
