package main

import (
	"context"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/hdf5"
)

// checkForm is how an HDF5 query's RESULT line carries its first rows,
// mirroring runners/h5py_runner.py so the harness's checksums compare.
type checkForm int

const (
	// formValues: the first elements, one row each (a compound element
	// spreads over one column per member).
	formValues checkForm = iota
	// formSumValues: a first row with the total sum of the (numeric)
	// selection, then the first elements.
	formSumValues
	// formSumRows: a 2-D selection as columns sum, v0..v3: a first row with
	// the total sum, then per row of the selection its first four values.
	formSumRows
)

// h5Query is one of the harness's HDF5 reads: a dataset, a NumPy slice
// ("..." = everything) and the form of its first rows.
type h5Query struct {
	dataset, slice string
	form           checkForm
}

// h5Queries are H1-H8 of ../shared/bench/README.md ("Queries"). Each is
// one read_dataset_slice call: hdf5.Format.ReadSlice, the tool's read path.
var h5Queries = map[string]h5Query{
	"H1": {"/sales/price", "1000000:1010000", formValues},
	"H2": {"/grid", "1000:1512, 2000:2512", formSumRows},
	"H3": {"/sales/price", "...", formSumValues},
	"H4": {"/sales/product", "...", formValues},
	"H5": {"/sales/note", "...", formValues},
	"H6": {"/grid", "...", formSumRows},
	"H7": {"/events", "...", formValues},
	"H8": {"/events", "250000:260000", formValues},
}

// h5QueryNames lists h5Queries in order.
var h5QueryNames = []string{"H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8"}

// isH5Query reports whether q names an HDF5 query (H followed by anything;
// unknown ones fail in their RESULT line).
func isH5Query(q string) bool { return strings.HasPrefix(q, "H") }

// h5Runner runs the HDF5 queries over the file given by --h5.
type h5Runner struct {
	o    options
	file string // absolute path
}

// runH5 runs queries (all HDF5) in the runner's mode. cold: every rep
// creates a fresh hdf5.Format, so the file is opened (and closed) inside
// the timing, like h5py's cold "with h5py.File(...)". warm: one Format opens
// the file once (LOAD) and keeps it open; every rep re-reads the data.
func runH5(o options, queries []string) {
	abs, err := filepath.Abs(o.h5)
	if err != nil {
		fail(err.Error())
	}
	r := &h5Runner{o: o, file: abs}
	if o.mode == "warm" {
		r.warm(queries)
	} else {
		r.cold(queries)
	}
}

func (r *h5Runner) cold(queries []string) {
	ctx := context.Background()
	for _, q := range queries {
		for rep := 1; rep <= r.o.reps; rep++ {
			rec := map[string]any{"query": q, "rep": rep}
			t0 := time.Now()
			f := hdf5.NewFormat()
			sl, err := r.read(ctx, f, q)
			if cerr := f.Close(); err == nil && cerr != nil {
				err = cerr
			}
			r.finish(q, rep, sl, err, rec, t0)
			emit("RESULT", rec)
		}
	}
}

func (r *h5Runner) warm(queries []string) {
	ctx := context.Background()
	f := hdf5.NewFormat()
	defer f.Close()
	t0 := time.Now()
	if _, err := f.Browse(ctx, r.file, "/"); err != nil { // opens the file into the Format's cache
		for _, q := range queries {
			for rep := 1; rep <= r.o.reps; rep++ {
				emit("RESULT", map[string]any{"query": q, "rep": rep, "error": "load failed: " + errText(err)})
			}
		}
		return
	}
	emit("LOAD", map[string]any{"peer": "ours", "mode": "warm", "what": "h5", "secs": time.Since(t0).Seconds(), "rows": nil})
	for _, q := range queries {
		for rep := 1; rep <= r.o.reps; rep++ {
			rec := map[string]any{"query": q, "rep": rep}
			runtime.GC() // the previous result is gone; freeing it is not this query's cost
			t0 := time.Now()
			sl, err := r.read(ctx, f, q)
			r.finish(q, rep, sl, err, rec, t0)
			rec["peak_rss_bytes"] = peakRSS()
			emit("RESULT", rec)
		}
	}
}

// read issues query q through f: the timed part.
func (r *h5Runner) read(ctx context.Context, f *hdf5.Format, q string) (*hdf5.Slice, error) {
	hq, ok := h5Queries[q]
	if !ok {
		return nil, fmt.Errorf("unknown query %q", q)
	}
	return f.ReadSlice(ctx, r.file, hq.dataset, hq.slice, memory.DefaultAllocator)
}

