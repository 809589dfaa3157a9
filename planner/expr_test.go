package planner_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

func TestParseExpr(t *testing.T) {
	cases := []struct {
		in, want, alias, err string
	}{
		{in: "qty*price", want: "qty * price"},
		{in: "  (a - b) / b ", want: "(a - b) / b"},
		{in: "a - (b - c)", want: "a - (b - c)"},
		{in: "(a - b) - c", want: "a - b - c"},
		{in: "a / (b * c)", want: "a / (b * c)"},
		{in: "a + b * c", want: "a + b * c"},
		{in: "(a + b) * c", want: "(a + b) * c"},
		{in: "-a * b", want: "-a * b"},
		{in: "-(a * b)", want: "-(a * b)"},
		{in: "- - a", want: "- -a"},
		{in: "-(-(-a))", want: "- - -a"},
		{in: "+a", want: "a"},
		{in: "a - -1", want: "a - -1"},
		{in: `"unit price" * 2`, want: `"unit price" * 2`},
		{in: `"say ""hi""" + 1`, want: `"say ""hi""" + 1`},
		{in: `"as" + 1`, want: `"as" + 1`},
		{in: "x.y + 1", want: "x.y + 1"},
		{in: "ÉTÉ + 1", want: "ÉTÉ + 1"},
		{in: "1.50 + .5 + 1e3 + 2E-2", want: "1.5 + 0.5 + 1000.0 + 0.02"},
		{in: "ABS(x) + round(y, -2) + floor(z) + ceil(w)", want: "abs(x) + round(y, -2) + floor(z) + ceil(w)"},
		{in: "qty * price AS revenue", want: "qty * price", alias: "revenue"},
		{in: `qty * price as "net revenue"`, want: "qty * price", alias: "net revenue"},
		{in: "price AS p", want: "price", alias: "p"},
		{in: "qty +", err: "expected a value"},
		{in: "qty price", err: "unexpected 'price'"},
		{in: "(qty", err: "expected ')'"},
		{in: "qty)", err: "unexpected ')'"},
		{in: "nosuchfn(x)", err: "unknown function"},
		{in: "abs(x, 2)", err: "takes 1 argument"},
		{in: "round(x, y)", err: "integer literal"},
		{in: "round(x, 19)", err: "integer literal"},
		{in: "round(x, 1.5)", err: "integer literal"},
		{in: "x AS", err: "expected a name after AS"},
		{in: `x AS ""`, err: "empty"},
		{in: "x AS y z", err: "unexpected 'z'"},
		{in: "AS + 1", err: "unexpected keyword AS"},
		{in: `"unterminated + 1`, err: "unterminated"},
		{in: `"" + 1`, err: "empty quoted"},
		{in: "1..2", err: "malformed number"},
		{in: "12abc", err: "malformed number"},
		{in: "9223372036854775808", err: "outside the int64 range"},
		{in: "a * 9007199254740993", want: "a * 9007199254740993"},
		{in: "-9223372036854775808 + a", want: "-9223372036854775808 + a"},
		{in: "a - -9223372036854775808", want: "a - -9223372036854775808"},
		{in: "a - -9223372036854775807", want: "a - -9223372036854775807"},
		{in: "-9223372036854775809 + a", err: "outside the int64 range"},
		{in: "a * 1e400", err: "beyond the float64 range"},
		{in: "a ^ b", err: "unexpected character"},
		{in: "", err: "expected a value"},
		{in: strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), err: "nested too deeply"},
		{in: strings.Repeat("-", 100) + "1", err: "nested too deeply"},
		{in: strings.Repeat("a+", 600) + "a", err: "longer than"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			e, alias, err := planner.ParseExpr(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.String(); got != c.want || alias != c.alias {
				t.Fatalf("got %q AS %q, want %q AS %q", got, alias, c.want, c.alias)
			}
		})
	}
}

func TestLooksLikeExpr(t *testing.T) {
	for s, want := range map[string]bool{
		"qty*price": true, "a-b": true, `"x"`: true, "abs(x)": true, "price as p": true, "price AS p": true,
		"price": false, "unit price": false, "as": false, "was a": false, "x as": false,
	} {
		if got := planner.LooksLikeExpr(s); got != want {
			t.Errorf("LooksLikeExpr(%q) = %v, want %v", s, got, want)
		}
	}
}

