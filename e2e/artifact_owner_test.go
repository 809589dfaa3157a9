package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestHTTPArtifactsPerPrincipal: result files (a query_data file result
// and a per-page file from query_next_page) are readable over
// resources/read only by the principal whose call wrote them; another
// principal gets exactly the error of an artifact that does not exist.
func TestHTTPArtifactsPerPrincipal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("alice:"+tokAlice+"\nbob:"+tokBob+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := launchHTTP(t, nil, "--auth-token-file", file)
	alice := connectHTTP(t, p.base, map[string]string{"Authorization": "Bearer " + tokAlice}, false)
	bob := connectHTTP(t, p.base, map[string]string{"Authorization": "Bearer " + tokBob}, true)

	var whole queryResult
	call(t, alice, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}, "output_format": "csv"}, &whole)
	var first, page queryResult
	call(t, alice, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}}, &first)
	if first.Method != "handle" {
		t.Fatalf("expected a handle: %+v", first)
	}
	call(t, alice, "query_next_page", map[string]any{"result_handle": first.ResultHandle, "page_token": first.PageInfo.PageToken, "format": "parquet"}, &page)
	for _, r := range []queryResult{whole, page} {
		if r.Method != "file" || !strings.HasPrefix(r.ResourceURI, "quarry://artifacts/") {
			t.Fatalf("expected a file result: %+v", r)
		}
	}

	read := func(c *client.Client, uri string) (*mcp.ReadResourceResult, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		return c.ReadResource(context.Background(), req)
	}
	for _, r := range []queryResult{whole, page} {
		uri := r.ResourceURI
		if res, err := read(alice, uri); err != nil || len(res.Contents) != 1 {
			t.Fatalf("alice reading her %s: %v", uri, err)
		}
		missing := "quarry://artifacts/a_" + strings.Repeat("a", 26) + "." + r.Format
		_, missErr := read(bob, missing)
		_, err := read(bob, uri)
		if err == nil || missErr == nil {
			t.Fatalf("bob read alice's %s (%v) or a missing artifact (%v)", uri, err, missErr)
		}
		if got, want := err.Error(), strings.ReplaceAll(missErr.Error(), missing, uri); got != want || !strings.Contains(got, "resource_not_found") {
			t.Fatalf("bob reading alice's artifact: %q, want the missing-artifact error %q", got, want)
		}
	}
	// Bob's own file result is his.
	var his queryResult
	call(t, bob, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}, "output_format": "csv"}, &his)
	if _, err := read(bob, his.ResourceURI); err != nil {
		t.Fatalf("bob reading his file: %v", err)
	}
	if _, err := read(alice, his.ResourceURI); err == nil {
		t.Fatal("alice read bob's file")
	}
}
