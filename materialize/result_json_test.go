package materialize

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestResultAppendJSON checks that AppendJSON and json.Marshal describe the
// same object for every delivery shape.
func TestResultAppendJSON(t *testing.T) {
	cases := []*Result{
		{Method: MethodDirect, Data: json.RawMessage(`[{"a":1,"b":"x"}]`), RowCount: 1, TotalRows: 1, Format: "json", Warnings: []string{}},
		{Method: MethodDirect, Data: json.RawMessage(`[]`), Warnings: []string{}},
		{Method: MethodFile, ResourceURI: "quarry://artifacts/a_x.parquet", Format: "parquet", SizeBytes: 10, MIMEType: "application/vnd.apache.parquet",
			Preview: json.RawMessage(`[{"a":null}]`), Columns: []ColumnInfo{{Name: "a", Type: "int64"}}, RowCount: 5, TotalRows: 5, Warnings: []string{"w"}},
		{Method: MethodHandle, Data: json.RawMessage(`[{"a":"\u00e9"}]`), ResultHandle: "h_1", PageInfo: &PageInfo{PageToken: "t", Size: 1, HasMore: true},
			RowCount: 1, TotalRows: 9, Truncated: true, Warnings: []string{}},
	}
	for i, r := range cases {
		got, err := r.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(r)
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("case %d: invalid JSON %s: %v", i, got, err)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