func randExprText(r *rand.Rand, depth int) string {
	if depth == 0 || r.IntN(4) == 0 {
		return []string{"a", "b", `"c d"`, "1", "2.5", "0.1", "x.y", "1e-3"}[r.IntN(8)]
	}
	switch r.IntN(5) {
	case 0:
		return "-" + randExprText(r, depth-1)
	case 1:
		return []string{"abs", "round", "floor", "ceil"}[r.IntN(4)] + "(" + randExprText(r, depth-1) + ")"
	case 2:
		return "(" + randExprText(r, depth-1) + ")"
	}
	return randExprText(r, depth-1) + " " + string("+-*/"[r.IntN(4)]) + " " + randExprText(r, depth-1)
}

// The normalized text re-parses to the same tree (it prints the same).
func TestExprRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		checkRoundTrip(t, randExprText(r, 5))
	}
}

// checkRoundTrip fails t unless text parses and its normalized text
// re-parses to the same text.
func checkRoundTrip(t *testing.T, text string) {
	t.Helper()
	e, _, err := planner.ParseExpr(text)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	norm := e.String()
	e2, _, err := planner.ParseExpr(norm)
	if err != nil {
		t.Fatalf("%q normalized to %q, which does not parse: %v", text, norm, err)
	}
	if e2.String() != norm {
		t.Fatalf("%q -> %q -> %q", text, norm, e2.String())
	}
}

func exprSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32}, {Name: "j", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32}, {Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
}

func TestBindExprTypes(t *testing.T) {
	cases := map[string]string{
		"i + j": "int64", "i * 2": "int64", "i - j * 3": "int64", "-i": "int64", "abs(i)": "int64", "round(i, -1)": "int64",
		"i / j": "float64", "i + f": "float64", "i + 1.0": "float64", "-f": "float64", "floor(f)": "float64", "round(i / 2)": "float64",
		"1 + 2": "int64", "s": "utf8", "d": "date32", "d - 1": "date32",
	}
	for text, want := range cases {
		e, _, err := planner.ParseExpr(text)
		if err != nil {
			t.Fatal(err)
		}
		if err := planner.BindExpr(e, exprSchema()); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := e.Type().String(); got != want {
			t.Errorf("%s: type %s, want %s", text, got, want)
		}
	}
	for _, text := range []string{"s + 1", "d * 2", "abs(s)", "nope * 2"} {
		e, _, _ := planner.ParseExpr(text)
		if err := planner.BindExpr(e, exprSchema()); err == nil {
			t.Errorf("%s: expected a bind error", text)
		}
	}
}

