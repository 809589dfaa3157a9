package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/parquet-go/parquet-go"

	"github.com/quarrydb/quarry/internal/artifacts/s3store/s3rvertest"
	"github.com/quarrydb/quarry/internal/shared/redistest"
)

// TestReplicasShareHandles: two HTTP replicas share a Redis and an artifact
// directory. One result is paged alternately through both, its page
// resource and a Parquet artifact are read from the replica that did not
// make them, one replica is killed (SIGKILL) mid-walk and the walk ends on
// the other: every row exactly once.
func TestReplicasShareHandles(t *testing.T) {
	arts := t.TempDir()
	walkReplicas(t, nil, []string{"--artifact-dir", arts}, []string{"--artifact-dir", arts})
}

// TestReplicasShareArtifactStore: the same walk with no shared directory:
// each replica has its own --artifact-dir, and the artifacts and spilled
// results reach the other replica through an S3-compatible object store
// (npm's s3rver), with their owners.
func TestReplicasShareArtifactStore(t *testing.T) {
	srv := s3rvertest.Start(t)
	store := []string{"--artifact-store", "s3://" + s3rvertest.Bucket + "/replicas", "--artifact-store-endpoint", srv.Endpoint,
		"--artifact-store-region", "us-east-1"}
	walkReplicas(t, s3rvertest.Env(),
		append([]string{"--artifact-dir", t.TempDir()}, store...), append([]string{"--artifact-dir", t.TempDir()}, store...))
}

// walkReplicas runs the walk of TestReplicasShareHandles over two replicas
// started with the extra environment extraEnv and their own arguments
// argsA, argsB.
func walkReplicas(t *testing.T, extraEnv, argsA, argsB []string) {
	const rows = 12_000
	redisURL := redistest.Start(t)
	dir := t.TempDir()
	writeBigCSV(t, filepath.Join(dir, "big.csv"), rows, 0.5)
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("0123456789abcdef", 4)), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--data", dir, "--redis-url", redisURL, "--shared-key-file", key, "--page-rows", "1000"}
	procA := launchHTTP(t, extraEnv, slices.Concat(args, argsA)...)
	procB := launchHTTP(t, extraEnv, slices.Concat(args, argsB)...)
	a, b := connectHTTP(t, procA.base, nil, false), connectHTTP(t, procB.base, nil, false)

	// A file result made on A, read on B.
	f := callPage(t, a, "query_data", map[string]any{"dataset": "big", "output_format": "parquet"})
	pf, err := parquet.OpenFile(bytes.NewReader(readArtifact(t, b, f.ResourceURI, "application/vnd.apache.parquet")), f.SizeBytes)
	if err != nil || pf.NumRows() != rows {
		t.Fatalf("artifact of A read on B: %v, %d rows", err, pf.NumRows())
	}

	p := callPage(t, a, "query_data", map[string]any{"dataset": "big"})
	if p.Method != "handle" || p.PageInfo == nil || !p.PageInfo.HasMore {
		t.Fatalf("want a paged result, got %s", p.Method)
	}
	seen := make([]bool, rows)
	take := func(p *page) {
		t.Helper()
		for _, r := range p.Data {
			if r.ID < 0 || r.ID >= rows || seen[r.ID] {
				t.Fatalf("row %d out of range or seen twice", r.ID)
			}
			if r != wantRow(r.ID, 0.5) {
				t.Fatalf("row %+v, want %+v", r, wantRow(r.ID, 0.5))
			}
			seen[r.ID] = true
		}
	}
	take(p)
	// The page resource of A's handle, read on B.
	if _, err := readResource(t, b, "quarry://results/"+p.ResultHandle+"/pages/1"); err != nil {
		t.Fatalf("page resource of A's handle on B: %v", err)
	}
	replicas := []*client.Client{b, a}
	for i := 0; p.PageInfo != nil && p.PageInfo.HasMore; i++ {
		if i == 5 { // A dies mid-walk; B finishes
			procA.kill(t)
			replicas = []*client.Client{b}
		}
		c := replicas[i%len(replicas)]
		p = callPage(t, c, "query_next_page", map[string]any{"result_handle": p.ResultHandle, "page_token": p.PageInfo.PageToken})
		take(p)
	}
	for id, ok := range seen {
		if !ok {
			t.Fatalf("row %d never delivered", id)
		}
	}
}
