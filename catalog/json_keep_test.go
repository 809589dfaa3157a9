package catalog

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestJSONKeptColumns: opening newline-delimited JSON with a keeper keeps
// every column whose chunks convert exactly to the file's kind, and leaves
// the others to the file (checkJSONChunkedKept compares what is kept with
// a one-pass scan).
func TestJSONKeptColumns(t *testing.T) {
	// lines: n records from rec, then m from late (the chunks are small,
	// so late's records are chunks of their own).
	lines := func(n int, rec string, m int, late string) []byte {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, rec+"\n", i)
		}
		for i := range m {
			fmt.Fprintf(&b, late+"\n", i)
		}
		return []byte(b.String())
	}
	all := []string{"n", "code", "day", "w", "nested.a", "nested.b", "late"}
	tests := []struct {
		name  string
		data  []byte
		chunk int
		read  *ReadSpec
		kept  []string
	}{
		{"sales, one chunk per 4 MiB", genSalesJSON(3000), 0, nil,
			[]string{"id", "ts", "region", "product", "category", "qty", "price", "discount", "note"}},
		{"kind changes in one chunk", ndjsonLines(kindChangeRecords(3000), "\n"), 0, nil, all},
		// Chunks of ints in a float column and in a text column convert;
		// date chunks of a text column do not.
		{"kind changes across chunks", ndjsonLines(kindChangeRecords(3000), "\n"), 8 << 10, nil,
			[]string{"n", "code", "w", "nested.a", "nested.b", "late"}},
		{"ints, then strings: text", lines(2000, `{"a":%d}`, 10, `{"a":"x%d"}`), 4 << 10, nil, []string{"a"}},
		{"floats, then strings: not kept", lines(2000, `{"a":%d.5,"b":1}`, 10, `{"a":"x%d","b":2}`), 4 << 10, nil, []string{"b"}},
		{"bools, then numbers: not kept", lines(2000, `{"a":true,"b":%d}`, 10, `{"a":%d,"b":2}`), 4 << 10, nil, []string{"b"}},
		{"dates, then timestamps", lines(2000, `{"a":"2024-01-01","i":%d}`, 10, `{"a":"2024-01-%02d 10:00:00"}`), 4 << 10, nil, []string{"i"}},
		{"ints, then nulls and missing keys", lines(2000, `{"a":%d,"b":null}`, 500, `{"b":%d}`), 4 << 10, nil, []string{"a", "b"}},
		{"numbers as text, then a decimal", lines(2000, `{"a":%de3}`, 1, `{"a":0.%d5}`), 4 << 10, nil, []string{"a"}},
		{"duplicate keys: the last wins", lines(3000, `{"a":%d,"a":null,"b":"x","b":2}`, 0, ""), 4 << 10, nil, []string{"a", "b"}},
		{"type override", lines(2000, `{"a":%d,"b":2}`, 0, ""), 4 << 10,
			&ReadSpec{Types: map[string]TypeOverride{"a": {Type: "string"}}}, []string{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jf := jsonFormat{lim: Limits{}.WithDefaults(), chunkBytes: tc.chunk, workers: 2}
			fi := writeJSONInput(t, "f.jsonl", tc.data)
			fi.Read = tc.read
			chunked, kept := checkJSONChunkedKept(t, jf, fi, 1000)
			if !chunked || !reflect.DeepEqual(kept, tc.kept) {
				t.Fatalf("chunked %v, kept %v, want %v", chunked, kept, tc.kept)
			}
		})
	}
}

// TestJSONKeeperDeclines: a keeper that declines gets nothing, and the
// file opens as without one.
func TestJSONKeeperDeclines(t *testing.T) {
	fi := writeJSONInput(t, "f.jsonl", genSalesJSON(2000))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	k := &testKeeper{mem: mem, decline: true}
	jf := jsonFormat{lim: Limits{}.WithDefaults(), keeper: k}
	dss, err := jf.open(context.Background(), fi, true)
	if err != nil {
		t.Fatal(err)
	}
	if k.ds != nil || dss[0].RowCount != 2000 || !dss[0].Source.(*jsonSource).chunked {
		t.Fatalf("kept %v, %d rows, chunked %v", k.kept(), dss[0].RowCount, dss[0].Source.(*jsonSource).chunked)
	}
}
