package funcs

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// General kernels: a scalar function declared with Prepare computes over
// Arrow arrays. Expression values have one of the types of ExprType: bool,
// int64, float64, utf8 / large_utf8, date32 or timestamp (any unit and time
// zone); the planner casts every argument to the type its Arg class asks
// for (implicit casts) before the call, so a kernel sees exactly the types
// it declared.

// Value is a constant: a literal of an expression, or one row of an array.
// Int holds int64, date32 (days since the epoch) and timestamp (ticks of
// the type's unit) values; Float float64; Str strings; Bool booleans.
type Value struct {
	Type  arrow.DataType
	Null  bool
	Int   int64
	Float float64
	Str   string
	Bool  bool
}

// Kernel evaluates a function over one batch: args are the argument values
// (after implicit casts; constant arguments broadcast), every one of the
// same length. It returns a new array of the declared result type, which
// the caller releases; it must not retain args. An error is a row the
// function cannot compute (overflow, a failed cast, an output over a cap).
type Kernel func(mem memory.Allocator, args []arrow.Array) (arrow.Array, error)

// CallInfo describes one call being prepared: the argument types after
// implicit casts, the constant arguments (Consts[i] nil when argument i is
// not a constant) and the result type.
type CallInfo struct {
	Types  []arrow.DataType
	Consts []*Value
	Result arrow.DataType
}

// Arg is the type class of one argument of a general function; the planner
// checks an argument against it and inserts the implicit cast it names.
type Arg int

// Argument type classes.
const (
	// ArgAny takes any expression type unchanged.
	ArgAny Arg = iota
	// ArgNumber takes int64 or float64.
	ArgNumber
	// ArgFloat takes a number, cast to float64.
	ArgFloat
	// ArgInt takes an int64.
	ArgInt
	// ArgString takes a string (utf8 or large_utf8).
	ArgString
	// ArgBool takes a boolean.
	ArgBool
	// ArgTemporal takes a date32 or a timestamp.
	ArgTemporal
	// ArgTimestamp takes a timestamp; a date32 is cast to timestamp[us].
	ArgTimestamp
	// ArgSame: every ArgSame argument of a call is cast to their common
	// type (CommonType).
	ArgSame
	// ArgText takes a string literal (a pattern, a unit, a format).
	ArgText
	// ArgIntLit takes an integer literal.
	ArgIntLit
	// ArgAsString takes any type, cast to a string.
	ArgAsString
)

// Doc is the argument class in words, for the function tables.
func (a Arg) Doc() string {
	return [...]string{"any", "number", "number (as float64)", "integer", "string", "boolean", "date or timestamp",
		"timestamp (a date is cast)", "common type", "string literal", "integer literal", "any (as string)"}[a]
}

// Accepts reports whether an expression of type t fits the class (before
// its implicit cast); the null type fits every class.
func (a Arg) Accepts(t arrow.DataType) bool {
	if t.ID() == arrow.NULL {
		return true
	}
	switch a {
	case ArgNumber, ArgFloat:
		return IsNumeric(t)
	case ArgInt, ArgIntLit:
		return IsInteger(t)
	case ArgString, ArgText:
		return IsString(t)
	case ArgBool:
		return t.ID() == arrow.BOOL
	case ArgTemporal, ArgTimestamp:
		return t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP
	}
	return true
}

// Target is the type an argument of type t is cast to for the class (t
// itself when no cast applies; ArgSame is resolved by CommonType).
func (a Arg) Target(t arrow.DataType) arrow.DataType {
	switch a {
	case ArgFloat:
		return arrow.PrimitiveTypes.Float64
	case ArgNumber:
		if t.ID() == arrow.NULL {
			return arrow.PrimitiveTypes.Int64
		}
	case ArgInt, ArgIntLit:
		return arrow.PrimitiveTypes.Int64
	case ArgString, ArgText:
		if t.ID() == arrow.NULL {
			return arrow.BinaryTypes.String
		}
	case ArgAsString:
		if !IsString(t) {
			return arrow.BinaryTypes.String
		}
	case ArgBool:
		return arrow.FixedWidthTypes.Boolean
	case ArgTemporal:
		if t.ID() == arrow.NULL {
			return arrow.FixedWidthTypes.Timestamp_us
		}
	case ArgTimestamp:
		if t.ID() != arrow.TIMESTAMP {
			return arrow.FixedWidthTypes.Timestamp_us
		}
	}
	return t
}

// ExprType is the type a column of type t has inside an expression:
// integers widen to int64, float32 to float64, dictionary-encoded strings
// decode to their value type; booleans, strings, date32 and timestamps keep
// their type. False for a type expressions cannot compute on.
func ExprType(t arrow.DataType) (arrow.DataType, bool) {
	switch {
	case IsInteger(t):
		return arrow.PrimitiveTypes.Int64, true
	case IsFloat(t):
		return arrow.PrimitiveTypes.Float64, true
	case IsDictString(t):
		return Decoded(t), true
	}
	switch t.ID() {
	case arrow.BOOL, arrow.STRING, arrow.LARGE_STRING, arrow.DATE32, arrow.TIMESTAMP, arrow.NULL:
		return t, true
	}
	return nil, false
}

