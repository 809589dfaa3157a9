package mcpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/mcpapi"
	"github.com/quarrydb/quarry/service"
)

// TestSQLReferencePrompt: sql_reference gives the dialect, the registry's
// functions and service.SQLExampleCount examples, and every example runs
// through advanced_query over the demo data, for the default dataset and
// for each dataset of the catalog.
func TestSQLReferencePrompt(t *testing.T) {
	f := open(t, app.Config{MaxRows: 50})
	check := func(dataset string) {
		t.Helper()
		args := map[string]string{}
		if dataset != "" {
			args["dataset"] = dataset
		}
		text := getPrompt(t, f, mcpapi.PromptSQL, args)
		exs, err := f.app.Service.SQLExamples(context.Background(), dataset)
		if err != nil {
			t.Fatal(err)
		}
		if text != mcpapi.RenderSQLReference(exs) {
			t.Fatalf("prompt text differs from the rendered examples")
		}
		if len(exs) != service.SQLExampleCount {
			t.Fatalf("%s: %d examples, want %d", dataset, len(exs), service.SQLExampleCount)
		}
		for _, ex := range exs {
			res := f.callRaw(t, ex.Tool, ex.Args, nil)
			if res.IsError {
				t.Fatalf("%s: example %q (%v) failed: %s", dataset, ex.Title, ex.Args, resultText(res))
			}
		}
		for _, want := range []string{"NULLS FIRST", "regexp_matches", "approx_quantile", "row_number", "## Worked examples"} {
			if !strings.Contains(text, want) {
				t.Fatalf("sql_reference lacks %q:\n%s", want, text)
			}
		}
	}
	check("")
	for _, d := range f.app.Catalog.Datasets() {
		check(d.ID)
	}
	text := getPrompt(t, f, mcpapi.PromptSQL, map[string]string{"dataset": "weather/daily"})
	for _, want := range []string{`JOIN "weather/stations" o USING (station_id)`, `date_trunc('month', date)`, "params: [", " IN (SELECT "} {
		if !strings.Contains(text, want) {
			t.Errorf("weather/daily SQL examples lack %s:\n%s", want, text)
		}
	}
}
