package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

func TestUnifyTypes(t *testing.T) {
	i8, i32, i64, f32, f64 := arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64
	str, large := arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: str}
	dict32 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: str}
	date, ts := arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us
	boolean := arrow.FixedWidthTypes.Boolean
	cases := []struct {
		a, b arrow.DataType
		want arrow.DataType // nil: do not mix
	}{
		{i32, i32, i32},
		{i32, i64, i64},
		{i8, i32, i64},
		{i64, f64, f64},
		{i32, f32, f64},
		{f32, f32, f32},
		{str, dict, str},
		{dict, dict, dict},
		{dict, dict32, str},
		{str, large, str},
		{large, large, large},
		{date, ts, ts},
		{boolean, boolean, boolean},
		{arrow.Null, str, str},
		{i64, arrow.Null, i64},
		{str, i64, nil},
		{boolean, i64, nil},
		{date, str, nil},
		{arrow.BinaryTypes.Binary, arrow.BinaryTypes.Binary, arrow.BinaryTypes.Binary},
		{arrow.BinaryTypes.Binary, str, nil},
	}
	for _, c := range cases {
		got, ok := UnifyTypes(c.a, c.b)
		if (c.want == nil) != !ok || ok && !arrow.TypeEqual(got, c.want) {
			t.Errorf("UnifyTypes(%s, %s) = %v, %v; want %v", c.a, c.b, got, ok, c.want)
		}
	}
}

func TestSetOpNode(t *testing.T) {
	l := &Scan{Dataset: "a", Out: arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)}
	r := &Scan{Dataset: "b", Out: arrow.NewSchema([]arrow.Field{
		{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "t", Type: arrow.BinaryTypes.LargeString}}, nil)}
	so, err := NewSetOp(SetExcept, true, l, r)
	if err != nil {
		t.Fatal(err)
	}
	want := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	if !so.Schema().Equal(want) {
		t.Fatalf("schema %v, want %v", so.Schema(), want)
	}
	if got := String(so); got != "SetOp: EXCEPT ALL\n  Scan: a\n  Scan: b\n" {
		t.Fatalf("plan:\n%s", got)
	}
	c := Clone(so).(*SetOp)
	if c == so || c.Left == so.Left || c.Kind != so.Kind || !c.All {
		t.Fatal("clone shares or loses state")
	}
	if _, err := so.WithChildren(l); !errors.Is(err, ErrChildren) {
		t.Fatalf("arity: %v", err)
	}
	// Projection pushdown reads every column through a set operation but
	// still narrows each side's own projection.
	p := &Project{Input: &Scan{Dataset: "c", Out: arrow.NewSchema([]arrow.Field{
		{Name: "u", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String}, {Name: "w", Type: arrow.BinaryTypes.String}}, nil)},
		Columns: []string{"u", "w"}, Indices: []int{0, 2}}
	p.Out = arrow.NewSchema([]arrow.Field{p.Input.Schema().Field(0), p.Input.Schema().Field(2)}, nil)
	so, err = NewSetOp(SetUnion, false, l, p)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := Optimize(&Project{Input: so, Columns: []string{"x"}, Indices: []int{0}, Out: arrow.NewSchema([]arrow.Field{so.Schema().Field(0)}, nil)}, OptimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := String(opt); !strings.Contains(got, "Scan: c columns=[u, w]") {
		t.Fatalf("pushdown into the right side:\n%s", got)
	}
	// Through UNION ALL, a projection moves into both sides.
	so, err = NewSetOp(SetUnion, true, l, p)
	if err != nil {
		t.Fatal(err)
	}
	opt, err = Optimize(&Project{Input: so, Columns: []string{"s"}, Indices: []int{1}, Out: arrow.NewSchema([]arrow.Field{so.Schema().Field(1)}, nil)}, OptimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := String(opt), "SetOp: UNION ALL\n  Project: s\n    Scan: a columns=[s]\n  Project: w\n    Scan: c columns=[w]\n"; got != want {
		t.Fatalf("projection through UNION ALL:\n%s\nwant:\n%s", got, want)
	}
	// Limit pushdown only into UNION ALL.
	for _, all := range []bool{true, false} {
		so, _ := NewSetOp(SetUnion, all, l, l)
		opt, err := Optimize(&Limit{Input: so, Count: 4, Offset: 1}, OptimizeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(String(opt), "Limit: offset=0 count=5"); n != map[bool]int{true: 2, false: 0}[all] {
			t.Fatalf("all=%v: %d limits pushed:\n%s", all, n, String(opt))
		}
	}
}

func TestNewValues(t *testing.T) {
	parse := func(texts ...string) []Expr {
		var out []Expr
		for _, s := range texts {
			e, _, err := ParseExpr(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	v, err := NewValues([]string{"a", "b", "c", "d"}, [][]Expr{
		parse("1", "'x'", "NULL", "CAST('2024-01-02' AS date)"),
		parse("2.5", "upper('y')", "NULL", "NULL"),
		parse("1 + 2", "NULL", "NULL", "CAST('2024-01-03 10:00:00' AS timestamp)"),
	})
	if err != nil {
		t.Fatal(err)
	}
	types := []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.Null, v.Out.Field(3).Type}
	for i, want := range types {
		if got := v.Out.Field(i).Type; !arrow.TypeEqual(got, want) {
			t.Errorf("column %d: %s, want %s", i, got, want)
		}
	}
	if v.Out.Field(3).Type.ID() != arrow.TIMESTAMP {
		t.Errorf("date with timestamp: %s", v.Out.Field(3).Type)
	}
	if c := v.Rows[2][0]; c.Float != 3 || c.Typ.ID() != arrow.FLOAT64 {
		t.Errorf("1 + 2 as float: %+v", c)
	}
	if got := v.Describe(); got != `Values: 3 rows (a, b, c, d) (1.0, 'x', null, CAST('2024-01-02 00:00:00Z' AS timestamp)) (2.5, 'Y', null, null) (3.0, null, null, CAST('2024-01-03 10:00:00Z' AS timestamp))` {
		t.Errorf("describe: %s", got)
	}
	c := Clone(v).(*Values)
	c.Rows[0][0].Float = 99
	if v.Rows[0][0].Float == 99 {
		t.Error("clone shares constants")
	}
	bad := []struct {
		names []string
		rows  [][]Expr
		want  string
	}{
		{nil, [][]Expr{parse("1")}, "at least one column"},
		{[]string{"a", "a"}, [][]Expr{parse("1", "2")}, "empty or repeated"},
		{[]string{"a"}, nil, "at least one row"},
		{[]string{"a"}, [][]Expr{parse("1", "2")}, "has 2 values"},
		{[]string{"a"}, [][]Expr{parse("x + 1")}, "unknown column"},
		{[]string{"a"}, [][]Expr{parse("1"), parse("'x'")}, "earlier rows are int64"},
		{[]string{"a"}, [][]Expr{parse("CAST('nope' AS date)")}, "not a constant"},
	}
	for _, b := range bad {
		_, err := NewValues(b.names, b.rows)
		if qerr.Code(err) != qerr.CodeInvalidArgument || !strings.Contains(err.Error(), b.want) {
			t.Errorf("NewValues(%v): %v, want %q", b.names, err, b.want)
		}
	}
}
