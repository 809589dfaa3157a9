package materialize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// flatTable is a table of every flat column type with the edge cases of the
// flat path, in five batches of one row group: whole arrays, slices at odd
// offsets, dictionary columns with other dictionaries (same values in
// another order, entries that need a UTF-8 repair, a null entry), empty
// dictionaries with null rows, and dictionary columns whose rows are all
// null.
func flatTable(t testing.TB, mem memory.Allocator) *Table {
	t.Helper()
	names, cols, _ := fastPathColumns(t, mem)
	var fields []arrow.Field
	var whole []arrow.Array
	for i, c := range cols {
		f := arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
		if _, ok := flatColumnOf(f); !ok {
			c.Release()
			continue
		}
		fields, whole = append(fields, f), append(whole, array.NewSlice(c, 0, 10))
		c.Release()
	}
	extra := []struct {
		name string
		dt   arrow.DataType
		js   string
	}{
		{"i8", arrow.PrimitiveTypes.Int8, `[-128, 127, null, 0, 1, 2, 3, 4, 5, 6]`},
		{"i16", arrow.PrimitiveTypes.Int16, `[-32768, 32767, null, 0, 1, 2, 3, 4, 5, 6]`},
		{"i32", arrow.PrimitiveTypes.Int32, `[-2147483648, 2147483647, null, 0, 1, 2, 3, 4, 5, 6]`},
		{"u8", arrow.PrimitiveTypes.Uint8, `[255, 0, null, 1, 2, 3, 4, 5, 6, 7]`},
		{"u16", arrow.PrimitiveTypes.Uint16, `[65535, 0, null, 1, 2, 3, 4, 5, 6, 7]`},
		{"u64", arrow.PrimitiveTypes.Uint64, `[18446744073709551615, 0, null, 1, 2, 3, 4, 5, 6, 7]`},
		{"f64_nan", arrow.PrimitiveTypes.Float64, `[null, null, null, null, null, null, null, null, null, null]`},
		{"date", arrow.FixedWidthTypes.Date32, `[19782, -1, null, 0, 1, 2, 3, 4, 5, 6]`},
		{"t32s", arrow.FixedWidthTypes.Time32s, `[86399, 0, null, 1, 2, 3, 4, 5, 6, 7]`},
		{"ts_s_utc", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, `[1709618828, -1, null, 0, 1, 2, 3, 4, 5, 6]`},
		{"ts_ms", &arrow.TimestampType{Unit: arrow.Millisecond}, `[1709618828123, -500, null, 1, 2, 3, 4, 5, 6, 7]`},
		{"ts_us", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, `[1709618828123456, null, 0, -1, 1, 2, 3, 4, 5, 6]`},
		{"ts_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, `[1709618828123456789, null, 0, 1, 2, 3, 4, 5, 6, 7]`},
		{"long_str", arrow.BinaryTypes.String, `["` + string(bytes.Repeat([]byte("z"), 5000)) + `", "` + string(bytes.Repeat([]byte("y"), 40)) + `", null, "a", "b", "c", "d", "e", "f", "g"]`},
	}
	for _, e := range extra {
		fields, whole = append(fields, arrow.Field{Name: e.name, Type: e.dt, Nullable: true}), append(whole, fromJSON(t, mem, e.dt, e.js))
	}
	schema := arrow.NewSchema(fields, nil)
	const rows = 10
	build := func(col func(i int, a arrow.Array) arrow.Array) arrow.RecordBatch {
		arrs := make([]arrow.Array, len(whole))
		for i, a := range whole {
			arrs[i] = col(i, a)
		}
		b := array.NewRecordBatch(schema, arrs, int64(arrs[0].Len()))
		for _, a := range arrs {
			a.Release()
		}
		return b
	}
	isDict := func(a arrow.Array) (*arrow.DictionaryType, bool) {
		dt, ok := a.DataType().(*arrow.DictionaryType)
		return dt, ok
	}
	otherDict := func(a arrow.Array, dict, idx string) arrow.Array {
		dt, _ := isDict(a)
		d := fromJSON(t, mem, dt.ValueType, dict)
		defer d.Release()
		ix := fromJSON(t, mem, dt.IndexType, idx)
		defer ix.Release()
		return array.NewDictionaryArray(dt, ix, d)
	}
	batches := []arrow.RecordBatch{
		build(func(_ int, a arrow.Array) arrow.Array { a.Retain(); return a }),
		build(func(_ int, a arrow.Array) arrow.Array { return array.NewSlice(a, 3, 10) }),
		build(func(_ int, a arrow.Array) arrow.Array {
			if _, ok := isDict(a); ok {
				return otherDict(a, `["south", "zz", null, "north", "", "bad\u00e9"]`, `[0, 1, 2, 3, 4, 5, null, 3, 0, 1]`)
			}
			a.Retain()
			return a
		}),
		build(func(_ int, a arrow.Array) arrow.Array {
			if _, ok := isDict(a); ok {
				return otherDict(a, `[]`, `[null, null, null, null, null, null, null, null, null, null]`)
			}
			return array.NewSlice(a, 0, rows)
		}),
		build(func(_ int, a arrow.Array) arrow.Array {
			if _, ok := isDict(a); ok {
				return otherDict(a, `["only"]`, `[null]`)
			}
			return array.NewSlice(a, 1, 2)
		}),
	}
	for _, a := range whole {
		a.Release()
	}
	tbl := NewTable(schema, batches)
	releaseBatches(batches)
	return tbl
}

// writeBothPaths writes batches with the flat path and the row path.
func writeBothPaths(t *testing.T, schema *arrow.Schema, batches []arrow.RecordBatch, codec ParquetCodec) (flat, rows []byte) {
	t.Helper()
	c, err := codec.codec()
	if err != nil {
		t.Fatal(err)
	}
	for _, rowPath := range []bool{false, true} {
		var buf bytes.Buffer
		pw, err := newParquetWriterPath(&buf, schema, c, rowPath)
		if err != nil {
			t.Fatal(err)
		}
		if (pw.flat != nil) == rowPath {
			t.Fatalf("rowPath %v: flat writer %v", rowPath, pw.flat != nil)
		}
		for _, b := range batches {
			if err := pw.write(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}
		if err := pw.close(); err != nil {
			t.Fatal(err)
		}
		if rowPath {
			rows = buf.Bytes()
		} else {
			flat = buf.Bytes()
		}
	}
	return flat, rows
}

// readRows reads every row of a Parquet file with parquet-go as value keys.
func readRows(t *testing.T, data []byte) (*parquet.File, [][]string) {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	var out [][]string
	buf := make([]parquet.Row, 100)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			keys := make([]string, len(row))
			for i, v := range row {
				keys[i] = valueKey(v)
			}
			out = append(out, keys)
		}
		if errors.Is(err, io.EOF) {
			return pf, out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readArrow reads a Parquet file with arrow-go's pqarrow, one array per
// column.
func readArrow(t *testing.T, mem memory.Allocator, data []byte) []arrow.Array {
	t.Helper()
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	out := make([]arrow.Array, tbl.NumCols())
	for i := range out {
		chunks := tbl.Column(i).Data().Chunks()
		if len(chunks) == 0 {
			out[i] = array.MakeArrayOfNull(mem, tbl.Column(i).DataType(), 0)
			continue
		}
		a, err := array.Concatenate(chunks, mem)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = a
	}
	return out
}

// TestParquetFlatMatchesRowPath writes tables with the flat path and with
// parquet-go's row path and checks that parquet-go and arrow-go's pqarrow
// read the same schema, values and nulls from both files, that the page
// index and chunk statistics agree, and that dictionary columns were
// written with dictionary pages.
func TestParquetFlatMatchesRowPath(t *testing.T) {
	alloc := newAlloc(t)
	for _, tc := range []struct {
		name  string
		table func(testing.TB, memory.Allocator) *Table
	}{
		{"types", flatTable},
		{"row-groups", func(t testing.TB, mem memory.Allocator) *Table {
			return q6LikeTable(t, mem, 2*ParquetRowGroupRows+5000, 70_001)
		}},
		{"mixed-encodings", mixedEncodingsTable},
	} {
		for _, codec := range []ParquetCodec{ParquetZstd, ParquetUncompressed} {
			t.Run(tc.name+"/"+string(codec), func(t *testing.T) {
				tbl := tc.table(t, alloc)
				defer tbl.Release()
				flat, rows := writeBothPaths(t, tbl.Schema(), tbl.batches, codec)
				fpf, frows := readRows(t, flat)
				rpf, rrows := readRows(t, rows)
				if len(frows) != int(tbl.NumRows()) || len(rrows) != len(frows) {
					t.Fatalf("%d rows flat, %d row path, want %d", len(frows), len(rrows), tbl.NumRows())
				}
				for i := range rrows {
					for j := range rrows[i] {
						if frows[i][j] != rrows[i][j] {
							t.Fatalf("row %d column %s: flat %s, row path %s", i, tbl.Schema().Field(j).Name, frows[i][j], rrows[i][j])
						}
					}
				}
				fmd, rmd := fpf.Metadata(), rpf.Metadata()
				if len(fmd.Schema) != len(rmd.Schema) {
					t.Fatalf("schema: %d elements, want %d", len(fmd.Schema), len(rmd.Schema))
				}
				for i := range rmd.Schema {
					if f, r := fmt.Sprintf("%+v", fmd.Schema[i]), fmt.Sprintf("%+v", rmd.Schema[i]); f != r {
						t.Errorf("schema element %d: %+v, want %+v", i, f, r)
					}
				}
				if len(fmd.RowGroups) != len(rmd.RowGroups) {
					t.Fatalf("%d row groups, want %d", len(fmd.RowGroups), len(rmd.RowGroups))
				}
				checkFlatIndex(t, tbl.Schema(), fpf, rpf)
				if tc.name == "mixed-encodings" {
					// k, f, s: a dictionary in the first row group, not in
					// the second (the short third may have one).
					for g, rg := range fmd.RowGroups[:2] {
						for c, cc := range rg.Columns {
							if (cc.MetaData.DictionaryPageOffset > 0) != (g == 0) {
								t.Errorf("row group %d column %d: dictionary page offset %d", g, c, cc.MetaData.DictionaryPageOffset)
							}
						}
					}
				}

				// Not the checked allocator: pqarrow leaks a buffer of its DELTA decoders.
				fa, ra := readArrow(t, memory.DefaultAllocator, flat), readArrow(t, memory.DefaultAllocator, rows)
				for i := range ra {
					if !arrow.TypeEqual(fa[i].DataType(), ra[i].DataType()) || !array.ApproxEqual(fa[i], ra[i], array.WithNaNsEqual(true)) {
						t.Errorf("pqarrow column %s: flat %s %v, row path %s %v", tbl.Schema().Field(i).Name, fa[i].DataType(), fa[i], ra[i].DataType(), ra[i])
					}
					fa[i].Release()
					ra[i].Release()
				}
			})
		}
	}
}

// checkFlatIndex compares the flat file's chunk statistics and page index
// with the row path's (whose pages may split differently: the bounds of
// all pages are compared), and checks the encodings of dictionary columns.
func checkFlatIndex(t *testing.T, schema *arrow.Schema, fpf, rpf *parquet.File) {
	t.Helper()
	fmd, rmd := fpf.Metadata(), rpf.Metadata()
	fci, rci := fpf.ColumnIndexes(), rpf.ColumnIndexes()
	ncols := schema.NumFields()
	for g := range rmd.RowGroups {
		for c := range ncols {
			name := schema.Field(c).Name
			fc, rc := fmd.RowGroups[g].Columns[c].MetaData, rmd.RowGroups[g].Columns[c].MetaData
			if fc.NumValues != rc.NumValues || fc.Statistics.NullCount != rc.Statistics.NullCount {
				t.Errorf("rg %d %s: %d values %d nulls, want %d %d", g, name, fc.NumValues, fc.Statistics.NullCount, rc.NumValues, rc.Statistics.NullCount)
			}
			kind := fpf.Root().Column(name).Type()
			if !sameBound(kind, fc.Statistics.MinValue, rc.Statistics.MinValue) || !sameBound(kind, fc.Statistics.MaxValue, rc.Statistics.MaxValue) {
				t.Errorf("rg %d %s: bounds %x..%x, want %x..%x", g, name, fc.Statistics.MinValue, fc.Statistics.MaxValue, rc.Statistics.MinValue, rc.Statistics.MaxValue)
			}
			_, isDict := schema.Field(c).Type.(*arrow.DictionaryType)
			if isDict && fc.DictionaryPageOffset == 0 && schema.Field(c).Name != "s" {
				t.Errorf("rg %d %s: dictionary page offset %d", g, name, fc.DictionaryPageOffset)
			}
			fi, ri := fci[g*ncols+c], rci[g*ncols+c]
			var fn, rn int64
			for _, n := range fi.NullCounts {
				fn += n
			}
			for _, n := range ri.NullCounts {
				rn += n
			}
			if fn != rn {
				t.Errorf("rg %d %s: page index counts %d nulls, want %d", g, name, fn, rn)
			}
			flo, fhi := indexBounds(kind, fi)
			rlo, rhi := indexBounds(kind, ri)
			if !sameBound(kind, flo, rlo) || !sameBound(kind, fhi, rhi) {
				t.Errorf("rg %d %s: page index bounds %x..%x, want %x..%x", g, name, flo, fhi, rlo, rhi)
			}
		}
	}
}

// indexBounds returns the least min and greatest max of a column index
// (nil: every page is null).
func indexBounds(kind parquet.Type, ci format.ColumnIndex) (lo, hi []byte) {
	k := kind.Kind()
	for p := range ci.NullPages {
		if ci.NullPages[p] {
			continue
		}
		if lo == nil || kind.Compare(k.Value(ci.MinValues[p]), k.Value(lo)) < 0 {
			lo = ci.MinValues[p]
		}
		if hi == nil || kind.Compare(k.Value(ci.MaxValues[p]), k.Value(hi)) > 0 {
			hi = ci.MaxValues[p]
		}
	}
	return lo, hi
}

// sameBound reports whether two encoded bounds are equal (floating-point
// zeros of either sign are equal: the flat path signs them as the format
// asks, min -0 and max +0).
func sameBound(kind parquet.Type, a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	k := kind.Kind()
	if k != parquet.Float && k != parquet.Double {
		return false
	}
	return kind.Compare(k.Value(a), k.Value(b)) == 0
}

// mixedEncodingsTable has columns whose row groups the flat path encodes
// differently: k is 7 distinct numbers in the first row group (a
// dictionary) and distinct numbers spanning the int64 range after it
// (DELTA_BINARY_PACKED, deltas of every width that wrap around); f 7
// distinct float64 values, then distinct ones (PLAIN); s a dictionary
// column whose batches of the first row group share a 3-entry dictionary
// and whose later batches carry dictionaries far larger than the row group
// (PLAIN byte arrays).
func mixedEncodingsTable(t testing.TB, mem memory.Allocator) *Table {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: dt, Nullable: true},
	}, nil)
	const batchRows = 32 * 1024
	rows := 2*ParquetRowGroupRows + 1000
	small := fromJSON(t, mem, arrow.BinaryTypes.String, `["x", "y", null]`)
	defer small.Release()
	sb := array.NewStringBuilder(mem)
	for i := range 3 * ParquetRowGroupRows {
		sb.Append(fmt.Sprintf("v%07d", i))
	}
	big := sb.NewArray()
	sb.Release()
	defer big.Release()
	var batches []arrow.RecordBatch
	for lo := 0; lo < rows; lo += batchRows {
		n := min(batchRows, rows-lo)
		kb, fb, ib := array.NewInt64Builder(mem), array.NewFloat64Builder(mem), array.NewInt32Builder(mem)
		for i := lo; i < lo+n; i++ {
			first := i < ParquetRowGroupRows
			switch {
			case i%1001 == 3:
				kb.AppendNull()
				fb.AppendNull()
				ib.AppendNull()
				continue
			case first:
				kb.Append(int64(i % 7))
				fb.Append(float64(i%7) / 2)
				ib.Append(int32(i % 3))
			default:
				kb.Append(int64(uint64(i) * 0x9E3779B97F4A7C15)) // deltas of every width, wrapping
				fb.Append(float64(i) / 3)
				ib.Append(int32(i))
			}
		}
		dict := big
		if lo < ParquetRowGroupRows {
			dict = small
		}
		k, f, ix := kb.NewArray(), fb.NewArray(), ib.NewArray()
		s := array.NewDictionaryArray(dt, ix, dict)
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{k, f, s}, int64(n)))
		for _, a := range []arrow.Array{k, f, ix, s} {
			a.Release()
		}
		kb.Release()
		fb.Release()
		ib.Release()
	}
	tbl := NewTable(schema, batches)
	releaseBatches(batches)
	return tbl
}

