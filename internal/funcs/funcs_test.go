package funcs_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

func TestTypeClasses(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	for _, c := range []struct {
		t                             arrow.DataType
		numeric, str, comparable, int bool
	}{
		{arrow.PrimitiveTypes.Int8, true, false, true, true},
		{arrow.PrimitiveTypes.Uint64, true, false, true, true},
		{arrow.PrimitiveTypes.Float32, true, false, true, false},
		{arrow.FixedWidthTypes.Float16, false, false, false, false}, // no kernel reads float16
		{arrow.BinaryTypes.String, false, true, true, false},
		{arrow.BinaryTypes.StringView, false, true, false, false},
		{dict, false, true, true, false},
		{arrow.FixedWidthTypes.Boolean, false, false, true, false},
		{arrow.FixedWidthTypes.Date32, false, false, true, false},
		{arrow.FixedWidthTypes.Date64, false, false, false, false},
		{nil, false, false, false, false},
	} {
		if funcs.IsNumeric(c.t) != c.numeric || funcs.IsString(c.t) != c.str || funcs.Comparable(c.t) != c.comparable || funcs.IsInteger(c.t) != c.int {
			t.Errorf("%v: numeric %v string %v comparable %v integer %v; want %v %v %v %v", c.t,
				funcs.IsNumeric(c.t), funcs.IsString(c.t), funcs.Comparable(c.t), funcs.IsInteger(c.t), c.numeric, c.str, c.comparable, c.int)
		}
	}
	if !arrow.TypeEqual(funcs.Decoded(dict), arrow.BinaryTypes.String) {
		t.Error("Decoded(dictionary<string>) is not string")
	}
}

func TestRegisterRejects(t *testing.T) {
	f := func(dst, src []float64, _ int64) {}
	for name, reg := range map[string]func(){
		"duplicate scalar":    func() { funcs.RegisterScalar(funcs.ScalarDecl{Name: "abs", MinArgs: 1, MaxArgs: 1, Float: f}) },
		"scalar no kernel":    func() { funcs.RegisterScalar(funcs.ScalarDecl{Name: "x1", MinArgs: 1, MaxArgs: 1}) },
		"scalar two args":     func() { funcs.RegisterScalar(funcs.ScalarDecl{Name: "x2", MinArgs: 1, MaxArgs: 2, Float: f}) },
		"aggregate no kernel": func() { funcs.RegisterAgg(funcs.AggDecl{Fn: "x3", Input: funcs.NumericInput}) },
		"duplicate aggregate": func() {
			funcs.RegisterAgg(funcs.AggDecl{Fn: funcs.AggSum, Input: funcs.NumericInput,
				Result: func(t arrow.DataType) arrow.DataType { return t },
				Kernel: func(arrow.DataType, float64) (funcs.AggState, error) { return nil, nil }})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered without a panic", name)
				}
			}()
			reg()
		}()
	}
	if _, ok := funcs.LookupScalar("x1"); ok {
		t.Error("a rejected registration is visible")
	}
}

func TestLookup(t *testing.T) {
	if d, ok := funcs.Op("starts_with").Lookup(); !ok || !d.StringOnly || d.Operand != funcs.OperandScalar {
		t.Errorf("starts_with: %+v %v", d, ok)
	}
	if _, ok := funcs.Op("any").Lookup(); ok {
		t.Error("any is not a registered operator")
	}
	if d, ok := funcs.AggFn("quantile").Lookup(); !ok || !d.Param || d.Star {
		t.Errorf("quantile: %+v %v", d, ok)
	}
	if got := funcs.JoinWords([]string{"a", "b", "c"}, "or"); got != "a, b or c" {
		t.Errorf("JoinWords = %q", got)
	}
}