// finish records the timing since t0 and, on rep 1, the first rows; it
// releases sl.
func (r *h5Runner) finish(q string, rep int, sl *hdf5.Slice, err error, rec map[string]any, t0 time.Time) {
	secs := time.Since(t0).Seconds()
	defer sl.Release()
	if err != nil {
		rec["error"] = errText(err)
		return
	}
	rec["secs"] = secs
	rows := int64(sl.Values.Len())
	if len(sl.Shape) > 0 {
		rows = sl.Shape[0]
	}
	rec["rows"] = rows
	if rep == 1 {
		hq := h5Queries[q]
		cols, kinds, first, err := h5FirstRows(sl, path.Base(hq.dataset), hq.form)
		if err != nil {
			delete(rec, "secs")
			delete(rec, "rows")
			rec["error"] = errText(err)
			return
		}
		rec["cols"], rec["kinds"], rec["first_rows"] = cols, kinds, first
	}
}

// h5FirstRows renders sl's first rows in form (see checkForm); name is the
// column name of a non-compound selection.
func h5FirstRows(sl *hdf5.Slice, name string, form checkForm) (cols, kinds []string, rows [][]any, err error) {
	v := sl.Values
	switch form {
	case formValues:
		if st, ok := v.(*array.Struct); ok {
			styp := st.DataType().(*arrow.StructType)
			for i, f := range styp.Fields() {
				cols = append(cols, f.Name)
				kinds = append(kinds, kindOf(st.Field(i).DataType()))
			}
			for i := range min(st.Len(), firstRows) {
				row := make([]any, st.NumField())
				for c := range row {
					row[c] = h5Cell(st.Field(c), i)
				}
				rows = append(rows, row)
			}
			return cols, kinds, rows, nil
		}
		for i := range min(v.Len(), firstRows) {
			rows = append(rows, []any{h5Cell(v, i)})
		}
		return []string{name}, []string{kindOf(v.DataType())}, rows, nil
	case formSumValues:
		sum, err := h5Sum(v)
		if err != nil {
			return nil, nil, nil, err
		}
		rows = append(rows, []any{finiteOrNil(sum)})
		for i := range min(v.Len(), firstRows-1) {
			rows = append(rows, []any{h5Cell(v, i)})
		}
		return []string{name}, []string{"f"}, rows, nil
	case formSumRows:
		if len(sl.Shape) != 2 {
			return nil, nil, nil, fmt.Errorf("%s: a 2-D selection was expected, got shape %v", name, sl.Shape)
		}
		sum, err := h5Sum(v)
		if err != nil {
			return nil, nil, nil, err
		}
		const perRow = 4
		cols = []string{"sum"}
		for j := range perRow {
			cols = append(cols, fmt.Sprintf("v%d", j))
		}
		kinds = []string{"f", "f", "f", "f", "f"}
		rows = append(rows, []any{finiteOrNil(sum), nil, nil, nil, nil})
		width := int(sl.Shape[1])
		for i := range min(int(sl.Shape[0]), firstRows-1) {
			row := []any{nil}
			for j := range min(width, perRow) {
				row = append(row, h5Cell(v, i*width+j))
			}
			rows = append(rows, row)
		}
		return cols, kinds, rows, nil
	}
	return nil, nil, nil, fmt.Errorf("unknown check form %d", form)
}

// h5Sum is the sum of a numeric array in float64 arithmetic (NaN if any
// element is NaN, like NumPy; HDF5 numbers are never null).
func h5Sum(a arrow.Array) (float64, error) {
	var s float64
	switch a := a.(type) {
	case *array.Float64:
		for _, x := range a.Float64Values() {
			s += x
		}
	case *array.Float32:
		for _, x := range a.Float32Values() {
			s += float64(x)
		}
	case *array.Int64:
		for _, x := range a.Int64Values() {
			s += float64(x)
		}
	case *array.Int32:
		for _, x := range a.Int32Values() {
			s += float64(x)
		}
	default:
		return 0, fmt.Errorf("cannot sum a %s array", a.DataType())
	}
	return s, nil
}

// h5Cell is one value as h5py_runner.py writes it: integers as decimal
// strings, finite floats as numbers (NaN and infinities as null), strings
// as is.
func h5Cell(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Float64:
		return finiteOrNil(a.Value(i))
	case *array.Float32:
		return finiteOrNil(float64(a.Value(i)))
	case *array.String:
		return strings.Clone(a.Value(i))
	case *array.Boolean:
		return a.Value(i)
	}
	return strings.Clone(a.ValueStr(i)) // integers of every width: decimal
}

func finiteOrNil(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}
