package e2e

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/testutil/elicit"
)

// bigRequest is above the --confirm-rows 1000 used below (100,000 rows).
var bigRequest = map[string]any{"dataset": "sensors/readings", "columns": []string{"id", "value"}}

// TestElicitationStdio: a client that declared elicitation is asked with a
// form, on the current protocol (multi round-trip input requests) and on
// the previous one (server-initiated elicitation/create).
func TestElicitationStdio(t *testing.T) {
	for _, version := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			a := &elicit.Answerer{}
			s := startSession(t, []client.ClientOption{client.WithElicitationHandler(a), client.WithProtocolVersion(version)},
				"--confirm-rows", "1000")
			c := s.c

			a.Next(mcp.ElicitationResponseActionAccept, "parquet")
			var file queryResult
			call(t, c, "query_data", bigRequest, &file)
			if file.Method != "file" || file.Format != "parquet" || file.TotalRows != 100_000 || len(a.Asked()) != 1 {
				t.Fatalf("parquet: %+v (asked %d times)", file, len(a.Asked()))
			}
			req := a.Asked()[0].Params
			schema, _ := json.Marshal(req.RequestedSchema)
			if !strings.Contains(req.Message, "about 100,000 rows") || !strings.Contains(string(schema), `"enum":["parquet","first_page","cancel"]`) {
				t.Fatalf("form: %q %s", req.Message, schema)
			}

			a.Next(mcp.ElicitationResponseActionAccept, "first_page")
			var first queryResult
			call(t, c, "query_data", bigRequest, &first)
			if first.Method != "direct" || first.RowCount != 200 || first.Truncated {
				t.Fatalf("first page: %+v", first)
			}

			a.Next(mcp.ElicitationResponseActionDecline, "")
			if e := callErr(t, c, "query_data", bigRequest); e.Code != "cancelled" {
				t.Fatalf("declined: %+v", e)
			}
			a.Next(mcp.ElicitationResponseActionAccept, "cancel")
			if e := callErr(t, c, "aggregate", map[string]any{"dataset": "sensors/readings", "group_by": []string{"id"},
				"aggs": []map[string]any{{"col": "*", "fn": "count"}}}); e.Code != "cancelled" {
				t.Fatalf("cancel choice: %+v", e)
			}

			// Small queries are never asked about.
			a.Next(mcp.ElicitationResponseActionAccept, "parquet")
			var small queryResult
			call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "limit": 10}, &small)
			if len(a.Asked()) != 0 || small.Method != "direct" {
				t.Fatalf("small query asked (%d) or %+v", len(a.Asked()), small)
			}
		})
	}
}

// TestNeedsConfirmationStdio: a client without elicitation gets
// status=needs_confirmation and calls again with an option's args.
func TestNeedsConfirmationStdio(t *testing.T) {
	c := startStdio(t, "--confirm-rows", "1000")
	var nc struct {
		Status   string `json:"status"`
		Estimate struct {
			RowEstimate  int64  `json:"row_estimate"`
			EstimateKind string `json:"estimate_kind"`
			ConfirmRows  int64  `json:"confirm_rows"`
		} `json:"estimate"`
		Options []struct {
			Choice string         `json:"choice"`
			Args   map[string]any `json:"args"`
		} `json:"options"`
		Hint   string `json:"hint"`
		Method string `json:"method"`
	}
	call(t, c, "query_data", bigRequest, &nc)
	if nc.Status != "needs_confirmation" || nc.Method != "" || nc.Estimate.RowEstimate != 100_000 || nc.Estimate.ConfirmRows != 1000 ||
		len(nc.Options) != 3 || !strings.Contains(nc.Hint, "NOT run") {
		t.Fatalf("needs_confirmation: %+v", nc)
	}
	for _, o := range nc.Options {
		if o.Choice == "cancel" {
			continue
		}
		args := maps.Clone(bigRequest)
		maps.Copy(args, o.Args)
		var r queryResult
		call(t, c, "query_data", args, &r)
		switch o.Choice {
		case "parquet":
			if r.Method != "file" || r.TotalRows != 100_000 {
				t.Fatalf("parquet: %+v", r)
			}
		case "first_page":
			if r.Method != "direct" || r.RowCount != 200 {
				t.Fatalf("first_page: %+v", r)
			}
		default:
			t.Fatalf("unknown option %q", o.Choice)
		}
	}
}

// TestElicitationHTTP: the same confirmation form over Streamable HTTP.
func TestElicitationHTTP(t *testing.T) {
	for _, version := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			_, base := startHTTP(t, "--confirm-rows", "1000")
			a := &elicit.Answerer{}
			//lint:ignore SA1019 the 2025-11-25 protocol delivers elicitation over the standalone GET stream this option opens
			listen := []transport.StreamableHTTPCOption{transport.WithContinuousListening()}
			c := httpClient(t, base, mcp.LATEST_PROTOCOL_VERSION, listen, client.WithElicitationHandler(a), client.WithProtocolVersion(version))
			a.Next(mcp.ElicitationResponseActionAccept, "parquet")
			var file queryResult
			call(t, c, "query_data", bigRequest, &file)
			if file.Method != "file" || file.TotalRows != 100_000 || len(a.Asked()) != 1 {
				t.Fatalf("parquet over HTTP: %+v (asked %d)", file, len(a.Asked()))
			}
			a.Next(mcp.ElicitationResponseActionDecline, "")
			if e := callErr(t, c, "query_data", bigRequest); e.Code != "cancelled" {
				t.Fatalf("declined over HTTP: %+v", e)
			}
		})
	}
}
