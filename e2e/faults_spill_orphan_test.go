package e2e

import (
	"path/filepath"
	"testing"
	"time"
)

// TestKillWithLiveSpill: bin/quarry killed with SIGKILL while a result
// handle's spill file is complete and alive (the handle lives, the file was
// never handed out): the file, a whole Parquet artifact, is marked held
// (".hold-<id>", locked by the server); the next server deletes it with its
// marker at start-up (after the orphan age) instead of adopting it until
// --artifact-ttl, and its accounting matches the directory.
func TestKillWithLiveSpill(t *testing.T) {
	data := flagData(t, 20_000)
	arts := t.TempDir()
	args := []string{"--data", data, "--artifact-dir", arts, "--spill-rows", "1000", "--max-rows", "100",
		"--confirm-rows", "-1", "--confirm-bytes", "-1"}
	p := launchHTTP(t, nil, args...)
	c := connectHTTP(t, p.base, nil, false)
	pg := callPage(t, c, "query_data", map[string]any{"dataset": "big", "limit": 5000, "max_rows": 100})
	if pg.ResultHandle == "" || pg.TotalRows != 5000 {
		t.Fatalf("want a handle over 5000 rows: %+v", pg.PageInfo)
	}
	checkArtifactAccounting(t, arts, p.base, 1) // the spill file
	if m := holdMarkers(t, arts); len(m) != 1 {
		t.Fatalf("hold markers %v, want one for the spill file", m)
	}
	p.kill(t)
	if _, files, _ := artifactDirState(t, arts); len(files) != 1 {
		t.Fatalf("after the kill: artifacts %v, want the spill file", files)
	}

	time.Sleep(2500 * time.Millisecond) // the orphan age of a marker
	p2 := launchHTTP(t, nil, args...)
	checkArtifactAccounting(t, arts, p2.base, 0)
	if m := holdMarkers(t, arts); len(m) != 0 {
		t.Fatalf("hold markers left: %v", m)
	}
}

// holdMarkers lists the ".hold-*" markers of held artifacts in dir.
func holdMarkers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".hold-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkArtifactAccounting fails t unless the artifact directory arts holds
// no temp entry and wantFiles artifacts, and the server at base counts
// exactly those (quarry_artifact_bytes, quarry_artifacts_live).
func checkArtifactAccounting(t *testing.T, arts, base string, wantFiles int) {
	t.Helper()
	temps, files, size := artifactDirState(t, arts)
	if len(temps) != 0 || len(files) != wantFiles {
		t.Fatalf("temp entries %v, artifacts %v; want none and %d", temps, files, wantFiles)
	}
	_, m := scrape(t, base, nil)
	if m["quarry_artifact_bytes"] != float64(size) || m["quarry_artifacts_live"] != float64(len(files)) {
		t.Fatalf("accounting: %v bytes in %v artifacts, the directory holds %d bytes in %d",
			m["quarry_artifact_bytes"], m["quarry_artifacts_live"], size, len(files))
	}
}
