package mcpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/mcpapi"
	mcptransport "github.com/quarrydb/quarry/mcpapi/transport"
	"github.com/quarrydb/quarry/service"
)

// TestDownloadURL: over HTTP a file result carries a signed download_url
// that serves the file (Range included) without a bearer token; a changed
// URL, another principal's name in it or another method is refused.
func TestDownloadURL(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Data: reachRoot(t), ArtifactDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h, err := mcptransport.NewHTTPHandler(a.MCP, mcptransport.HTTPOptions{Download: mcpapi.NewDownloader(a.Service),
		Tokens: []mcptransport.Token{{Principal: "alice", Secret: "alice-secret-0123456789"}, {Principal: "bob", Secret: "bob-secret-0123456789"}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close(ctx)
	c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer alice-secret-0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_data"
	req.Params.Arguments = map[string]any{"dataset": "rows", "output_format": "csv"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("query_data: %v %+v", err, res)
	}
	var out struct {
		ResourceURI string `json:"resource_uri"`
		DownloadURL string `json:"download_url"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	if !strings.HasPrefix(out.DownloadURL, ts.URL+"/artifacts/") {
		t.Fatalf("download_url %q", out.DownloadURL)
	}
	art, err := a.Artifacts.Get(out.ResourceURI, "alice")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(art.Path)
	get := func(url string, hdr ...string) (int, string) {
		r, _ := http.NewRequest(http.MethodGet, url, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get(out.DownloadURL); code != 200 || body != string(want) {
		t.Fatalf("download: %d, %d bytes, want %d", code, len(body), len(want))
	}
	if code, body := get(out.DownloadURL, "Range", "bytes=10-19"); code != http.StatusPartialContent || body != string(want[10:20]) {
		t.Fatalf("range: %d %q", code, body)
	}
	for _, bad := range []string{
		strings.Replace(out.DownloadURL, "p=alice", "p=bob", 1),
		strings.Replace(out.DownloadURL, "exp=", "exp=1", 1),
		out.DownloadURL[:len(out.DownloadURL)-2],
	} {
		if code, body := get(bad); code != http.StatusForbidden || !strings.Contains(body, "download_denied") {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
	u, _ := url.Parse(out.DownloadURL)
	if _, _, err := a.Service.OpenDownload(u.Path, u.Query(), time.Now().Add(service.DownloadTTL)); qerr.Code(err) != qerr.CodeDownloadExpired {
		t.Errorf("after %s: %v", service.DownloadTTL, err)
	}
	r, _ := http.NewRequest(http.MethodPost, out.DownloadURL, nil)
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", resp.StatusCode, err)
	}
}
