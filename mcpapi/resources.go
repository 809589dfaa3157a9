package mcpapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// Resource templates of one dataset. The dataset id is percent-encoded in
// the URI (/ as %2F), which RFC 6570 expansion of {dataset} does.
const (
	schemaTemplate  = "quarry://datasets/{dataset}/schema"
	catalogTemplate = "quarry://datasets/{dataset}/catalog"
	summaryTemplate = "quarry://datasets/{dataset}/summary"
)

// readResource is the handler of every quarry:// resource and template.
// Template handlers' errors reach the client as -32603 (mcp-go), so the
// message carries the code and the hint.
func readResource(svc *service.Service) func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		b, mime, err := svc.ReadResource(ctx, req.Params.URI)
		if err != nil {
			e := qerr.As(err)
			msg := e.Code + ": " + e.Message
			if e.Hint != "" {
				msg += " (" + e.Hint + ")"
			}
			if s, ok := e.Diagnostics["suggestions"].([]string); ok && len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, ", ") + "?"
			}
			return nil, fmt.Errorf("%s", msg)
		}
		if strings.HasPrefix(mime, "text/") || mime == "application/json" {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: mime, Text: string(b)}}, nil
		}
		return []mcp.ResourceContents{mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: mime, Blob: base64.StdEncoding.EncodeToString(b)}}, nil
	}
}

// addResources registers the catalog card and the templates for the
// per-dataset schema card, catalog entry and summary, and for artifacts.
func addResources(s *server.MCPServer, svc *service.Service) {
	read := readResource(svc)
	s.AddResource(mcp.NewResource(service.CatalogURI, "catalog",
		mcp.WithResourceDescription("Every dataset under the data root: id, kind, path, rows, columns, size, modification time, description and tags."),
		mcp.WithMIMEType("application/json")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate(schemaTemplate, "dataset-schema",
		mcp.WithTemplateDescription("Schema card of one dataset (id percent-encoded, / as %2F): columns with type, role, description, unit and "+
			"example values; shape, sample rows, description and tags."),
		mcp.WithTemplateMIMEType("application/json")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate(catalogTemplate, "dataset-catalog",
		mcp.WithTemplateDescription("Catalog entry of one dataset: path, kind, size, rows, columns, modification time, description, tags."),
		mcp.WithTemplateMIMEType("application/json")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate(summaryTemplate, "dataset-summary",
		mcp.WithTemplateDescription("Tiny per-column profile of one dataset, safe to load at the start of a chat: null count, min, max, "+
			"distinct estimate and the most frequent values (from the first rows of very large files; cached)."),
		mcp.WithTemplateMIMEType("application/json")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate("quarry://artifacts/{artifact}", "artifact",
		mcp.WithTemplateDescription("A result file written by query_data or query_next_page (Parquet, CSV or Arrow IPC). Expires after the artifact TTL; readable only by the principal whose call wrote it.")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate("quarry://results/{handle}/pages/{page}", "result-page",
		mcp.WithTemplateDescription("Page {page} (0-based; pages of the server's page size) of a paged query result, {handle} being its "+
			"result_handle: the same JSON as a query_next_page answer. Readable while the handle lives, by the principal that created it."),
		mcp.WithTemplateMIMEType("application/json")), read)
}

// datasetResources keeps one listed resource per dataset (its schema card)
// and one per HDF5 file (its root group) in step with the catalog, which
// serve fills in the background. Names are unique ("schema: <id>"), as mcp-go's
// list pagination uses the last name as the cursor.
type datasetResources struct {
	svc    *service.Service
	mu     sync.Mutex
	listed map[string]bool // URIs registered
}

// sync registers schema resources for new datasets and removes those of
// datasets that are gone.
func (r *datasetResources) sync(s *server.MCPServer) {
	if s == nil || r.svc == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	want := map[string]bool{}
	var add []server.ServerResource
	read := readResource(r.svc)
	for _, d := range r.svc.CatalogDatasets() {
		uri := service.SchemaURI(d.ID)
		want[uri] = true
		if r.listed[uri] {
			continue
		}
		desc := fmt.Sprintf("Schema card of %s (%s, %d rows, %d columns)", d.ID, d.Kind, d.RowCount, d.Schema.NumFields())
		if d.Description != "" {
			desc += ": " + oneLine(d.Description, 160)
		}
		add = append(add, server.ServerResource{
			Resource: mcp.NewResource(uri, "schema: "+d.ID, mcp.WithResourceDescription(desc), mcp.WithMIMEType("application/json")),
			Handler:  read,
		})
	}
	var h5read server.ResourceHandlerFunc
	for _, f := range r.svc.H5Files() {
		want[f.URI] = true
		if r.listed[f.URI] {
			continue
		}
		if h5read == nil {
			h5read = readH5(r.svc)
		}
		add = append(add, h5FileResource(f, h5read))
	}
	var drop []string
	for uri := range r.listed {
		if !want[uri] {
			drop = append(drop, uri)
		}
	}
	if len(drop) > 0 {
		s.DeleteResources(drop...)
	}
	if len(add) > 0 {
		s.AddResources(add...)
	}
	r.listed = want
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
