package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

func TestFirstRecords(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		n          int
		cols       []string
		rows       string // the rows as JSON
		wantErr    bool
	}{
		{name: "empty data", data: "", n: 5, cols: []string{}, rows: `[]`},
		{name: "no rows", data: `[]`, n: 5, cols: []string{}, rows: `[]`},
		{name: "key order kept", data: `[{"z":1,"a":"x"},{"z":2,"a":null}]`, n: 5, cols: []string{"z", "a"}, rows: `[[1,"x"],[2,null]]`},
		{name: "first n only", data: `[{"a":1},{"a":2},{"a":3}]`, n: 2, cols: []string{"a"}, rows: `[[1],[2]]`},
		{name: "nested values raw", data: `[{"l":[1,{"b":2}]}]`, n: 1, cols: []string{"l"}, rows: `[[[1,{"b":2}]]]`},
		{name: "not an array", data: `{"a":1}`, n: 1, wantErr: true},
		{name: "not records", data: `[[1,2]]`, n: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, rows, err := firstRecords(json.RawMessage(tc.data), tc.n)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			got, _ := json.Marshal(rows)
			if !reflect.DeepEqual(cols, tc.cols) || string(got) != tc.rows {
				t.Errorf("got %v %s, want %v %s", cols, got, tc.cols, tc.rows)
			}
		})
	}
}

func TestTPCHQueries(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"q01.sql", "q10.sql", "q02.sql", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("SELECT 1;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	qs, err := tpchQueries(dir)
	if err != nil || !reflect.DeepEqual(qs, []string{"Q1", "Q2", "Q10"}) {
		t.Fatalf("tpchQueries = %v, %v; want [Q1 Q2 Q10]", qs, err)
	}
	if sql, err := tpchSQL(dir, "Q10"); err != nil || sql != "SELECT 1" {
		t.Errorf("tpchSQL(Q10) = %q, %v; want SELECT 1 without the semicolon", sql, err)
	}
	for _, q := range []string{"Q3", "G1", "Qx"} {
		if _, err := tpchSQL(dir, q); err == nil {
			t.Errorf("tpchSQL(%s): no error", q)
		}
	}
	if _, err := tpchQueries(t.TempDir()); err == nil {
		t.Error("tpchQueries of an empty directory: no error")
	}
}

// TestRunSQL runs statements through runSQL over a real app on a small
// data root: the answer of a run, a paged answer, and a refusal's code.
func TestRunSQL(t *testing.T) {
	root := t.TempDir()
	csv := "r_regionkey,r_name\n"
	for i := range 300 {
		csv += fmt.Sprintf("%d,region %03d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(root, "region.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Data: root, ArtifactDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := map[string]any{}
	if err := runSQL(ctx, a.Service, service.SQLRequest{SQL: "SELECT r_name, r_regionkey FROM region WHERE r_regionkey < 2 ORDER BY r_regionkey DESC"}, rec, true); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal([]any{rec["rows"], rec["cols"], rec["first_rows"]})
	if want := `[2,["r_name","r_regionkey"],[["region 001",1],["region 000",0]]]`; string(got) != want {
		t.Errorf("answer %s, want %s", got, want)
	}
	if _, ok := rec["secs"].(float64); !ok {
		t.Errorf("no secs in %v", rec)
	}
	// 300 rows are more than one inline page: the first 100 still come (through the handle).
	rec = map[string]any{}
	if err := runSQL(ctx, a.Service, service.SQLRequest{SQL: "SELECT r_regionkey FROM region ORDER BY r_regionkey"}, rec, true); err != nil {
		t.Fatal(err)
	}
	if rows := rec["first_rows"].([][]json.RawMessage); rec["rows"] != int64(300) || len(rows) != firstRows || string(rows[99][0]) != "99" {
		t.Errorf("paged answer: rows %v, %d first rows", rec["rows"], len(rows))
	}
	err = runSQL(ctx, a.Service, service.SQLRequest{SQL: "SELECT * FROM read_csv('/etc/passwd')"}, map[string]any{}, true)
	if code := qerr.Code(err); code != "forbidden_sql" {
		t.Errorf("refusal code %q (%v), want forbidden_sql", code, err)
	}
}