func TestFoldExpr(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1 + 2 * 3", "7"},
		{"i * (1 + 0.5)", "i * 1.5"},
		{"i + 2 * 3 - 1", "i + 6 - 1"}, // left-assoc: (i + 6) - 1 has no number-only subtree
		{"-(2 * 3) + i", "-6 + i"},
		{"- -2", "2"},
		{"1 / 0 + i", "null + i"},
		{"(1 / 0) * 2", "null"},
		{"10 / 4", "2.5"},
		{"9223372036854775807 + 1 + i", "9223372036854775807 + 1 + i"}, // overflow: left for run time
		{"-(-9223372036854775807 - 1)", "- -9223372036854775808"},      // the negation overflows
		{"abs(-3) + round(2.5) + round(15, -1) + floor(2.7) + ceil(-0.5)", "28.0"},
		{"round(1.005, 2) + i", "1.0 + i"},
		{"abs(i - 3)", "abs(i - 3)"},
	}
	for _, c := range cases {
		e, _, err := planner.ParseExpr(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if err := planner.BindExpr(e, exprSchema()); err != nil {
			t.Fatal(err)
		}
		if got := planner.FoldExpr(e).String(); got != c.want {
			t.Errorf("fold(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestScalarSemantics(t *testing.T) {
	const maxI, minI = int64(9223372036854775807), int64(-9223372036854775808)
	check := func(name string, got int64, ok bool, want int64, wantOK bool) {
		t.Helper()
		if ok != wantOK || (ok && got != want) {
			t.Errorf("%s = %d, %v; want %d, %v", name, got, ok, want, wantOK)
		}
	}
	v, ok := funcs.AddInt(maxI, 1)
	check("max+1", v, ok, 0, false)
	v, ok = funcs.AddInt(minI, -1)
	check("min-1 via add", v, ok, 0, false)
	v, ok = funcs.AddInt(maxI, minI)
	check("max+min", v, ok, -1, true)
	v, ok = funcs.SubInt(minI, 1)
	check("min-1", v, ok, 0, false)
	v, ok = funcs.SubInt(0, minI)
	check("0-min", v, ok, 0, false)
	v, ok = funcs.SubInt(-1, minI)
	check("-1-min", v, ok, maxI, true)
	v, ok = funcs.MulInt(minI, -1)
	check("min*-1", v, ok, 0, false)
	v, ok = funcs.MulInt(-1, minI)
	check("-1*min", v, ok, 0, false)
	v, ok = funcs.MulInt(1<<32, 1<<31)
	check("2^63", v, ok, 0, false)
	v, ok = funcs.MulInt(-(1 << 32), 1<<31)
	check("-2^63", v, ok, minI, true)
	v, ok = funcs.NegInt(minI)
	check("-min", v, ok, 0, false)
	v, ok = funcs.AbsInt(minI + 1)
	check("abs(min+1)", v, ok, maxI, true)
	v, ok = funcs.RoundInt(15, -1)
	check("round(15,-1)", v, ok, 20, true)
	v, ok = funcs.RoundInt(-15, -1)
	check("round(-15,-1)", v, ok, -20, true)
	v, ok = funcs.RoundInt(14, -1)
	check("round(14,-1)", v, ok, 10, true)
	v, ok = funcs.RoundInt(maxI, -1)
	check("round(max,-1)", v, ok, 0, false)
	v, ok = funcs.RoundInt(maxI, -18)
	check("round(max,-18)", v, ok, 9000000000000000000, true)
	if _, null := funcs.DivFloat(1, 0); !null {
		t.Error("1/0 is not null")
	}
	if _, null := funcs.DivFloat(0, math.Copysign(0, -1)); !null {
		t.Error("0/-0 is not null")
	}
	for _, c := range []struct {
		x    float64
		d    int64
		want float64
	}{{2.5, 0, 3}, {-2.5, 0, -3}, {1.25, 1, 1.3}, {1234.5, -2, 1200}, {1e308, 5, 1e308}} {
		if got := funcs.RoundFloat(c.x, c.d); got != c.want {
			t.Errorf("RoundFloat(%v, %d) = %v, want %v", c.x, c.d, got, c.want)
		}
	}
}

func ExampleParseExpr() {
	e, alias, _ := planner.ParseExpr(`(qty*"unit price") - discount AS net`)
	fmt.Println(e.String(), "|", alias)
	// Output: qty * "unit price" - discount | net
}

// FuzzParseExpr: parsing never panics; a parsed expression's normalized
// text re-parses to the same text; binding and folding never panic.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"qty * price", `("a b" - 1) / -c AS x`, "round(abs(-i), -2)", "1 / 0 + f", "- - -1e3", "i.j*2",
		"s || 'x''y' = lower(s) AND NOT i IN (1, null)", "CASE WHEN i BETWEEN 1 AND 2 THEN TRY_CAST(s AS int) ELSE i % 3 END",
		"year(d) >= 2024 OR s ILIKE '%a_' OR s IS NULL", "date_add(d, INTERVAL '1 month') > DATE '2024-01-01'",
		"regexp_replace(s, '(a)', '\\1', 'g') || strftime(d, '%Y')", "coalesce(nullif(f, 0), greatest(i, 1.5))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		e, _, err := planner.ParseExpr(text)
		if err != nil {
			return
		}
		norm := e.String()
		e2, _, err := planner.ParseExpr(norm)
		if err != nil || e2.String() != norm {
			t.Fatalf("%q -> %q does not round-trip: %v", text, norm, err)
		}
		if planner.BindExpr(e2, exprSchema()) == nil {
			_ = planner.FoldExpr(e2).String()
		}
	})
}