// CommonType is the type values of types ts are compared and combined in:
// int64 when all are int64, float64 when all are numbers, utf8 for strings
// (large_utf8 when all are large), a timestamp for dates and timestamps (the
// finest unit; the first time zone), boolean for booleans. Null types are
// ignored (all null: null). False when the types do not mix.
func CommonType(ts []arrow.DataType) (arrow.DataType, bool) {
	var out arrow.DataType
	for _, t := range ts {
		if t.ID() == arrow.NULL {
			continue
		}
		if out == nil {
			out = t
			continue
		}
		switch {
		case IsNumeric(out) && IsNumeric(t):
			if out.ID() != arrow.INT64 || t.ID() != arrow.INT64 {
				out = arrow.PrimitiveTypes.Float64
			}
		case IsString(out) && IsString(t):
			if out.ID() != t.ID() {
				out = arrow.BinaryTypes.String
			}
		case isTemporal(out) && isTemporal(t):
			out = commonTime(out, t)
		case out.ID() == arrow.BOOL && t.ID() == arrow.BOOL:
		default:
			return nil, false
		}
	}
	if out == nil {
		return arrow.Null, true
	}
	return out, true
}

func isTemporal(t arrow.DataType) bool { return t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP }

func commonTime(a, b arrow.DataType) arrow.DataType {
	if a.ID() == arrow.DATE32 && b.ID() == arrow.DATE32 {
		return a
	}
	ta, aok := a.(*arrow.TimestampType)
	tb, bok := b.(*arrow.TimestampType)
	switch {
	case !aok:
		return b
	case !bok:
		return a
	case tb.Unit > ta.Unit:
		return &arrow.TimestampType{Unit: tb.Unit, TimeZone: ta.TimeZone}
	}
	return a
}

// TypeName is the name of an expression type in messages and docs.
func TypeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return "string"
	case arrow.BOOL:
		return "boolean"
	case arrow.NULL:
		return "null"
	}
	return t.String()
}

// Col reads the values of one argument array by row.
type Col struct {
	arr  arrow.Array
	i64  []int64
	i32  []int32
	f64  []float64
	str  interface{ Value(int) string }
	bits *array.Boolean
}

// NewCol wraps an argument array of an expression type.
func NewCol(a arrow.Array) Col {
	c := Col{arr: a}
	switch x := a.(type) {
	case *array.Int64:
		c.i64 = x.Int64Values()
	case *array.Timestamp:
		if v := x.TimestampValues(); len(v) > 0 {
			c.i64 = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
		}
	case *array.Date32:
		if v := x.Date32Values(); len(v) > 0 {
			c.i32 = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
		}
	case *array.Float64:
		c.f64 = x.Float64Values()
	case *array.String:
		c.str = x
	case *array.LargeString:
		c.str = x
	case *array.Boolean:
		c.bits = x
	}
	return c
}

// Null reports a null row.
func (c Col) Null(i int) bool { return c.arr.IsNull(i) }

// Int is an int64, date32 or timestamp row.
func (c Col) Int(i int) int64 {
	if c.i32 != nil {
		return int64(c.i32[i])
	}
	if c.i64 == nil {
		return 0
	}
	return c.i64[i]
}

// Float is a number row (an int64 converted).
func (c Col) Float(i int) float64 {
	if c.f64 == nil {
		return float64(c.Int(i))
	}
	return c.f64[i]
}

// Str is a string row.
func (c Col) Str(i int) string {
	if c.str == nil {
		return ""
	}
	return c.str.Value(i)
}

// Bool is a boolean row.
func (c Col) Bool(i int) bool { return c.bits != nil && c.bits.Value(i) }

// Len is the number of rows.
func (c Col) Len() int { return c.arr.Len() }

// Out appends the rows of a kernel's result.
type Out struct {
	b   array.Builder
	i64 *array.Int64Builder
	f64 *array.Float64Builder
	str *array.StringBuilder
	lst *array.LargeStringBuilder
	bl  *array.BooleanBuilder
	d32 *array.Date32Builder
	ts  *array.TimestampBuilder
	// bytes counts the string bytes appended, for output caps.
	bytes int
}

// NewOut returns a builder of n rows of type t.
func NewOut(mem memory.Allocator, t arrow.DataType, n int) *Out {
	if t.ID() == arrow.NULL {
		t = arrow.PrimitiveTypes.Int64
	}
	o := &Out{b: array.NewBuilder(mem, t)}
	o.b.Reserve(n)
	switch x := o.b.(type) {
	case *array.Int64Builder:
		o.i64 = x
	case *array.Float64Builder:
		o.f64 = x
	case *array.StringBuilder:
		o.str = x
	case *array.LargeStringBuilder:
		o.lst = x
	case *array.BooleanBuilder:
		o.bl = x
	case *array.Date32Builder:
		o.d32 = x
	case *array.TimestampBuilder:
		o.ts = x
	default:
		panic(fmt.Sprintf("funcs: no output builder for %s", t))
	}
	return o
}

