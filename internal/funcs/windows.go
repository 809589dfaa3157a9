package funcs

import (
	"fmt"
	"strings"
)

// WindowFn is a window function of the windows knob, e.g. WinRank. An
// aggregate function (AggFn) declared Window is also a valid window
// function: it is then computed over each row's frame.
type WindowFn string

// The window-only functions (declared in builtinWindows).
const (
	WinRowNumber   WindowFn = "row_number"
	WinRank        WindowFn = "rank"
	WinDenseRank   WindowFn = "dense_rank"
	WinPercentRank WindowFn = "percent_rank"
	WinCumeDist    WindowFn = "cume_dist"
	WinNtile       WindowFn = "ntile"
	WinLag         WindowFn = "lag"
	WinLead        WindowFn = "lead"
	WinFirstValue  WindowFn = "first_value"
	WinLastValue   WindowFn = "last_value"
	WinNthValue    WindowFn = "nth_value"
)

// WindowArg says what the integer argument (args[0]) of a window function is.
type WindowArg int

// Integer argument kinds.
const (
	// ArgNone: the function takes no args.
	ArgNone WindowArg = iota
	// ArgOffset: optional row offset >= 0, default 1 (lag, lead).
	ArgOffset
	// ArgBuckets: required number of buckets >= 1 (ntile).
	ArgBuckets
	// ArgNth: required position >= 1 within the frame (nth_value).
	ArgNth
)

// WindowDecl declares one window-only function.
type WindowDecl struct {
	Fn WindowFn
	// Col: the function reads a column (its value is the result's type).
	Col bool
	// Arg is the kind of its integer argument.
	Arg WindowArg
	// Frame: the result depends on the frame (else the frame is rejected).
	Frame bool
	// ResultDoc names the output type; Doc is the one-line semantics.
	ResultDoc, Doc string
}

func builtinWindows() []*WindowDecl {
	return []*WindowDecl{
		{Fn: WinRowNumber, ResultDoc: "int64", Doc: "1, 2, 3, … in partition order; ties numbered in input order"},
		{Fn: WinRank, ResultDoc: "int64", Doc: "1 + rows before the first row with equal `order_by` values (ties share a rank, gaps follow)"},
		{Fn: WinDenseRank, ResultDoc: "int64", Doc: "rank without gaps: 1 + distinct `order_by` values before"},
		{Fn: WinPercentRank, ResultDoc: "float64", Doc: "(rank - 1) / (partition rows - 1); 0 for a one-row partition"},
		{Fn: WinCumeDist, ResultDoc: "float64", Doc: "(rows up to and including the row's last tie) / partition rows"},
		{Fn: WinNtile, Arg: ArgBuckets, ResultDoc: "int64", Doc: "bucket 1..n of the row; bucket sizes differ by at most one, bigger buckets first"},
		{Fn: WinLag, Col: true, Arg: ArgOffset, ResultDoc: "column type", Doc: "value `offset` rows (default 1) before in the partition; before the first row: `default` (a value of the column's type, as in DuckDB's `lag(x, offset, default)`), else null"},
		{Fn: WinLead, Col: true, Arg: ArgOffset, ResultDoc: "column type", Doc: "value `offset` rows (default 1) after in the partition; past the last row: `default`, else null"},
		{Fn: WinFirstValue, Col: true, Frame: true, ResultDoc: "column type", Doc: "value of the frame's first row (null if that value is null or the frame is empty)"},
		{Fn: WinLastValue, Col: true, Frame: true, ResultDoc: "column type", Doc: "value of the frame's last row (with the default frame: the row's last tie)"},
		{Fn: WinNthValue, Col: true, Arg: ArgNth, Frame: true, ResultDoc: "column type", Doc: "value of the frame's n-th row (1-based); null when the frame is shorter"},
	}
}

var windows = newTable("window function", func(d *WindowDecl) WindowFn { return d.Fn })

func init() {
	for _, d := range builtinWindows() {
		windows.add(d)
	}
}

// Lookup returns the declaration of a window-only function; false for an
// aggregate or an unknown name (see Agg).
func (f WindowFn) Lookup() (*WindowDecl, bool) { return windows.lookup(f) }

// Agg returns the declaration of the aggregate f names, when it names one.
func (f WindowFn) Agg() (*AggDecl, bool) { return AggFn(f).Lookup() }

// Windows returns the declarations of the window-only functions, in documentation order.
func Windows() []*WindowDecl { return windows.decls }

// WindowNames returns the valid window function names: the window-only
// functions, then the aggregate functions declared Window.
func WindowNames() []string { return append(windows.names(nil), WindowAggNames()...) }

// WindowAggNames returns the names of the aggregates that are also window
// functions (AggDecl.Window), in documentation order.
func WindowAggNames() []string {
	return AggNamesWhere(func(d *AggDecl) bool { return d.Window })
}

// EnumValues implements the schema generator's enum hook.
func (WindowFn) EnumValues() []string { return WindowNames() }

func windowTable() string {
	var b strings.Builder
	b.WriteString("| fn | col | args | result | semantics |\n| --- | --- | --- | --- | --- |\n")
	for _, d := range Windows() {
		col, args := "", ""
		if d.Col {
			col = "required"
		}
		switch d.Arg {
		case ArgOffset:
			args = "`[offset]`, offset ≥ 0, default 1"
		case ArgBuckets:
			args = "`[n]`, n ≥ 1, required"
		case ArgNth:
			args = "`[n]`, n ≥ 1, required"
		}
		doc := d.Doc
		if d.Frame {
			doc += "; uses the frame"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Fn, col, args, d.ResultDoc, doc)
	}
	fmt.Fprintf(&b, "| %s | as for the aggregate | none (`quantile`: `q`; `corr`, `covar_*`, `regr_*`, `arg_min`/`arg_max`, `string_agg`: `arg` as in aggs, a column or the separator) | as for the aggregate | the aggregate over the row's frame |\n", "`"+strings.Join(WindowAggNames(), "`, `")+"`")
	return b.String()
}
