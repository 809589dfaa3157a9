package materialize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/quarrydb/quarry/internal/qerr"
)

// dictArray builds a dictionary array of the given index type over the
// string dictionary dict (a JSON array) with the JSON indices idx.
func dictArray(t testing.TB, mem memory.Allocator, index arrow.DataType, dict, idx string) arrow.Array {
	t.Helper()
	d := fromJSON(t, mem, arrow.BinaryTypes.String, dict)
	defer d.Release()
	ix := fromJSON(t, mem, index, idx)
	defer ix.Release()
	dt := &arrow.DictionaryType{IndexType: index, ValueType: arrow.BinaryTypes.String}
	return array.NewDictionaryArray(dt, ix, d)
}

// fastPathColumns are arrays the specialised loops must handle (fast is
// false for those deliberately left to the generic path), with the edge
// cases of each layout: nulls, slices at odd offsets, invalid UTF-8 (also
// split across values), empty values, extreme numbers, NaN.
func fastPathColumns(t testing.TB, mem memory.Allocator) (names []string, cols []arrow.Array, fast []bool) {
	t.Helper()
	add := func(name string, a arrow.Array, isFast bool) {
		names, cols, fast = append(names, name), append(cols, a), append(fast, isFast)
	}
	slice := func(a arrow.Array, lo, hi int64) arrow.Array {
		defer a.Release()
		return array.NewSlice(a, lo, hi)
	}
	add("f64", fromJSON(t, mem, arrow.PrimitiveTypes.Float64, `[1.5, null, -0.0, 1e308, -1e-308, 2, 3, null, 4, 5]`), true)
	add("f32", fromJSON(t, mem, arrow.PrimitiveTypes.Float32, `[1.5, null, -0.0, 3e38, 1, 2, 3, null, 4, 5]`), true)
	add("i64_sliced", slice(fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[0, 1, null, 3, 4, 5, 6, 7, 8, null, 10, 11, -9223372036854775808]`), 3, 13), true)
	add("u32_sliced", slice(fromJSON(t, mem, arrow.PrimitiveTypes.Uint32, `[0, 4294967295, null, 3, 4, 5, 6, 7, 8, null, 10, 11]`), 1, 11), true)
	add("t32ms", fromJSON(t, mem, arrow.FixedWidthTypes.Time32ms, `[86399999, 0, null, 1, 2, 3, 4, 5, 6, 7]`), true)
	add("t64us", fromJSON(t, mem, arrow.FixedWidthTypes.Time64us, `[86399999999, 0, null, 1, 2, 3, 4, 5, 6, 7]`), true)
	add("dur_ns", fromJSON(t, mem, arrow.FixedWidthTypes.Duration_ns, `[1, null, -1, 0, 1, 2, 3, 4, 5, 6]`), true)
	add("bool_sliced", slice(fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, `[true, false, null, true, true, false, null, true, false, true, true, false]`), 2, 12), true)
	// Invalid UTF-8: whole values, a truncated character at the end, and a
	// character split over two values (valid once concatenated).
	add("str", fromJSON(t, mem, arrow.BinaryTypes.String, `["a", "", null, "é", "Բարեւ", "z", "x", "y", "w", "v"]`), true)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"ok", "bad\xff", "\xc3", "\xa9", "trunc\xe2\x82", "", "\x80lead", "fine", "é", "end"}, nil)
	sb.AppendNull()
	sb.AppendValues([]string{"x", "\xa9"}, nil)
	add("str_invalid_sliced", slice(sb.NewArray(), 1, 13), true)
	sb.Release()
	lsb := array.NewLargeStringBuilder(mem)
	lsb.AppendValues([]string{"\xc3", "\xa9", "", "é", "a", "b", "c", "d", "e", "f"}, nil)
	add("lstr_split", lsb.NewArray(), true)
	lsb.Release()
	add("bin", fromJSON(t, mem, arrow.BinaryTypes.Binary, `["/w==", "", null, "YQ==", "Yg==", "Yw==", "ZA==", "ZQ==", "Zg==", "Zw=="]`), true)
	add("lbin", fromJSON(t, mem, arrow.BinaryTypes.LargeBinary, `["/w==", "", null, "YQ==", "Yg==", "Yw==", "ZA==", "ZQ==", "Zg==", "Zw=="]`), true)
	// Dictionaries: every index type, null rows, a null and an invalid
	// UTF-8 dictionary entry, a slice.
	for _, ix := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64} {
		add("dict_"+ix.String(), dictArray(t, mem, ix, `["north", null, "bad\u00e9", "", "south"]`, `[0, 1, null, 2, 3, 4, 0, 0, null, 4]`), true)
	}
	sliced := dictArray(t, mem, arrow.PrimitiveTypes.Int32, `["a", "b", "c"]`, `[0, 1, 2, null, 1, 0, 2, 2, 1, 0, 0, 1]`)
	add("dict_sliced", slice(sliced, 2, 12), true)
	// A dictionary much larger than the array: left to the generic path.
	big := make([]string, dictPrecomputeSlack+20)
	for i := range big {
		big[i] = fmt.Sprintf("%q", fmt.Sprint("v", i))
	}
	add("dict_big", dictArray(t, mem, arrow.PrimitiveTypes.Int32, "["+strings.Join(big, ",")+"]", `[0, 1, null, 4000, 4100, 5, 6, 7, 8, 9]`), false)
	// Types without a specialised loop.
	add("f16", fromJSON(t, mem, arrow.FixedWidthTypes.Float16, `[1.5, null, 0, 1, 2, 3, 4, 5, 6, 7]`), false)
	add("null", array.NewNull(10), false)
	return names, cols, fast
}

// valueKey describes a parquet value completely (kind, bit pattern, levels,
// column): NaN-safe, unlike parquet.Equal.
func valueKey(v parquet.Value) string {
	return fmt.Sprintf("%v/%v/%x/r%d/d%d/c%d", v.Kind(), v.IsNull(), v.Bytes(), v.RepetitionLevel(), v.DefinitionLevel(), v.Column())
}

// TestParquetFastPathMatchesGeneric checks that the specialised loops write
// exactly the values of the generic per-value mapping, over whole arrays and
// sub-ranges (as the writer's chunks see them).
func TestParquetFastPathMatchesGeneric(t *testing.T) {
	alloc := newAlloc(t)
	names, cols, fast := fastPathColumns(t, alloc)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	all := allTypesTable(t, alloc)
	defer all.Release()
	for _, b := range all.batches {
		for i, f := range b.Schema().Fields() {
			names, cols, fast = append(names, "all_"+f.Name), append(cols, b.Column(i)), append(fast, false)
			b.Column(i).Retain()
		}
	}
	for i, arr := range cols {
		t.Run(names[i], func(t *testing.T) {
			pc := parquetColumnOf(arr.DataType())
			slow := pc
			slow.generic = true
			if fast[i] {
				var got valueAppender
				if d, ok := arr.(*array.Dictionary); ok {
					got = dictionaryAppender(d, *pc.dict, 3)
				} else {
					got = fastAppender(arr, 3)
				}
				if got == nil {
					t.Fatalf("%s has no specialised loop", arr.DataType())
				}
			}
			n := arr.Len()
			for _, r := range [][2]int{{0, n}, {1, n - 1}, {n / 2, n}, {0, 0}} {
				if r[1] < r[0] {
					continue
				}
				want := slow.bind(arr, 3)(nil, r[0], r[1])
				prefix := []parquet.Value{parquet.Int32Value(7)} // appenders append
				got := pc.bind(arr, 3)(prefix, r[0], r[1])
				if len(got) != len(want)+1 || valueKey(got[0]) != valueKey(prefix[0]) {
					t.Fatalf("rows %v: %d values, want %d after the prefix", r, len(got)-1, len(want))
				}
				for j := range want {
					if g, w := valueKey(got[j+1]), valueKey(want[j]); g != w {
						t.Errorf("rows %v, row %d: %s, want %s", r, r[0]+j, g, w)
					}
				}
			}
		})
	}
}

// q6LikeTable is a small id/region/price table shaped like the benchmark's
// Q6 result (region a dictionary with int16 indices, as the column cache
// delivers it), with nulls, spanning several row groups when rows >
// ParquetRowGroupRows.
func q6LikeTable(t testing.TB, mem memory.Allocator, rows, batchRows int) *Table {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "region", Type: dt, Nullable: true},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	var batches []arrow.RecordBatch
	for lo := 0; lo < rows; lo += batchRows {
		for i := lo; i < min(rows, lo+batchRows); i++ {
			ids := b.Field(0).(*array.Int64Builder)
			reg := b.Field(1).(*array.BinaryDictionaryBuilder)
			price := b.Field(2).(*array.Float64Builder)
			if i%97 == 5 {
				ids.AppendNull()
			} else {
				ids.Append(int64(i) * 3)
			}
			if i%89 == 7 {
				reg.AppendNull()
			} else if err := reg.AppendString(q6Regions[(i*7)%len(q6Regions)]); err != nil {
				t.Fatal(err)
			}
			switch i % 101 {
			case 9:
				price.AppendNull()
			case 10:
				price.Append(math.NaN())
			default:
				price.Append(float64(i%1000) / 4)
			}
		}
		batches = append(batches, b.NewRecordBatch())
	}
	tbl := NewTable(schema, batches)
	for _, r := range batches {
		r.Release()
	}
	return tbl
}

// TestWriteParquetCodecs writes the same table with each codec and reads it
// back with parquet-go: codec in the metadata, every value, chunk statistics
// and a page index for every column chunk.
func TestWriteParquetCodecs(t *testing.T) {
	alloc := newAlloc(t)
	const rows = ParquetRowGroupRows + 1000
	tbl := q6LikeTable(t, alloc, rows, 50_000)
	defer tbl.Release()
	for _, tc := range []struct {
		codec ParquetCodec
		want  format.CompressionCodec
	}{{"", format.Snappy}, {ParquetZstd, format.Zstd}, {ParquetSnappy, format.Snappy}, {ParquetUncompressed, format.Uncompressed}} {
		t.Run(string(tc.codec), func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteParquetWith(context.Background(), &buf, tbl.Schema(), tbl.batches, ParquetOptions{Codec: tc.codec}); err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			md := pf.Metadata()
			if len(md.RowGroups) != 2 || md.RowGroups[0].NumRows != ParquetRowGroupRows {
				t.Fatalf("row groups %d, first %d rows", len(md.RowGroups), md.RowGroups[0].NumRows)
			}
			for _, rg := range md.RowGroups {
				for _, cc := range rg.Columns {
					if cc.MetaData.Codec != tc.want {
						t.Errorf("%v: codec %v, want %v", cc.MetaData.PathInSchema, cc.MetaData.Codec, tc.want)
					}
					if cc.MetaData.Statistics.NullCount == 0 || cc.MetaData.Statistics.MinValue == nil || cc.MetaData.Statistics.MaxValue == nil {
						t.Errorf("%v: statistics %+v", cc.MetaData.PathInSchema, cc.MetaData.Statistics)
					}
					if cc.ColumnIndexOffset == 0 || cc.OffsetIndexOffset == 0 {
						t.Errorf("%v: no page index", cc.MetaData.PathInSchema)
					}
				}
			}
			ci := pf.ColumnIndexes()
			if len(ci) != 6 {
				t.Fatalf("%d column indexes", len(ci))
			}
			for i, c := range ci {
				if len(c.MinValues) == 0 || len(c.MinValues) != len(c.MaxValues) || len(c.NullCounts) != len(c.MinValues) {
					t.Errorf("column index %d: %d min, %d max, %d null counts", i, len(c.MinValues), len(c.MaxValues), len(c.NullCounts))
				}
			}
			if string(ci[1].MinValues[0]) != "east" || string(ci[1].MaxValues[0]) != "west" || ci[1].NullCounts[0] == 0 {
				t.Errorf("region column index: min %q max %q nulls %v", ci[1].MinValues[0], ci[1].MaxValues[0], ci[1].NullCounts)
			}
			checkQ6Rows(t, pf, rows)
		})
	}
	if err := WriteParquetWith(context.Background(), io.Discard, tbl.Schema(), tbl.batches, ParquetOptions{Codec: "lz77"}); qerr.Code(err) != qerr.CodeInvalidArgument {
		t.Fatalf("unknown codec: %v", err)
	}
}

// checkQ6Rows reads every row of a q6LikeTable file and compares it to the
// generator's values.
func checkQ6Rows(t *testing.T, pf *parquet.File, rows int) {
	t.Helper()
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 1000)
	i := 0
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			if len(row) != 3 {
				t.Fatalf("row %d: %d values", i, len(row))
			}
			id, reg, price := row[0], row[1], row[2]
			if (i%97 == 5) != id.IsNull() || (!id.IsNull() && id.Int64() != int64(i)*3) {
				t.Fatalf("row %d: id %v", i, id)
			}
			if (i%89 == 7) != reg.IsNull() || (!reg.IsNull() && string(reg.ByteArray()) != q6Regions[(i*7)%len(q6Regions)]) {
				t.Fatalf("row %d: region %v", i, reg)
			}
			switch i % 101 {
			case 9:
				if !price.IsNull() {
					t.Fatalf("row %d: price %v, want null", i, price)
				}
			case 10:
				if price.IsNull() || !math.IsNaN(price.Double()) {
					t.Fatalf("row %d: price %v, want NaN", i, price)
				}
			default:
				if price.IsNull() || price.Double() != float64(i%1000)/4 {
					t.Fatalf("row %d: price %v", i, price)
				}
			}
			i++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if i != rows {
		t.Fatalf("%d rows, want %d", i, rows)
	}
}

func TestParseParquetCodec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ParquetCodec
		ok   bool
	}{
		{"", ParquetSnappy, true},
		{"zstd", ParquetZstd, true},
		{" ZSTD ", ParquetZstd, true},
		{"snappy", ParquetSnappy, true},
		{"Snappy", ParquetSnappy, true},
		{"none", ParquetUncompressed, true},
		{"uncompressed", ParquetUncompressed, true},
		{"gzip", "", false},
		{"lz4", "", false},
	} {
		got, err := ParseParquetCodec(tc.in)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("ParseParquetCodec(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if !tc.ok && (qerr.Code(err) != qerr.CodeInvalidArgument || !errors.Is(err, qerr.ErrInvalidArgument)) {
			t.Errorf("ParseParquetCodec(%q) = %q, %v; want an invalid-argument error", tc.in, got, err)
		}
	}
}

// TestFastSnappyRoundTrip checks that fastSnappy's blocks are standard
// snappy (decoded by the reference-compatible decoder) and that Encode and
// Decode reuse or grow dst as parquet-go expects.
func TestFastSnappyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	repetitive := bytes.Repeat([]byte("northwest,south,east,"), 20_000)
	for _, tc := range []struct {
		name string
		src  []byte
		dst  []byte
	}{
		{"empty", nil, nil},
		{"tiny", []byte("abc"), nil},
		{"random", random, nil},
		{"repetitive", repetitive, nil},
		{"repetitive-reused-dst", repetitive, make([]byte, 10, 1<<20)},
		{"random-small-dst", random, make([]byte, 0, 16)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c fastSnappy
			if c.CompressionCodec() != format.Snappy || c.String() != "SNAPPY" {
				t.Fatalf("codec %v %q", c.CompressionCodec(), c.String())
			}
			enc, err := c.Encode(tc.dst, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := snappy.Decode(nil, enc)
			if err != nil || !bytes.Equal(ref, tc.src) {
				t.Fatalf("snappy.Decode: %v (equal %v)", err, bytes.Equal(ref, tc.src))
			}
			dec, err := c.Decode(make([]byte, 3), enc)
			if err != nil || !bytes.Equal(dec, tc.src) {
				t.Fatalf("Decode: %v (equal %v)", err, bytes.Equal(dec, tc.src))
			}
			if tc.name == "repetitive" && len(enc) > len(tc.src)/10 {
				t.Errorf("repetitive input compressed to %d of %d bytes", len(enc), len(tc.src))
			}
		})
	}
}
