package planner_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

// opaque is a node type the bound rules do not know: nothing is proven.
type opaque struct{ planner.Node }

func TestResultBound(t *testing.T) {
	i64, str, date, boolean := arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Boolean
	schema := func(cols ...any) *arrow.Schema {
		var fs []arrow.Field
		for i := 0; i < len(cols); i += 2 {
			fs = append(fs, arrow.Field{Name: cols[i].(string), Type: cols[i+1].(arrow.DataType), Nullable: true})
		}
		return arrow.NewSchema(fs, nil)
	}
	// big: 10M rows (k, s, d, b); small: 25 rows (nk, name).
	bigS := schema("k", i64, "s", str, "d", date, "b", boolean)
	smallS := schema("nk", i64, "name", str)
	big := &planner.Scan{Dataset: "big", Out: bigS, RowCount: 10_000_000, RowCountExact: true}
	small := &planner.Scan{Dataset: "small", Out: smallS, RowCount: 25, RowCountExact: true}
	guessed := &planner.Scan{Dataset: "big", Out: bigS, RowCount: 10, RowCountExact: false}
	col := func(n planner.Node, name string) *planner.ColRef {
		i := n.Schema().FieldIndices(name)[0]
		return &planner.ColRef{Name: name, Index: i, Typ: n.Schema().Field(i).Type}
	}
	agg := func(in planner.Node, keys ...string) *planner.Aggregate {
		a := &planner.Aggregate{Input: in, Aggs: []planner.AggExpr{{Fn: funcs.AggCount, Col: "*", Index: -1, Name: "n", Type: i64}}}
		var fs []arrow.Field
		for _, k := range keys {
			i := in.Schema().FieldIndices(k)[0]
			a.GroupBy, a.GroupIdx = append(a.GroupBy, k), append(a.GroupIdx, i)
			fs = append(fs, in.Schema().Field(i))
		}
		a.Out = arrow.NewSchema(append(fs, arrow.Field{Name: "n", Type: i64}), nil)
		return a
	}
	compute := func(in planner.Node, name string, e planner.Expr) *planner.Compute {
		return &planner.Compute{Input: in, Exprs: []planner.NamedExpr{{Name: name, Expr: e}}}
	}
	project := func(in planner.Node, names ...string) *planner.Project {
		p := &planner.Project{Input: in, Columns: names}
		var fs []arrow.Field
		for _, n := range names {
			i := in.Schema().FieldIndices(n)[0]
			p.Indices, fs = append(p.Indices, i), append(fs, in.Schema().Field(i))
		}
		p.Out = arrow.NewSchema(fs, nil)
		return p
	}
	join := func(typ planner.JoinType, l, r planner.Node, lk, rk string, rcols ...string) *planner.Join {
		j := &planner.Join{Left: l, Right: r, Type: typ, Alias: "r", RightCols: rcols}
		if typ != planner.JoinCross {
			j.LeftKeys, j.RightKeys = []string{lk}, []string{rk}
			j.LeftIdx, j.RightIdx = []int{l.Schema().FieldIndices(lk)[0]}, []int{r.Schema().FieldIndices(rk)[0]}
		}
		return j
	}
	filter := func(in planner.Node, p planner.Predicate) *planner.Filter {
		p.Index = in.Schema().FieldIndices(p.Col)[0]
		return &planner.Filter{Input: in, Preds: []planner.Predicate{p}}
	}
	dateLit := func(s string) *planner.Literal {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return &planner.Literal{Type: date, Value: int32(d.Unix() / 86400)}
	}
	strLit := func(s string) planner.Literal { return planner.Literal{Type: str, Value: s} }
	konst := func(n int64) *planner.Const { return &planner.Const{Typ: i64, Int: n} }
	year := func(in planner.Node) planner.Node {
		return compute(in, "y", &planner.Call{Fn: "year", Args: []planner.Expr{col(in, "d")}, Typ: i64})
	}
	substr := func(in planner.Node, n int64) planner.Node {
		return compute(in, "p", &planner.Call{Fn: "substr", Args: []planner.Expr{col(in, "s"), konst(1), konst(n)}, Typ: str})
	}
	pairs := join(planner.JoinInner, big, small, "k", "nk", "nk", "name")
	left := join(planner.JoinLeft, big, small, "k", "nk", "name")
	perKey := agg(big, "k") // unique on k
	limit := func(in planner.Node, n int64) planner.Node { return &planner.Limit{Input: in, Count: n} }
	u := planner.Unbounded
	union, _ := planner.NewSetOp(planner.SetUnion, true, project(big, "k"), project(small, "nk"))
	except, _ := planner.NewSetOp(planner.SetExcept, false, project(big, "k"), project(small, "nk"))
	values, err := planner.NewValues([]string{"a"}, [][]planner.Expr{{konst(1)}, {konst(2)}, {konst(3)}})
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		n    planner.Node
		rows int64
	}{
		{"scan: its exact row count", big, 10_000_000},
		{"scan: a row count that is not exact bounds nothing", guessed, u},
		{"unknown node", opaque{big}, u},
		{"filter keeps its input's bound", filter(big, planner.Predicate{Col: "k", Op: funcs.OpEq, Value: &planner.Literal{Type: i64, Value: int64(1)}}), 10_000_000},
		{"sort", &planner.Sort{Input: small, Keys: []planner.SortKey{{Col: "nk"}}}, 25},
		{"limit", limit(big, 100), 100},
		{"limit without count", &planner.Limit{Input: small, Offset: 3, Count: -1}, 25},
		{"global aggregate", agg(pairs), 1},
		{"group by a big table's column stays big", agg(big, "k"), 10_000_000},
		{"group by a big table's string stays big", agg(big, "s"), 10_000_000},
		{"group by a boolean", agg(big, "b"), 3},
		{"group by a small table's column through a join", agg(pairs, "r.name"), 25},
		{"group by two columns of one table: its rows", agg(pairs, "r.name", "r.nk"), 25},
		{"group by columns of two tables multiplies", agg(join(planner.JoinCross, small, small, "", "", "name"), "name", "r.name"), 625},
		{"group by a left join's padded column: one more (null)", agg(left, "r.name"), 26},
		{"group by an equality-filtered column", agg(filter(big, planner.Predicate{Col: "s", Op: funcs.OpEq, Value: &planner.Literal{Type: str, Value: "x"}}), "s"), 1},
		{"group by an IN-filtered column", agg(filter(big, planner.Predicate{Col: "s", Op: funcs.OpIn, Values: []planner.Literal{strLit("a"), strLit("b"), strLit("c")}}), "s"), 3},
		{"group by a case-insensitive IN stays big", agg(filter(big, planner.Predicate{Col: "s", Op: funcs.OpIn, CaseInsensitive: true, Values: []planner.Literal{strLit("a")}}), "s"), 10_000_000},
		{"group by the year of a date range", agg(year(filter(big, planner.Predicate{Col: "d", Op: funcs.OpRange, Min: dateLit("1995-01-01"), Max: dateLit("1996-12-31")})), "y"), 2},
		{"group by the year of an open-ended date range stays big", agg(year(filter(big, planner.Predicate{Col: "d", Op: funcs.OpGte, Value: dateLit("1995-01-01")})), "y"), 10_000_000},
		{"group by the year of a date, unfiltered", agg(year(big), "y"), 10_000_000},
		{"group by an integer range", agg(filter(big, planner.Predicate{Col: "k", Op: funcs.OpRange, Min: &planner.Literal{Type: i64, Value: int64(10)}, Max: &planner.Literal{Type: i64, Value: int64(19)}}), "k"), 10},
		{"group by an aggregate's output: at most its groups", agg(agg(pairs, "r.name"), "n"), 25},
		{"group by a function of a small table's column", agg(compute(pairs, "l", &planner.Call{Fn: "lower", Args: []planner.Expr{col(pairs, "r.name")}, Typ: str}), "l"), 25},
		{"inner join: the product", pairs, 250_000_000},
		{"join with a side unique on its key: the other side", join(planner.JoinInner, small, perKey, "nk", "k", "n"), 25},
		{"left join with a unique right: the left rows", join(planner.JoinLeft, small, perKey, "nk", "k", "n"), 25},
		{"join on a key that is not the unique one", join(planner.JoinInner, small, perKey, "nk", "n", "k"), 250_000_000},
		{"cross join with one row", join(planner.JoinCross, big, agg(small), "", "", "n"), 10_000_000},
		{"cross join past int64", join(planner.JoinCross, join(planner.JoinCross, big, big, "", "", "k"), big, "", "", "k"), u},
		{"full join: pairs and both sides", join(planner.JoinFull, small, small, "nk", "nk", "name"), 25*25 + 50},
		{"semi join: the left rows", join(planner.JoinSemi, small, big, "nk", "k"), 25},
		{"union all: the sum", union, 10_000_025},
		{"except: the left", except, 10_000_000},
		{"values", values, 3},
		{"distinct of one table's columns", &planner.Distinct{Input: project(pairs, "r.name", "r.nk")}, 25},
		{"deduplicate on a small key", &planner.Deduplicate{Input: pairs, Columns: []string{"r.name"}, Indices: []int{pairs.Schema().FieldIndices("r.name")[0]}}, 25},
		{"top n per group", &planner.TopNPerGroup{Input: pairs, N: 2, PartitionBy: []string{"r.name"}, PartIdx: []int{pairs.Schema().FieldIndices("r.name")[0]}}, 50},
		{"window keeps its input's rows", &planner.Window{Input: small, Exprs: []planner.WindowExpr{{Fn: "row_number", Name: "rn", Type: i64}}}, 25},
		{"substr of a big table's column: its rows", agg(substr(big, 2), "p"), 10_000_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := planner.ResultBound(tc.n, planner.BoundOptions{}).Rows; got != tc.rows {
				t.Fatalf("rows bound %d, want %d", got, tc.rows)
			}
		})
	}

	// What the sources know of their columns (the column cache's
	// dictionaries and zone maps).
	stats := func(dataset, column string) (planner.ColumnStats, bool) {
		switch dataset + "." + column {
		case "big.s":
			return planner.ColumnStats{Distinct: 3, MaxChars: 4}, true
		case "big.d": // 1992-01-01 .. 1998-12-31
			return planner.ColumnStats{Ranged: true, Min: 8035, Max: 10591}, true
		}
		return planner.ColumnStats{}, false
	}
	statCases := []struct {
		name string
		n    planner.Node
		rows int64
	}{
		{"group by a column of 3 values (and null)", agg(big, "s"), 4},
		{"group by the year of a date of 7 years (and null)", agg(year(big), "y"), 8},
		{"group by a column the source knows nothing of", agg(big, "k"), 10_000_000},
		{"a filter narrows the range further", agg(year(filter(big, planner.Predicate{Col: "d", Op: funcs.OpGte, Value: dateLit("1997-06-01")})), "y"), 2},
	}
	for _, tc := range statCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := planner.ResultBound(tc.n, planner.BoundOptions{Stats: stats}).Rows; got != tc.rows {
				t.Fatalf("rows bound %d, want %d", got, tc.rows)
			}
		})
	}
	// The source's longest string: 4 characters (as the dictionary of
	// the s column of big, at most 4 groups and one count).
	if got, want := planner.ResultBound(agg(big, "s"), planner.BoundOptions{Stats: stats}).Bytes, int64(2+4*(1+1+(1+8+1+2+6*4)+(1+8+1+22))); got != want {
		t.Errorf("bytes bound with the source's longest string: %d, want %d", got, want)
	}

	// Bytes: '[' and ']', and per row its record (of columns of one-letter
	// names: a ',' or '{', the quoted name at 6 bytes a character, ':',
	// the cell; then '}') and a comma.
	rows := func(n int64, cells ...int64) int64 {
		rec := int64(1 + 1)
		for _, c := range cells {
			rec += 1 + (2 + 6) + 1 + c
		}
		return 2 + n*rec
	}
	bytesCases := []struct {
		name  string
		n     planner.Node
		cells int64
		want  int64
	}{
		{"one int64 row", agg(big), 0, rows(1, 22)},
		{"no rows", limit(big, 0), 0, 2},
		{"strings of unknown length, no cell cap", limit(project(big, "s"), 10), 0, u},
		{"strings of unknown length, cell cap", limit(project(big, "s"), 10), 100, rows(10, 2+40+6*100)},
		{"substr(s, 1, 2): two characters", limit(project(substr(big, 2), "p"), 10), 0, rows(10, 2+6*2)},
		{"an equality-filtered string: the literal's length", limit(project(filter(big, planner.Predicate{Col: "s", Op: funcs.OpEq, Value: &planner.Literal{Type: str, Value: "abc"}}), "s"), 1), 0, rows(1, 2+6*3)},
		{"a date and a boolean", limit(project(big, "d", "b"), 5), 0, rows(5, 32, 5)},
		{"unbounded rows", project(guessed, "k"), 100, u},
	}
	for _, tc := range bytesCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := planner.ResultBound(tc.n, planner.BoundOptions{MaxCellChars: tc.cells}).Bytes; got != tc.want {
				t.Fatalf("bytes bound %d, want %d", got, tc.want)
			}
		})
	}
}
