package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Scenario files (testdata/queries/*.json) pin the semantics of every knob,
// filter op and aggregate function end to end: a spec goes through
// planner.Build (and, in some runs, planner.Optimize with filter pushdown)
// and the engine over a tiny inline dataset, and the rows must equal the
// expected ones. Every case runs with several batch sizes, with the
// dataset's string columns plain and dictionary-encoded (with per-batch
// and shared dictionaries), optimized and not.
//
// File format:
//
//	{"description": "...",
//	 "data": {"columns": [{"name": "k", "type": "string"}, ...],
//	          "rows": [["a", 1], ...]},
//	 "cases": [{"name": "...", "spec": {...},
//	            "columns": ["k", "n"],          (optional: output names)
//	            "rows": [["a", 1], ...],        (expected rows, in order)
//	            "unordered": true,              (optional: compare as a multiset)
//	            "error": "invalid_filter"}]}    (instead of rows: the error code)
//
// Types: int8..int64, uint8..uint64, float32, float64, string,
// large_string, dict (dictionary<int32, utf8>), bool, date (YYYY-MM-DD),
// timestamp (ms, UTC, ISO-8601). Every case over string columns also runs
// with them dictionary-encoded, with int32 and with int16 indices. Floats may be written "NaN", "Inf", "-Inf",
// "-0". Expected floats match within a relative 1e-9.
type scenarioFile struct {
	Description string `json:"description"`
	Data        struct {
		Columns []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"columns"`
		Rows [][]any `json:"rows"`
	} `json:"data"`
	Cases []scenarioCase `json:"cases"`
}

type scenarioCase struct {
	Name      string          `json:"name"`
	Spec      json.RawMessage `json:"spec"`
	Columns   []string        `json:"columns"`
	Rows      [][]any         `json:"rows"`
	Unordered bool            `json:"unordered"`
	Error     string          `json:"error"`
}

var scenarioTypes = map[string]arrow.DataType{
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16, "int32": arrow.PrimitiveTypes.Int32,
	"int64": arrow.PrimitiveTypes.Int64, "uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16,
	"uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"float32": arrow.PrimitiveTypes.Float32, "float64": arrow.PrimitiveTypes.Float64,
	"string": arrow.BinaryTypes.String, "large_string": arrow.BinaryTypes.LargeString,
	"dict": tDict, "bool": arrow.FixedWidthTypes.Boolean, "date": arrow.FixedWidthTypes.Date32,
	"timestamp": &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"},
}

var tDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// scenarioValue converts a JSON cell to the tcol convention for dt.
func scenarioValue(v any, dt arrow.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch {
	case arrow.IsInteger(dt.ID()):
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("want an integer, got %v", v)
		}
		if dt.ID() == arrow.UINT64 {
			u, err := strconv.ParseUint(n.String(), 10, 64)
			return u, err
		}
		return n.Int64()
	case arrow.IsFloating(dt.ID()):
		switch x := v.(type) {
		case json.Number:
			return x.Float64()
		case string:
			return specialFloat(x)
		}
	case dt.ID() == arrow.BOOL:
		return v, nil
	case dt.ID() == arrow.DATE32:
		t, err := time.Parse("2006-01-02", v.(string))
		return int32(arrow.Date32FromTime(t)), err
	case dt.ID() == arrow.TIMESTAMP:
		t, err := time.Parse(time.RFC3339Nano, v.(string))
		return t.UnixMilli(), err
	default:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %v", v)
		}
		return s, nil
	}
	return nil, fmt.Errorf("bad value %v for %s", v, dt)
}

func specialFloat(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "-0":
		return math.Copysign(0, -1), nil
	}
	return 0, fmt.Errorf("bad float %q", s)
}

// normCell turns an output cell (tcol convention) of type dt into a JSON-like value.
func normCell(v any, dt arrow.DataType) any {
	if v == nil {
		return nil
	}
	switch dt.ID() {
	case arrow.DATE32:
		return arrow.Date32(v.(int32)).FormattedString()
	case arrow.TIMESTAMP:
		return arrow.Timestamp(v.(int64)).ToTime(dt.(*arrow.TimestampType).Unit).UTC().Format(time.RFC3339Nano)
	case arrow.FLOAT32, arrow.FLOAT64:
		f := v.(float64)
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Inf"
		case math.IsInf(f, -1):
			return "-Inf"
		}
	}
	return v
}

func cellMatches(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case json.Number:
		switch g := got.(type) {
		case int64:
			n, err := w.Int64()
			return err == nil && n == g
		case uint64:
			n, err := strconv.ParseUint(w.String(), 10, 64)
			return err == nil && n == g
		case float64:
			f, err := w.Float64()
			return err == nil && floatClose(g, f)
		}
		return false
	case string:
		return got == w
	case bool:
		return got == w
	}
	return false
}

func floatClose(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func rowsMatch(got [][]any, want [][]any, unordered bool) bool {
	if len(got) != len(want) {
		return false
	}
	if unordered {
		used := make([]bool, len(got))
	outer:
		for _, w := range want {
			for i, g := range got {
				if !used[i] && rowMatches(g, w) {
					used[i] = true
					continue outer
				}
			}
			return false
		}
		return true
	}
	for i := range got {
		if !rowMatches(got[i], want[i]) {
			return false
		}
	}
	return true
}

func rowMatches(g, w []any) bool {
	if len(g) != len(w) {
		return false
	}
	for j := range g {
		if !cellMatches(g[j], w[j]) {
			return false
		}
	}
	return true
}

func jsonRows(rows [][]any) string {
	var b strings.Builder
	for _, r := range rows {
		js, _ := json.Marshal(r)
		b.Write(js)
		b.WriteString(",\n")
	}
	return b.String()
}

func loadScenario(t *testing.T, path string) scenarioFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f scenarioFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// scenarioData builds the dataset, with string columns dictionary-encoded
// as dict when it is not nil.
func scenarioData(t *testing.T, f scenarioFile, dict *arrow.DictionaryType) []tcol {
	t.Helper()
	var cols []tcol
	for c, spec := range f.Data.Columns {
		dt, ok := scenarioTypes[spec.Type]
		if !ok {
			t.Fatalf("column %s: unknown type %q", spec.Name, spec.Type)
		}
		if dict != nil && dt.ID() == arrow.STRING {
			dt = dict
		}
		col := tcol{name: spec.Name, typ: dt, vals: []any{}}
		for r, row := range f.Data.Rows {
			if len(row) != len(f.Data.Columns) {
				t.Fatalf("row %d has %d cells, want %d", r, len(row), len(f.Data.Columns))
			}
			v, err := scenarioValue(row[c], dt)
			if err != nil {
				t.Fatalf("row %d column %s: %v", r, spec.Name, err)
			}
			col.vals = append(col.vals, v)
		}
		cols = append(cols, col)
	}
	return cols
}

type pushAllFilters struct{}

func (pushAllFilters) HandlesFilter(planner.Predicate) bool { return true }

func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/queries/*.json")
	if len(files) == 0 {
		t.Fatal("no scenario files under testdata/queries")
	}
	total := 0
	for _, path := range files {
		f := loadScenario(t, path)
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		hasStrings := slices.ContainsFunc(f.Data.Columns, func(c struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}) bool {
			return c.Type == "string"
		})
		for _, c := range f.Cases {
			total++
			t.Run(name+"/"+c.Name, func(t *testing.T) {
				var spec planner.Spec
				dec := json.NewDecoder(bytes.NewReader(c.Spec))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&spec); err != nil {
					t.Fatalf("bad spec: %v", err)
				}
				// plain strings, and dictionary-encoded with int32 and int16
				// (the CSV column cache's) indices
				for _, dict := range []*arrow.DictionaryType{nil, tDict, tDict16} {
					if dict != nil && !hasStrings {
						continue
					}
					runScenario(t, scenarioData(t, f, dict), spec, c, dict)
				}
			})
		}
	}
	t.Logf("%d scenarios in %d files", total, len(files))
}

func runScenario(t *testing.T, data []tcol, spec planner.Spec, c scenarioCase, dict *arrow.DictionaryType) {
	t.Helper()
	schema := schemaOf(data)
	plan, err := planner.Build(spec, planner.Input{Dataset: "t", Schema: schema, RowCount: int64(len(data[0].vals)), RowCountExact: true})
	if err != nil {
		if c.Error != "" && qerr.Code(err) == c.Error {
			return
		}
		t.Fatalf("build: %v (want error %q)", err, c.Error)
	}
	type variant struct {
		name   string
		plan   planner.Node
		bs     int
		shared bool
	}
	opt, err := planner.Optimize(plan, planner.OptimizeOptions{Pushdown: pushAllFilters{}})
	if err != nil {
		t.Fatalf("optimize: %v", err)
	}
	opt2, err := planner.Optimize(plan, planner.OptimizeOptions{})
	if err != nil {
		t.Fatalf("optimize: %v", err)
	}
	variants := []variant{
		{"built/bs=1", plan, 1, false}, {"built/bs=1000", plan, 1000, false},
		{"optimized-pushdown/bs=2", opt, 2, false}, {"optimized/bs=3", opt2, 3, true}, {"optimized/bs=1000", opt2, 1000, true},
	}
	for _, v := range variants {
		alloc := newAlloc()
		src := newSource(alloc, data)
		src.noCopy = v.shared // zero-copy slices share one dictionary across batches
		got, err := run(t, v.plan, src, Options{Alloc: alloc, BatchSize: v.bs})
		src.release()
		alloc.AssertSize(t, 0)
		label := fmt.Sprintf("%s dict=%v", v.name, dict)
		if c.Error != "" {
			if qerr.Code(err) != c.Error {
				t.Fatalf("%s: err = %v, want code %q\nplan:\n%s", label, err, c.Error, planner.String(v.plan))
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v\nplan:\n%s", label, err, planner.String(v.plan))
		}
		out := v.plan.Schema()
		if c.Columns != nil {
			var names []string
			for _, f := range out.Fields() {
				names = append(names, f.Name)
			}
			if !slices.Equal(names, c.Columns) {
				t.Fatalf("%s: columns %q, want %q", label, names, c.Columns)
			}
		}
		norm := make([][]any, len(got))
		for i, r := range got {
			norm[i] = make([]any, len(r))
			for j, x := range r {
				norm[i][j] = normCell(x, out.Field(j).Type)
			}
		}
		if c.Rows == nil {
			t.Fatalf("%s: the case has neither rows nor error; got rows\n%s", label, jsonRows(norm))
		}
		if !rowsMatch(norm, c.Rows, c.Unordered) {
			t.Fatalf("%s: got rows\n%swant\n%splan:\n%s", label, jsonRows(norm), jsonRows(c.Rows), planner.String(v.plan))
		}
	}
}

// The scenario runner itself must catch differences.
func TestScenarioMatcher(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	if !cellMatches(int64(3), n("3")) || cellMatches(int64(3), n("4")) || !cellMatches(0.1+0.2, n("0.3")) ||
		cellMatches(1.0, n("1.1")) || !cellMatches("NaN", "NaN") || cellMatches(nil, n("0")) || !cellMatches(nil, nil) {
		t.Fatal("cellMatches is wrong")
	}
	if rowsMatch([][]any{{int64(1)}, {int64(2)}}, [][]any{{n("2")}, {n("1")}}, false) ||
		!rowsMatch([][]any{{int64(1)}, {int64(2)}}, [][]any{{n("2")}, {n("1")}}, true) {
		t.Fatal("rowsMatch is wrong")
	}
}
