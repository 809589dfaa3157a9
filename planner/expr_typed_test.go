package planner_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

func typedSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32}, {Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String}, {Name: "ls", Type: arrow.BinaryTypes.LargeString},
		{Name: "ds", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean}, {Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}},
		{Name: "end", Type: arrow.PrimitiveTypes.Int64}, {Name: "bin", Type: arrow.BinaryTypes.Binary},
	}, nil)
}

// Parsing and printing of the typed syntax: the normalized text, or the error.
func TestParseTypedExpr(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{in: "s = 'x'", want: "s = 'x'"},
		{in: "s <> 'it''s'", want: "s != 'it''s'"},
		{in: "a < b AND NOT c >= d OR e", want: "a < b AND NOT c >= d OR e"},
		{in: "a AND (b OR c)", want: "a AND (b OR c)"},
		{in: "(a AND b) OR c", want: "a AND b OR c"},
		{in: "NOT (a OR b)", want: "NOT (a OR b)"},
		{in: "x IS NULL OR y is not null", want: "x IS NULL OR y IS NOT NULL"},
		{in: "s LIKE 'a%' AND s NOT ILIKE '_b'", want: "s LIKE 'a%' AND NOT s ILIKE '_b'"},
		{in: "x IN (1, 2, 3)", want: "x IN (1, 2, 3)"},
		{in: "x not in ('a')", want: "NOT x IN ('a')"},
		{in: "x BETWEEN 1 AND 2 AND y", want: "x BETWEEN 1 AND 2 AND y"},
		{in: "a || b || 'c'", want: "a || b || 'c'"},
		{in: "a + 1 || b", want: "a + 1 || b"},
		{in: "(a = b) = c", want: "(a = b) = c"},
		{in: "a % 3 * 2", want: "a % 3 * 2"},
		{in: "case when a > 1 then 'x' when a < 0 then 'y' else null end", want: "CASE WHEN a > 1 THEN 'x' WHEN a < 0 THEN 'y' ELSE null END"},
		{in: "CASE a WHEN 1 THEN 2 END", want: "CASE WHEN a = 1 THEN 2 END"},
		{in: "cast(a AS INTEGER) + try_cast(s as double)", want: "CAST(a AS bigint) + TRY_CAST(s AS double)"},
		{in: "DATE '2024-01-31' < d", want: "CAST('2024-01-31' AS date) < d"},
		{in: "date + 1", want: "date + 1"},
		{in: "year(date)", want: "year(date)"},
		{in: "date_add(d, INTERVAL '7 days')", want: "date_add(d, INTERVAL '7 days')"},
		{in: "d + interval '1 month' - INTERVAL '2 hours'", want: "d + INTERVAL '1 month' - INTERVAL '2 hours'"},
		{in: "position('a' IN s)", want: "strpos(s, 'a')"},
		{in: "now() > current_date", want: "now() > current_date"},
		{in: "TRUE AND false", want: "true AND false"},
		{in: `"end" + 1`, want: `"end" + 1`},
		{in: "coalesce(a, b, 0) AS x", want: "coalesce(a, b, 0)"},
		{in: "end + 1", err: "unexpected keyword END"},
		{in: "s = 'x", err: "unterminated string literal"},
		{in: "a = b = c", err: "unexpected '='"},
		{in: "x IS 1", err: "expected NULL after IS"},
		{in: "x NOT 1", err: "expected LIKE, ILIKE, IN or BETWEEN after NOT"},
		{in: "CASE END", err: "unexpected keyword END"},
		{in: "CASE WHEN a 1 END", err: "expected THEN"},
		{in: "CAST(a AS blob)", err: "unknown type"},
		{in: "x BETWEEN 1 OR 2", err: "expected AND in BETWEEN"},
		{in: "INTERVAL '3 fortnights'", err: "unknown unit"},
		{in: "nosuch(1)", err: "unknown function"},
		{in: "like(a, 'b')", err: "unexpected keyword LIKE"},
		{in: "concat()", err: "expected a value"}, {in: "now(1)", err: "now takes 0 argument(s), got 1"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			e, _, err := planner.ParseExpr(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.String(); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// Typing through the registry: the result type, or the error.
func TestBindTypedExpr(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{in: "s = 'x'", want: "bool"},
		{in: "ds = s", want: "bool"},
		{in: "lower(ds)", want: "utf8"},
		{in: "ls || s", want: "utf8"},
		{in: "i || 'x'", want: "utf8"},
		{in: "length(ls)", want: "int64"},
		{in: "i % 2", want: "int64"},
		{in: "f % 2", want: "float64"},
		{in: "coalesce(i, f)", want: "float64"},
		{in: "coalesce(i, 1)", want: "int64"},
		{in: "CASE WHEN b THEN i ELSE 1.5 END", want: "float64"},
		{in: "CASE WHEN b THEN null END", want: "int64"},
		{in: "CASE WHEN b THEN null END AND b", want: "bool"},
		{in: "null", want: "int64"},
		{in: "null + 1", want: "int64"},
		{in: "if(b, s, null)", want: "utf8"},
		{in: "greatest(d, ts)", want: "timestamp[ms, tz=Europe/Paris]"},
		{in: "date_trunc('month', ts)", want: "timestamp[ms, tz=Europe/Paris]"},
		{in: "date_trunc('week', d)", want: "date32"},
		{in: "date_diff('day', d, ts)", want: "int64"},
		{in: "year(ts)", want: "int64"},
		{in: "d + INTERVAL '7 days'", want: "timestamp[us, tz=UTC]"},
		{in: "INTERVAL '1 month' + d", want: "timestamp[us, tz=UTC]"},
		{in: "ts - INTERVAL '1 hour'", want: "timestamp[ms, tz=Europe/Paris]"},
		{in: "d + 7", want: "date32"},
		{in: "7 + d", want: "date32"},
		{in: "d - i", want: "date32"},
		{in: "d - null", want: "date32"},
		{in: "d - d", want: "int64"},
		{in: "d - DATE '2024-01-01' > 30", want: "bool"},
		{in: "ts - ts", err: "needs dates, got timestamp"},
		{in: "d + 1.5", err: "cannot combine date32 d and float64 1.5"},
		{in: "d * 2", err: "take only + and -"},
		{in: "i + INTERVAL '1 day'", err: "cannot combine interval INTERVAL '1 day' and int64 i"},
		{in: "d + '7 days'", err: "cannot combine date32 d and string '7 days'"},
		{in: "INTERVAL '1 day' - d", err: "cannot combine"},
		{in: "sqrt(i)", want: "float64"},
		{in: "sign(i)", want: "int64"},
		{in: "bin(i, 10)", want: "int64"},
		{in: "bin(f, 10)", want: "float64"},
		{in: "width_bucket(f, 0, 100, 10)", want: "int64"},
		{in: "CAST(s AS date)", want: "date32"},
		{in: "CAST(i AS boolean)", want: "bool"},
		{in: "s LIKE 'a' || '%'", want: "bool"},
		{in: "x + 1", err: "unknown column"},
		{in: "s + 1", err: "needs numbers, got string"},
		{in: "-s", err: "needs numbers"},
		{in: "lower(i)", err: "lower: argument 1 (i) is int64; it takes string"},
		{in: "i = s", err: "types do not mix"},
		{in: "b AND i", err: "it takes boolean"},
		{in: "s LIKE s", err: "must be a literal"},
		{in: "regexp_matches(s, '(')", err: "invalid pattern"},
		{in: "regexp_extract(s, 'a', 2)", err: "group must be"},
		{in: "date_trunc('eon', d)", err: "unknown unit"},
		{in: "date_trunc(s, d)", err: "must be a literal"},
		{in: "strftime(d, '%Q')", err: "unknown directive"},
		{in: "CAST(b AS date)", err: "cannot cast"},
		{in: "bin || 'x'", err: "cannot compute on"},
		{in: "year(i)", err: "it takes date or timestamp"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			e, _, err := planner.ParseExpr(c.in)
			if err != nil {
				t.Fatal(err)
			}
			err = planner.BindExpr(e, typedSchema())
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Type().String(); got != c.want {
				t.Fatalf("type %s, want %s", got, c.want)
			}
		})
	}
}

// Constant folding runs the registry's kernels; failures stay for run time.
func TestFoldTypedExpr(t *testing.T) {
	cases := map[string]string{
		"'a' || 'b'":                    "'ab'",
		"upper('x') = 'X'":              "true",
		"CAST('12' AS int) + 1":         "13",
		"CAST('x' AS int)":              "CAST('x' AS bigint)",
		"TRY_CAST('x' AS int)":          "null",
		"coalesce(null, 2, 3)":          "2",
		"7 % 0":                         "null",
		"-7 % 3":                        "-1",
		"7.5 % 2":                       "1.5",
		"1 IN (2, null)":                "null",
		"null AND false":                "false",
		"year(DATE '2024-02-29') * 100": "202400",
		"date_add(DATE '2024-01-31', INTERVAL '1 month')": "CAST('2024-02-29' AS date)",
		"DATE '2024-01-31' + INTERVAL '1 month'":          "CAST('2024-02-29 00:00:00Z' AS timestamp)",
		"DATE '2024-03-31' - INTERVAL '1 month 1 hour'":   "CAST('2024-02-28 23:00:00Z' AS timestamp)",
		"DATE '2024-03-01' - DATE '2024-02-01'":           "29",
		"DATE '2024-02-28' + 2":                           "CAST('2024-03-01' AS date)",
		"CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END":           "'b'",
		"repeat('ab', 2) || i":                            "'abab' || i",
		"repeat('x', 2000000)":                            "repeat('x', 2000000)",
	}
	for text, want := range cases {
		e, _, err := planner.ParseExpr(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if err := planner.BindExpr(e, typedSchema()); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := planner.FoldExpr(e).String(); got != want {
			t.Errorf("%s folds to %s, want %s", text, got, want)
		}
	}
}

func randTypedText(r *rand.Rand, depth int) string {
	if depth == 0 || r.IntN(4) == 0 {
		return []string{"a", "s", "'x''y'", "1", "2.5", "null", "true", "DATE '2024-01-01'", `"c d"`}[r.IntN(9)]
	}
	sub := func() string { return "(" + randTypedText(r, depth-1) + ")" }
	switch r.IntN(12) {
	case 0:
		return sub() + " " + []string{"=", "<>", "<", ">=", "AND", "OR", "||", "%", "+", "*"}[r.IntN(10)] + " " + sub()
	case 1:
		return "NOT " + sub()
	case 2:
		return sub() + " IS NOT NULL"
	case 3:
		return sub() + " LIKE 'a%'"
	case 4:
		return sub() + " IN (" + sub() + ", " + sub() + ")"
	case 5:
		return sub() + " BETWEEN " + sub() + " AND " + sub()
	case 6:
		return "CASE WHEN " + sub() + " THEN " + sub() + " ELSE " + sub() + " END"
	case 7:
		return "CAST(" + sub() + " AS varchar)"
	case 8:
		return "coalesce(" + sub() + ", " + sub() + ")"
	case 9:
		return "(" + sub() + ")"
	case 10:
		return "-" + sub()
	}
	return "lower(" + sub() + ")"
}

// The normalized text of typed expressions re-parses to the same text.
func TestTypedExprRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		checkRoundTrip(t, randTypedText(r, 4))
	}
}