// Null appends a null.
func (o *Out) Null() { o.b.AppendNull() }

// Int appends an int64, date32 or timestamp value.
func (o *Out) Int(v int64) {
	switch {
	case o.i64 != nil:
		o.i64.Append(v)
	case o.d32 != nil:
		o.d32.Append(arrow.Date32(v))
	case o.ts != nil:
		o.ts.Append(arrow.Timestamp(v))
	case o.f64 != nil:
		o.f64.Append(float64(v))
	default:
		o.b.AppendNull()
	}
}

// Float appends a float64.
func (o *Out) Float(v float64) { o.f64.Append(v) }

// Str appends a string.
func (o *Out) Str(v string) {
	o.bytes += len(v)
	if o.lst != nil {
		o.lst.Append(v)
		return
	}
	o.str.Append(v)
}

// Bool appends a boolean.
func (o *Out) Bool(v bool) { o.bl.Append(v) }

// Value appends a constant (of the builder's type).
func (o *Out) Value(v *Value) {
	switch {
	case v == nil || v.Null:
		o.Null()
	case o.f64 != nil:
		if IsInteger(v.Type) {
			o.Float(float64(v.Int))
		} else {
			o.Float(v.Float)
		}
	case o.str != nil || o.lst != nil:
		o.Str(v.Str)
	case o.bl != nil:
		o.Bool(v.Bool)
	default:
		o.Int(v.Int)
	}
}

// Copy appends row i of c (whose type matches the builder's).
func (o *Out) Copy(c Col, i int) {
	switch {
	case c.Null(i):
		o.Null()
	case o.f64 != nil:
		o.Float(c.Float(i))
	case o.str != nil || o.lst != nil:
		o.Str(c.Str(i))
	case o.bl != nil:
		o.Bool(c.Bool(i))
	default:
		o.Int(c.Int(i))
	}
}

// Bytes is the number of string bytes appended so far.
func (o *Out) Bytes() int { return o.bytes }

// Finish returns the built array.
func (o *Out) Finish() arrow.Array {
	a := o.b.NewArray()
	o.b.Release()
	return a
}

// Release frees an unfinished builder.
func (o *Out) Release() { o.b.Release() }

// RowFunc computes row i of a result from the argument columns (no
// argument null when the kernel propagates nulls), appending exactly one
// value (or a null) to o.
type RowFunc func(args []Col, i int, o *Out) error

// Rows builds a kernel that runs f row by row. With propagate, a row where
// any argument is null is null without calling f.
func Rows(result arrow.DataType, propagate bool, f RowFunc) Kernel {
	return func(mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
		n := 0
		if len(args) == 0 {
			n = 1 // a function of no arguments computes one row
		}
		cols := make([]Col, len(args))
		anyNull := false
		for i, a := range args {
			cols[i] = NewCol(a)
			n = a.Len()
			anyNull = anyNull || a.NullN() > 0
		}
		o := NewOut(mem, result, n)
	rows:
		for i := 0; i < n; i++ {
			if propagate && anyNull {
				for _, c := range cols {
					if c.Null(i) {
						o.Null()
						continue rows
					}
				}
			}
			if err := f(cols, i, o); err != nil {
				o.Release()
				return nil, err
			}
		}
		return o.Finish(), nil
	}
}

// Broadcast returns an array of n copies of v, of type t (v's own type
// when t is nil; int64 for an untyped null).
func Broadcast(mem memory.Allocator, v *Value, t arrow.DataType, n int) arrow.Array {
	if t == nil {
		t = v.Type
	}
	if t.ID() == arrow.NULL {
		t = arrow.PrimitiveTypes.Int64
	}
	o := NewOut(mem, t, n)
	if v.Null {
		o.b.AppendNulls(n)
		return o.Finish()
	}
	for range n {
		o.Value(v)
	}
	return o.Finish()
}

// ValueAt returns row i of a (an array of an expression type) as a Value.
func ValueAt(a arrow.Array, i int) *Value {
	v := &Value{Type: a.DataType()}
	if a.IsNull(i) {
		v.Null = true
		return v
	}
	c := NewCol(a)
	switch a.DataType().ID() {
	case arrow.FLOAT64:
		v.Float = c.Float(i)
	case arrow.STRING, arrow.LARGE_STRING:
		v.Str = c.Str(i)
	case arrow.BOOL:
		v.Bool = c.Bool(i)
	default:
		v.Int = c.Int(i)
	}
	return v
}

// Eval runs a prepared kernel on constant arguments (constant folding):
// one row, the same kernel as the engine's.
func Eval(k Kernel, types []arrow.DataType, args []*Value) (v *Value, err error) {
	mem := memory.DefaultAllocator
	arrs := make([]arrow.Array, len(args))
	for i, a := range args {
		arrs[i] = Broadcast(mem, a, types[i], 1)
		defer arrs[i].Release()
	}
	out, err := k(mem, arrs)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return ValueAt(out, 0), nil
}
