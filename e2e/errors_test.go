package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestBadInput checks that every kind of bad input gets its stable code and
// a hint, as a tool error (isError), never a crash or a protocol error.
func TestBadInput(t *testing.T) {
	c := startStdio(t)
	var first queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}}, &first)
	if first.PageInfo == nil || first.PageInfo.PageToken == "" {
		t.Fatalf("expected a handle: %+v", first)
	}
	tok := first.PageInfo.PageToken
	tampered := tok[:len(tok)-2] + flip(tok[len(tok)-2:])

	cases := []struct {
		name string
		tool string
		args map[string]any
		code string
	}{
		{"unknown dataset", "get_schema", map[string]any{"dataset": "sensors/readingz"}, "dataset_not_found"},
		{"unknown column", "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"valu"}}, "invalid_column"},
		{"bad filter op", "query_data", map[string]any{"dataset": "sensors/readings",
			"filters": []map[string]any{{"col": "id", "op": "like", "value": 1}}}, "invalid_filter"},
		{"wrong value type", "query_data", map[string]any{"dataset": "sensors/readings",
			"filters": []map[string]any{{"col": "id", "op": "eq", "value": "one"}}}, "invalid_filter"},
		{"negative limit", "query_data", map[string]any{"dataset": "sensors/readings", "limit": -1}, "invalid_argument"},
		{"bogus handle", "query_next_page", map[string]any{"result_handle": "h_bogus", "page_token": tok}, "invalid_page_token"},
		{"tampered token", "query_next_page", map[string]any{"result_handle": first.ResultHandle, "page_token": tampered}, "invalid_page_token"},
		{"unsupported format", "query_data", map[string]any{"dataset": "sensors/readings", "output_format": "xlsx"}, "unsupported_format"},
		{"unknown argument", "query_data", map[string]any{"dataset": "sensors/readings", "colums": []string{"id"}}, "invalid_argument"},
		{"mistyped argument", "query_data", map[string]any{"dataset": "sensors/readings", "limit": "ten"}, "invalid_argument"},
		{"unknown aggregate", "query_data", map[string]any{"dataset": "sensors/readings",
			"aggs": []map[string]any{{"col": "value", "fn": "mean"}}}, "invalid_aggregate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := callErr(t, c, tc.tool, tc.args)
			if tc.code != "" && e.Code != tc.code {
				t.Fatalf("code %q, want %q (%s)", e.Code, tc.code, e.Error)
			}
			if e.Hint == "" && !strings.Contains(e.Error, "schema") {
				t.Fatalf("no hint: %+v", e)
			}
		})
	}

	t.Run("suggestions", func(t *testing.T) {
		e := callErr(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"valu"}})
		s, _ := e.Diagnostics["suggestions"].([]any)
		if len(s) == 0 || s[0] != "value" {
			t.Fatalf("suggestions %v", e.Diagnostics)
		}
	})
}

func flip(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
	}
	return string(b)
}

// TestHandleExpired lets a handle outlive its TTL and expects handle_expired.
func TestHandleExpired(t *testing.T) {
	c := startStdio(t, "--handle-ttl", "1s")
	var first queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}}, &first)
	if first.Method != "handle" {
		t.Fatalf("expected a handle: %+v", first)
	}
	time.Sleep(2500 * time.Millisecond)
	e := callErr(t, c, "query_next_page", map[string]any{"result_handle": first.ResultHandle, "page_token": first.PageInfo.PageToken})
	if e.Code != "handle_expired" || e.Hint == "" {
		t.Fatalf("got %+v, want handle_expired with a hint", e)
	}
}

// TestPageTokenAfterRestart: a page token of a server that has since
// restarted is handle_expired with the re-run hint (not "invalid"), while a
// token modified on the same server stays invalid_page_token.
func TestPageTokenAfterRestart(t *testing.T) {
	args := map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}}
	var before queryResult
	old := startStdio(t)
	call(t, old, "query_data", args, &before)
	if before.Method != "handle" {
		t.Fatalf("expected a handle: %+v", before)
	}
	_ = old.Close()

	c := startStdio(t)
	e := callErr(t, c, "query_next_page", map[string]any{"result_handle": before.ResultHandle, "page_token": before.PageInfo.PageToken})
	if e.Code != "handle_expired" || !strings.Contains(e.Hint, "re-run") || !strings.Contains(e.Error, "restarted") {
		t.Fatalf("old token after a restart: %+v", e)
	}
	var now queryResult
	call(t, c, "query_data", args, &now)
	tok := now.PageInfo.PageToken
	payload, mac, _ := strings.Cut(tok, ".")
	e = callErr(t, c, "query_next_page", map[string]any{"result_handle": now.ResultHandle, "page_token": payload + "." + flip(mac)})
	if e.Code != "invalid_page_token" {
		t.Fatalf("modified token: %+v", e)
	}
}
