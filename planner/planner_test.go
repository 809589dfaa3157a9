package planner_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/golden"
	"github.com/quarrydb/quarry/planner"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func testInput() planner.Input {
	return planner.Input{
		Dataset: "sales/orders",
		Schema: arrow.NewSchema([]arrow.Field{
			{Name: "order_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "ordered_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
			{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
			{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "paid", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
			{Name: "blob", Type: arrow.Null, Nullable: true, Metadata: arrow.NewMetadata([]string{planner.UnsupportedMetaKey}, []string{"opaque"})},
		}, nil),
		RowCount: 3000, RowCountExact: true,
	}
}

func spec(t *testing.T, js string) planner.Spec {
	t.Helper()
	var s planner.Spec
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("bad spec %s: %v", js, err)
	}
	return s
}

func TestBuildErrors(t *testing.T) {
	cases := []struct {
		name, spec, code string
		cat              error
	}{
		{"unknown column", `{"columns":["regon"]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
		{"duplicate column", `{"columns":["qty","qty"]}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"unknown filter column", `{"filters":[{"col":"prise","op":"gt","value":1}]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
		{"bad op", `{"filters":[{"col":"qty","op":"like","value":1}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"string for int", `{"filters":[{"col":"qty","op":"eq","value":"ten"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"hex for int", `{"filters":[{"col":"qty","op":"gt","value":"0x10"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"NaN for int", `{"filters":[{"col":"qty","op":"gt","value":"NaN"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"float beyond float64", `{"filters":[{"col":"price","op":"lt","value":1e400}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"missing value", `{"filters":[{"col":"qty","op":"eq"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"null value eq", `{"filters":[{"col":"qty","op":"eq","value":null}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"value on is_null", `{"filters":[{"col":"qty","op":"is_null","value":3}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"contains on int", `{"filters":[{"col":"qty","op":"contains","value":"1"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"empty in", `{"filters":[{"col":"region","op":"in","value":[]}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"in not list", `{"filters":[{"col":"region","op":"in","value":"north"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"range empty", `{"filters":[{"col":"price","op":"range","value":{}}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"range bad key", `{"filters":[{"col":"price","op":"range","value":{"from":1}}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"bad date", `{"filters":[{"col":"day","op":"gte","value":"March 1"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"bool ordering", `{"filters":[{"col":"paid","op":"lt","value":true}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"list for eq", `{"filters":[{"col":"qty","op":"eq","value":[1,2]}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"negative limit", `{"limit":-1}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"negative offset", `{"offset":-5}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"unknown agg", `{"aggs":[{"col":"qty","fn":"mean"}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"sum on string", `{"aggs":[{"col":"region","fn":"sum"}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"star with sum", `{"aggs":[{"col":"*","fn":"sum"}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"duplicate agg names", `{"group_by":["region"],"aggs":[{"col":"qty","fn":"sum","as":"region"}]}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"order by unknown", `{"order_by":[{"col":"qtty"}]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
		{"order by non-output after agg", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"order_by":[{"col":"qty"}]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
		{"unsupported column filter", `{"filters":[{"col":"blob","op":"is_null"}]}`, qerr.CodeUnsupportedType, qerr.ErrUnsupported},
		{"unsupported column select", `{"columns":["blob"]}`, qerr.CodeUnsupportedType, qerr.ErrUnsupported},
		{"not_in empty", `{"filters":[{"col":"qty","op":"not_in","value":[]}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"starts_with on int", `{"filters":[{"col":"qty","op":"starts_with","value":"1"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"regex syntax", `{"filters":[{"col":"region","op":"regex","value":"[a-"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"regex no value", `{"filters":[{"col":"region","op":"regex"}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"case_insensitive on range", `{"filters":[{"col":"region","op":"range","value":{"min":"a"},"case_insensitive":true}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"case_insensitive on number", `{"filters":[{"col":"price","op":"eq","value":1,"case_insensitive":true}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"any empty", `{"filters":[{"any":[]}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"any plus op", `{"filters":[{"op":"eq","any":[{"col":"qty","op":"eq","value":1}]}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"any member unknown column", `{"filters":[{"any":[{"col":"qtty","op":"eq","value":1}]}]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
		{"filter without col", `{"filters":[{"op":"eq","value":1}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"filter without op", `{"filters":[{"col":"qty","value":1}]}`, qerr.CodeInvalidFilter, qerr.ErrInvalidArgument},
		{"quantile without q", `{"aggs":[{"col":"price","fn":"quantile"}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"quantile q > 1", `{"aggs":[{"col":"price","fn":"quantile","q":1.01}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"q on sum", `{"aggs":[{"col":"price","fn":"sum","q":0.5}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"median on string", `{"aggs":[{"col":"region","fn":"median"}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"stddev on bool", `{"aggs":[{"col":"paid","fn":"stddev"}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"agg expression on string", `{"aggs":[{"col":"region * 2","fn":"sum"}]}`, qerr.CodeInvalidAggregate, qerr.ErrInvalidArgument},
		{"agg expression unknown column", `{"aggs":[{"col":"qty * prise","fn":"sum"}]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
		{"expression parse error", `{"columns":["qty * (price"]}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"expression on date", `{"columns":["day * 2"]}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"expression on unsupported column", `{"columns":["\"blob\" AS b"]}`, qerr.CodeUnsupportedType, qerr.ErrUnsupported},
		{"expression alias taken", `{"columns":["qty * 2 AS price"]}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"expression twice", `{"columns":["qty * 2", "qty*2"]}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"null_policy unknown", `{"null_policy":"ignore"}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"top_n without aggregate", `{"top_n":3}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"top_n negative", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"top_n":-2}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"top_n no ranking", `{"group_by":["region"],"top_n":2}`, qerr.CodeInvalidArgument, qerr.ErrInvalidArgument},
		{"distinct with hidden sort key", `{"columns":["region"],"distinct":true,"order_by":[{"col":"qty"}]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
		{"order by unknown expression column", `{"columns":["region"],"order_by":[{"col":"qty * prise"}]}`, qerr.CodeInvalidColumn, qerr.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planner.Build(spec(t, c.spec), testInput())
			if err == nil {
				t.Fatal("expected an error")
			}
			if !errors.Is(err, c.cat) {
				t.Errorf("category: got %v, want %v", err, c.cat)
			}
			if got := qerr.Code(err); got != c.code {
				t.Errorf("code: got %q, want %q (%v)", got, c.code, err)
			}
			if qerr.As(err).Hint == "" {
				t.Errorf("no hint in %v", err)
			}
			if f, _ := qerr.As(err).Diagnostics["field"].(string); f == "" && c.cat == qerr.ErrInvalidArgument {
				t.Errorf("no field diagnostic in %v", err)
			}
		})
	}
}

// Errors name the offending field precisely (OR group members included)
// and suggest the closest names.
func TestErrorFieldsAndSuggestions(t *testing.T) {
	cases := []struct {
		spec, field string
		sugg        []string
	}{
		{`{"filters":[{"col":"qty","op":"gt","value":1},{"any":[{"col":"qty","op":"eq","value":1},{"col":"regon","op":"eq","value":"x"}]}]}`, "filters[1].any[1].col", []string{"region"}},
		{`{"filters":[{"col":"region","op":"startswith","value":"a"}]}`, "filters[0].op", []string{"starts_with"}},
		{`{"filters":[{"col":"region","op":"not-in","value":["a"]}]}`, "filters[0].op", []string{"not_in"}},
		{`{"aggs":[{"col":"price","fn":"medain"}]}`, "aggs[0].fn", []string{"median"}},
		{`{"aggs":[{"col":"price","fn":"count_distinc"}]}`, "aggs[0].fn", []string{"count_distinct"}},
		{`{"columns":["region", "qty * prce"]}`, "columns[1]", []string{"price"}},
		{`{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"order_by":[{"col":"count_al"}]}`, "order_by[0].col", []string{"count_all"}},
		{`{"columns":["region"],"order_by":[{"col":"prise"}]}`, "order_by[0].col", []string{"price"}},
		{`{"aggs":[{"col":"price","fn":"quantile","q":2}]}`, "aggs[0].q", nil},
	}
	for _, c := range cases {
		_, err := planner.Build(spec(t, c.spec), testInput())
		if err == nil {
			t.Fatalf("%s: no error", c.spec)
		}
		e := qerr.As(err)
		if got := e.Diagnostics["field"]; got != c.field {
			t.Errorf("%s: field %v, want %s (%v)", c.spec, got, c.field, err)
		}
		if c.sugg != nil {
			got, _ := e.Diagnostics["suggestions"].([]string)
			if len(got) == 0 || got[0] != c.sugg[0] {
				t.Errorf("%s: suggestions %v, want %v first", c.spec, got, c.sugg[0])
			}
		}
	}
}

// A regex pattern is capped at planner.MaxRegexLen characters.
func TestRegexLengthCap(t *testing.T) {
	long := strings.Repeat("a", planner.MaxRegexLen+1)
	_, err := planner.Build(spec(t, `{"filters":[{"col":"region","op":"regex","value":"`+long+`"}]}`), testInput())
	if qerr.Code(err) != qerr.CodeInvalidFilter {
		t.Fatalf("err = %v", err)
	}
	if _, err := planner.Build(spec(t, `{"filters":[{"col":"region","op":"regex","value":"`+long[1:]+`"}]}`), testInput()); err != nil {
		t.Fatal(err)
	}
}

// Dictionary-encoded string columns are string columns to the planner:
// string ops accept them and aggregate outputs are decoded.
func TestDictionaryColumns(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	in := planner.Input{Dataset: "d", Schema: arrow.NewSchema([]arrow.Field{
		{Name: "city", Type: dict, Nullable: true}, {Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)}
	n, err := planner.Build(spec(t, `{"filters":[{"col":"city","op":"contains","value":"ev","case_insensitive":true}],"group_by":["city"],"aggs":[{"col":"city","fn":"max"},{"col":"city","fn":"count_distinct"}]}`), in)
	if err != nil {
		t.Fatal(err)
	}
	out := n.Schema()
	for _, i := range []int{0, 1} {
		if out.Field(i).Type.ID() != arrow.STRING {
			t.Errorf("output %s is %s, want decoded utf8", out.Field(i).Name, out.Field(i).Type)
		}
	}
	if planner.TypeName(dict) != "string" {
		t.Errorf("TypeName = %s", planner.TypeName(dict))
	}
	p, err := planner.Build(spec(t, `{"columns":["city"],"order_by":[{"col":"city"}]}`), in)
	if err != nil {
		t.Fatal(err)
	}
	if !arrow.TypeEqual(p.Schema().Field(0).Type, dict) {
		t.Errorf("projection changed the type to %s", p.Schema().Field(0).Type)
	}
}

func TestSuggestions(t *testing.T) {
	_, err := planner.Build(spec(t, `{"columns":["regon"]}`), testInput())
	sugg, _ := qerr.As(err).Diagnostics["suggestions"].([]string)
	if len(sugg) == 0 || sugg[0] != "region" {
		t.Fatalf("suggestions = %v, want region first", sugg)
	}
}

func TestCoercion(t *testing.T) {
	cases := []struct {
		name, spec string
		want       any
	}{
		{"int from number", `{"filters":[{"col":"qty","op":"eq","value":3}]}`, int64(3)},
		{"int from string", `{"filters":[{"col":"qty","op":"eq","value":"3"}]}`, int64(3)},
		{"int from 3.0", `{"filters":[{"col":"qty","op":"eq","value":3.0}]}`, int64(3)},
		{"big int exact", `{"filters":[{"col":"order_id","op":"eq","value":9007199254740993}]}`, int64(9007199254740993)},
		{"float", `{"filters":[{"col":"price","op":"gt","value":"2.5"}]}`, 2.5},
		{"bool", `{"filters":[{"col":"paid","op":"eq","value":"TRUE"}]}`, true},
		{"date", `{"filters":[{"col":"day","op":"eq","value":"1970-01-11"}]}`, int32(10)},
		{"timestamp ms", `{"filters":[{"col":"ordered_at","op":"gte","value":"1970-01-01T00:00:01Z"}]}`, int64(1000)},
		{"timestamp zone", `{"filters":[{"col":"ordered_at","op":"gte","value":"1970-01-01T01:00:01+01:00"}]}`, int64(1000)},
		{"string from number", `{"filters":[{"col":"region","op":"eq","value":7}]}`, "7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := planner.Build(spec(t, c.spec), testInput())
			if err != nil {
				t.Fatal(err)
			}
			var f *planner.Filter
			for n != nil {
				if x, ok := n.(*planner.Filter); ok {
					f = x
					break
				}
				n = n.Children()[0]
			}
			if f == nil {
				t.Fatal("no filter node")
			}
			if got := f.Preds[0].Value.Value; got != c.want {
				t.Fatalf("got %v (%T), want %v (%T)", got, got, c.want, c.want)
			}
		})
	}
}

type pushAll struct{}

func (pushAll) HandlesFilter(p planner.Predicate) bool { return p.Op != planner.OpContains }

// TestGoldenPlans prints the built and the optimized plan of each spec in
// testdata/plans/*.json and compares with the .golden file next to it.
// Regenerate with: go test ./planner -run TestGoldenPlans -update
func TestGoldenPlans(t *testing.T) {
	files, _ := filepath.Glob("testdata/plans/*.json")
	if len(files) == 0 {
		t.Fatal("no plan specs under testdata/plans")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sp := spec(t, string(raw))
			n, err := planner.Build(sp, joinInput(len(sp.Join))) // ref/regions joined as often as the spec joins
			if err != nil {
				t.Fatal(err)
			}
			opts := planner.OptimizeOptions{}
			if strings.HasPrefix(name, "pushdown_") {
				opts.Pushdown = pushAll{}
			}
			if strings.HasPrefix(name, "sources_") { // each scanned dataset's own pushdown and zone maps
				opts.Sources = map[string]planner.SourceOptions{"ref/regions": {Pushdown: pushAll{}}, "sales/orders": {Zones: zonesNonString{}}}
			}
			o, err := planner.Optimize(n, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := "-- built\n" + planner.String(n) + "-- optimized\n" + planner.String(o) + "-- output\n" + o.Schema().String() + "\n"
			golden.Check(t, strings.TrimSuffix(f, ".json")+".golden", got, *update)
			checkIndices(t, o)
		})
	}
}

// checkIndices asserts every resolved index points at the named column.
func checkIndices(t *testing.T, n planner.Node) {
	t.Helper()
	for _, c := range n.Children() {
		checkIndices(t, c)
	}
	at := func(s *arrow.Schema, i int, name string) {
		if i < 0 || i >= s.NumFields() || s.Field(i).Name != name {
			t.Errorf("%s: index %d does not point at %q in %s", n.Describe(), i, name, s)
		}
	}
	var preds func(s *arrow.Schema, ps []planner.Predicate)
	preds = func(s *arrow.Schema, ps []planner.Predicate) {
		for _, p := range ps {
			if p.Op == planner.OpAny {
				preds(s, p.Any)
				continue
			}
			at(s, p.Index, p.Col)
		}
	}
	switch x := n.(type) {
	case *planner.Scan:
		preds(x.Out, x.Filters)
	case *planner.Filter:
		preds(x.Input.Schema(), x.Preds)
	case *planner.Deduplicate:
		for i, c := range x.Columns {
			at(x.Input.Schema(), x.Indices[i], c)
		}
	case *planner.Compute:
		for _, e := range x.Exprs {
			planner.WalkExpr(e.Expr, func(e planner.Expr) {
				if c, ok := e.(*planner.ColRef); ok {
					at(x.Input.Schema(), c.Index, c.Name)
				}
			})
		}
	case *planner.Project:
		for i, c := range x.Columns {
			at(x.Input.Schema(), x.Indices[i], c)
		}
	case *planner.Aggregate:
		for i, g := range x.GroupBy {
			at(x.Input.Schema(), x.GroupIdx[i], g)
		}
		for _, a := range x.Aggs {
			if a.Col != "*" {
				at(x.Input.Schema(), a.Index, a.Col)
			}
			if c := a.ArgColumn(); c != "" {
				at(x.Input.Schema(), a.ArgIndex, c)
			}
			preds(x.Input.Schema(), a.Filter)
		}
	case *planner.Sort:
		for _, k := range x.Keys {
			at(x.Input.Schema(), k.Index, k.Col)
		}
	}
}

func TestOptimizeDoesNotMutateInput(t *testing.T) {
	n, err := planner.Build(spec(t, `{"columns":["region"],"filters":[{"col":"qty","op":"gt","value":1}],"limit":5}`), testInput())
	if err != nil {
		t.Fatal(err)
	}
	before := planner.String(n)
	if _, err := planner.Optimize(n, planner.OptimizeOptions{Pushdown: pushAll{}}); err != nil {
		t.Fatal(err)
	}
	if after := planner.String(n); after != before {
		t.Fatalf("Optimize mutated its input:\n%s\n---\n%s", before, after)
	}
}

func ExampleBuild() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var s planner.Spec
	_ = json.Unmarshal([]byte(`{"group_by":["region"],"aggs":[{"col":"qty","fn":"sum"}],
		"filters":[{"col":"qty","op":"gt","value":2}],"order_by":[{"col":"sum_qty","desc":true}],"limit":3}`), &s)
	plan, err := planner.Build(s, planner.Input{Dataset: "sales", Schema: schema})
	if err != nil {
		panic(err)
	}
	opt, _ := planner.Optimize(plan, planner.OptimizeOptions{})
	os.Stdout.WriteString(planner.String(opt))
	// Output:
	// Limit: offset=0 count=3
	//   Sort: sum_qty desc (nulls last)
	//     Aggregate: sum(qty) AS sum_qty BY region
	//       Filter: qty > 2
	//         Scan: sales columns=[region, qty]
}
