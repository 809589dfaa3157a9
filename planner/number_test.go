package planner_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// TestParseIntOperand pins the exact reading of integer-column operands at
// the int64 and uint64 bounds (±2^63±k, 2^64±k), at ±2^53±1, for fractions
// and for huge exponents.
func TestParseIntOperand(t *testing.T) {
	type b = planner.Int
	below, above := b{Side: -1}, b{Side: 1}
	cases := []struct {
		in          string
		int64       any // the int64 result, or nil for a Number
		floor, ceil planner.Int
		text        string
	}{
		{in: "0", int64: int64(0)},
		{in: "-0", int64: int64(0)},
		{in: "-0.0e5", int64: int64(0)},
		{in: "3.0", int64: int64(3)},
		{in: "30e-1", int64: int64(3)},
		{in: " +12 ", int64: int64(12)},
		{in: "1.5e3", int64: int64(1500)},
		{in: "9007199254740992", int64: int64(1 << 53)},
		{in: "9007199254740993", int64: int64(1<<53 + 1)},
		{in: "-9007199254740993", int64: int64(-(1<<53 + 1))},
		{in: "9223372036854775807", int64: int64(math.MaxInt64)},
		{in: "-9223372036854775808", int64: int64(math.MinInt64)},
		{in: "9223372036854775808", floor: b{Abs: 1 << 63}, ceil: b{Abs: 1 << 63}, text: "9223372036854775808"},
		{in: "9223372036854775813", floor: b{Abs: 1<<63 + 5}, ceil: b{Abs: 1<<63 + 5}, text: "9223372036854775813"},
		{in: "9.223372036854775813e18", floor: b{Abs: 1<<63 + 5}, ceil: b{Abs: 1<<63 + 5}, text: "9223372036854775813"},
		{in: "18446744073709551615", floor: b{Abs: math.MaxUint64}, ceil: b{Abs: math.MaxUint64}, text: "18446744073709551615"},
		{in: "18446744073709551616", floor: above, ceil: above, text: "18446744073709551616"},
		{in: "18446744073709551621", floor: above, ceil: above, text: "18446744073709551621"},
		{in: "99999999999999999999", floor: above, ceil: above, text: "99999999999999999999"},
		{in: "-9223372036854775809", floor: below, ceil: below, text: "-9223372036854775809"},
		{in: "-9223372036854775813", floor: below, ceil: below, text: "-9223372036854775813"},
		{in: "-18446744073709551616", floor: below, ceil: below, text: "-18446744073709551616"},
		{in: "1e30", floor: above, ceil: above, text: "1e30"},
		{in: "1e400", floor: above, ceil: above, text: "1e400"},
		{in: "-1E+400", floor: below, ceil: below, text: "-1E+400"},
		{in: "1e1000000000000", floor: above, ceil: above, text: "1e1000000000000"},
		{in: "2.5", floor: b{Abs: 2}, ceil: b{Abs: 3}, text: "2.5"},
		{in: "-2.5", floor: b{Neg: true, Abs: 3}, ceil: b{Neg: true, Abs: 2}, text: "-2.5"},
		{in: "0.5", floor: b{}, ceil: b{Abs: 1}, text: "0.5"},
		{in: "-.5", floor: b{Neg: true, Abs: 1}, ceil: b{}, text: "-.5"},
		{in: "1e-400", floor: b{}, ceil: b{Abs: 1}, text: "1e-400"},
		{in: "1e-1000000000000", floor: b{}, ceil: b{Abs: 1}, text: "1e-1000000000000"},
		{in: "9007199254740992.5", floor: b{Abs: 1 << 53}, ceil: b{Abs: 1<<53 + 1}, text: "9007199254740992.5"},
		{in: "9223372036854775807.5", floor: b{Abs: math.MaxInt64}, ceil: b{Abs: 1 << 63}, text: "9223372036854775807.5"},
		{in: "-9223372036854775807.5", floor: b{Neg: true, Abs: 1 << 63}, ceil: b{Neg: true, Abs: math.MaxInt64}, text: "-9223372036854775807.5"},
		{in: "-9223372036854775808.5", floor: below, ceil: b{Neg: true, Abs: 1 << 63}, text: "-9223372036854775808.5"},
		{in: "18446744073709551614.5", floor: b{Abs: math.MaxUint64 - 1}, ceil: b{Abs: math.MaxUint64}, text: "18446744073709551614.5"},
		{in: "18446744073709551615.5", floor: b{Abs: math.MaxUint64}, ceil: above, text: "18446744073709551615.5"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := planner.ParseIntOperand(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if c.int64 != nil {
				if got != c.int64 {
					t.Fatalf("got %v (%T), want int64 %v", got, got, c.int64)
				}
				return
			}
			n, ok := got.(planner.Number)
			if !ok {
				t.Fatalf("got %v (%T), want a Number", got, got)
			}
			if n.Floor() != c.floor || n.Ceil() != c.ceil || n.String() != c.text {
				t.Fatalf("got floor %+v ceil %+v text %q, want %+v %+v %q", n.Floor(), n.Ceil(), n.String(), c.floor, c.ceil, c.text)
			}
			if n.IsInteger() != (c.floor == c.ceil) {
				t.Fatalf("IsInteger = %v", n.IsInteger())
			}
		})
	}
	for _, bad := range []string{"", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "0x10", "NaN", "Inf", "1_000", "12a", "--1", "1 2"} {
		if v, err := planner.ParseIntOperand(bad); err == nil {
			t.Errorf("ParseIntOperand(%q) = %v, want an error", bad, v)
		}
	}
}