// TestParquetFlatBytesRuns: byte-array columns written a page share at a
// time (putRun) give the same file, byte for byte, as written a value at a
// time (put): pages cut at the same rows (short values past flatPageRows,
// long ones past flatPageBytes), the same bounds; batches with nulls and
// with characters split across values (repaired one by one) take put.
func TestParquetFlatBytesRuns(t *testing.T) {
	alloc := newAlloc(t)
	defer alloc.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	var batches []arrow.RecordBatch
	for k, shape := range []string{"short", "long", "nulls", "split", "short"} {
		sb, bb := array.NewStringBuilder(alloc), array.NewBinaryBuilder(alloc, arrow.BinaryTypes.Binary)
		n := 50_000
		if shape == "long" {
			n = 40
		}
		for i := range n {
			var v string
			switch shape {
			case "long":
				v = strings.Repeat(string(rune('a'+i%26)), 1000+rng.IntN(100_000))
			case "split":
				v = []string{"é", "\xc3", "\xa9x", "ok"}[i%4]
			default:
				v = fmt.Sprintf("id%d-%x", k*n+i, rng.Uint32()>>uint(rng.IntN(32)))
			}
			if shape == "nulls" && i%97 == 5 {
				sb.AppendNull()
				bb.AppendNull()
				continue
			}
			sb.Append(v)
			bb.Append([]byte(v))
		}
		s, b := sb.NewArray(), bb.NewArray()
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{s, b}, int64(n)))
		s.Release()
		b.Release()
		sb.Release()
		bb.Release()
	}
	defer releaseBatches(batches)
	for _, codec := range []ParquetCodec{ParquetSnappy, ParquetUncompressed} {
		var files [2][]byte
		for i, runs := range []bool{false, true} {
			bytesRuns = runs
			files[i], _ = writeBothPaths(t, schema, batches, codec)
		}
		bytesRuns = true
		if !bytes.Equal(files[0], files[1]) {
			t.Fatalf("%s: %d bytes a value at a time, %d a run at a time", codec, len(files[0]), len(files[1]))
		}
		if _, rows := readRows(t, files[1]); len(rows) != 50_000*4+40 {
			t.Fatalf("%s: %d rows read back", codec, len(rows))
		}
	}
}