// TestIntOperandsInFilters checks that Build keeps integer operands exact
// (JSON numbers and strings alike) and prints them as written.
func TestIntOperandsInFilters(t *testing.T) {
	cases := []struct{ filter, plan string }{
		{`{"col":"qty","op":"eq","value":9007199254740993}`, "qty = 9007199254740993"},
		{`{"col":"qty","op":"in","value":[9007199254740993, "9007199254740995"]}`, "qty IN (9007199254740993, 9007199254740995)"},
		{`{"col":"qty","op":"lt","value":9223372036854775813}`, "qty < 9223372036854775813"},
		{`{"col":"qty","op":"gte","value":"-9223372036854775813"}`, "qty >= -9223372036854775813"},
		{`{"col":"qty","op":"gt","value":2.5}`, "qty > 2.5"},
		{`{"col":"qty","op":"neq","value":1e400}`, "qty != 1e400"},
		{`{"col":"qty","op":"range","value":{"min":-1e30,"max":18446744073709551615}}`, "qty BETWEEN -1e30 AND 18446744073709551615"},
	}
	for _, c := range cases {
		n, err := planner.Build(spec(t, `{"filters":[`+c.filter+`]}`), testInput())
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got := planner.String(n); !strings.Contains(got, c.plan) {
			t.Errorf("%s: plan\n%s\nwant it to contain %q", c.filter, got, c.plan)
		}
	}
}

// TestIntOperandErrors: operands that are no number are invalid_filter with
// a grammatical hint.
func TestIntOperandErrors(t *testing.T) {
	_, err := planner.Build(spec(t, `{"filters":[{"col":"qty","op":"eq","value":"ten"}]}`), testInput())
	if qerr.Code(err) != qerr.CodeInvalidFilter {
		t.Fatalf("got %v, want invalid_filter", err)
	}
	if h := qerr.As(err).Hint; h != "pass value as an integer" {
		t.Errorf("hint = %q", h)
	}
	_, err = planner.Build(spec(t, `{"filters":[{"col":"price","op":"eq","value":-1e400}]}`), testInput())
	if qerr.Code(err) != qerr.CodeInvalidFilter || !strings.Contains(err.Error(), "beyond the float64 range") {
		t.Fatalf("got %v, want invalid_filter naming the float64 range", err)
	}
}

// FuzzParseIntOperand checks ParseIntOperand against math/big: an int64
// result equals the number, a Number's floor and ceiling bracket it (equal
// exactly for integers), and a side beyond the domain is beyond it.
func FuzzParseIntOperand(f *testing.F) {
	for _, s := range []string{"0", "-0", "2.5", "-2.5", "9007199254740993", "9223372036854775807", "9223372036854775808",
		"-9223372036854775813", "18446744073709551615", "18446744073709551616", "1e400", "-1e-400", "9.5e18", ".5", "5."} {
		f.Add(s)
	}
	lo, hi := big.NewInt(math.MinInt64), new(big.Int).SetUint64(math.MaxUint64)
	// want is the Int an exact integer k must read as.
	want := func(k *big.Int) planner.Int {
		switch {
		case k.Cmp(lo) < 0:
			return planner.Int{Side: -1}
		case k.Cmp(hi) > 0:
			return planner.Int{Side: 1}
		}
		return planner.Int{Neg: k.Sign() < 0, Abs: new(big.Int).Abs(k).Uint64()}
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := planner.ParseIntOperand(s)
		if err != nil {
			return
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")) > 4 {
			return // math/big would expand the exponent
		}
		x, ok := new(big.Rat).SetString(strings.TrimSpace(s))
		if !ok {
			t.Fatalf("ParseIntOperand(%q) accepted what math/big rejects", s)
		}
		if n, ok := v.(int64); ok {
			if x.Cmp(new(big.Rat).SetInt64(n)) != 0 {
				t.Fatalf("ParseIntOperand(%q) = %d", s, n)
			}
			return
		}
		n := v.(planner.Number)
		floor := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean: rounds toward -inf for a positive denominator
		ceil := new(big.Int).Set(floor)
		if !x.IsInt() {
			ceil.Add(ceil, big.NewInt(1))
		}
		if n.Floor() != want(floor) || n.Ceil() != want(ceil) {
			t.Fatalf("ParseIntOperand(%q): floor %+v ceil %+v, want %+v %+v", s, n.Floor(), n.Ceil(), want(floor), want(ceil))
		}
		if n.IsInteger() != x.IsInt() {
			t.Fatalf("ParseIntOperand(%q): IsInteger = %v", s, n.IsInteger())
		}
	})
}
