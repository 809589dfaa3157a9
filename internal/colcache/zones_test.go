package colcache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// noSource fails every read: the datasets of these tests are served from
// the cache only.
type noSource struct{}

func (noSource) Scan(context.Context, catalog.ScanOptions) (array.RecordReader, error) {
	return nil, errors.New("read from the file")
}

// zoneColumn is one column of the random dataset: its type and the JSON
// literal generator for filters on it.
type zoneColumn struct {
	name string
	typ  arrow.DataType
	lit  func(r *rand.Rand) string
}

var tsType = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}

var zoneColumns = []zoneColumn{
	{"id", arrow.PrimitiveTypes.Int64, func(r *rand.Rand) string {
		return []string{fmt.Sprint(r.IntN(6000) - 500), fmt.Sprintf("%d.5", r.IntN(6000)), "1e30", "-99999999999999999999"}[r.IntN(4)]
	}},
	{"i8", arrow.PrimitiveTypes.Int8, func(r *rand.Rand) string { return fmt.Sprint(r.IntN(700)-350) + []string{"", ".25"}[r.IntN(2)] }},
	{"u64", arrow.PrimitiveTypes.Uint64, func(r *rand.Rand) string {
		return []string{"-1", "0", "5", "9223372036854775807", "18446744073709551615", "18446744073709551614.5", fmt.Sprint(r.IntN(40))}[r.IntN(7)]
	}},
	{"f32", arrow.PrimitiveTypes.Float32, func(r *rand.Rand) string {
		return []string{`"NaN"`, "0", "-0.0", `"Inf"`, "0.1", fmt.Sprint(r.IntN(40) - 20), fmt.Sprintf("%.2f", r.Float64()*40-20)}[r.IntN(7)]
	}},
	{"f64", arrow.PrimitiveTypes.Float64, func(r *rand.Rand) string {
		return []string{`"NaN"`, "0", `"-Inf"`, fmt.Sprintf("%.3f", r.Float64()*200-100), fmt.Sprint(r.IntN(200) - 100)}[r.IntN(5)]
	}},
	{"day", arrow.FixedWidthTypes.Date32, func(r *rand.Rand) string {
		return fmt.Sprintf(`"2024-%02d-%02d"`, 1+r.IntN(12), 1+r.IntN(28))
	}},
	{"ts", tsType, func(r *rand.Rand) string {
		return fmt.Sprintf(`"2024-01-01T%02d:%02d:00+0%d:00"`, r.IntN(24), r.IntN(60), r.IntN(3))
	}},
	{"s", arrow.BinaryTypes.String, func(r *rand.Rand) string { return zoneWord(r) }},
	{"d", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, func(r *rand.Rand) string { return zoneWord(r) }},
}

func zoneWord(r *rand.Rand) string {
	return `"` + []string{"", "a", "apple", "Apple", "b", "banana", "cherry", "zz", "é", "A"}[r.IntN(10)] + `"`
}

// buildZoneColumn builds column c's arrays for rows rows, cut at random
// chunk boundaries (different per column), with random nulls and some
// all-null and all-NaN chunks. id and ts increase with the row.
func buildZoneColumn(r *rand.Rand, mem memory.Allocator, c zoneColumn, rows int) []arrow.Array {
	var out []arrow.Array
	words := []string{"", "a", "apple", "Apple", "b", "banana", "cherry", "zz", "é", "A", "m", "q"}
	for start := 0; start < rows; {
		n := min(rows-start, 1+r.IntN(700))
		mode := r.IntN(10) // 0: all null, 1: all NaN, 2: some nulls, 3: a narrow chunk
		b := array.NewBuilder(mem, c.typ)
		base := r.IntN(12)
		for i := range n {
			row := start + i
			if mode == 0 || mode == 2 && r.IntN(4) == 0 {
				b.AppendNull()
				continue
			}
			switch b := b.(type) {
			case *array.Int64Builder:
				b.Append(int64(row))
			case *array.Int8Builder:
				b.Append(int8(r.IntN(256) - 128))
			case *array.Uint64Builder:
				v := uint64(r.IntN(30))
				if r.IntN(50) == 0 {
					v = math.MaxUint64 - uint64(r.IntN(3))
				}
				b.Append(v)
			case *array.Float32Builder:
				v := float32(r.IntN(40)-20) / 4
				if mode == 1 || r.IntN(30) == 0 {
					v = float32(math.NaN())
				} else if r.IntN(40) == 0 {
					v = float32(math.Inf(1 - 2*r.IntN(2)))
				} else if r.IntN(40) == 0 {
					v = float32(math.Copysign(0, -1))
				}
				b.Append(v)
			case *array.Float64Builder:
				v := r.Float64()*200 - 100
				if mode == 3 {
					v = float64(base)
				}
				if mode == 1 || r.IntN(30) == 0 {
					v = math.NaN()
				}
				b.Append(v)
			case *array.Date32Builder:
				b.Append(arrow.Date32(19723 + r.IntN(366)))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(1704067200000 - 3*3600_000 + int64(row)*20_000))
			case *array.StringBuilder:
				b.Append(words[(base+r.IntN(3))%len(words)])
			case *array.BinaryDictionaryBuilder:
				if err := b.AppendString(words[(base+r.IntN(4))%len(words)]); err != nil {
					panic(err)
				}
			}
		}
		out = append(out, b.NewArray())
		b.Release()
		start += n
	}
	return out
}

// randomZoneFilter returns a random filter over zoneColumns.
func randomZoneFilter(r *rand.Rand) planner.FilterSpec {
	if r.IntN(8) == 0 {
		var f planner.FilterSpec
		for range 1 + r.IntN(3) {
			m := randomZoneFilter(r)
			if m.Any != nil {
				continue
			}
			f.Any = append(f.Any, planner.FilterCond{Col: m.Col, Op: m.Op, Value: m.Value, CaseInsensitive: m.CaseInsensitive})
		}
		if f.Any != nil {
			return f
		}
	}
	c := zoneColumns[r.IntN(len(zoneColumns))]
	ops := []planner.Op{planner.OpEq, planner.OpLt, planner.OpLte, planner.OpGt, planner.OpGte, planner.OpRange,
		planner.OpIn, planner.OpIsNull, planner.OpIsNotNull, planner.OpNeq, planner.OpNotIn}
	f := planner.FilterSpec{Col: c.name, Op: ops[r.IntN(len(ops))]}
	switch f.Op {
	case planner.OpIsNull, planner.OpIsNotNull:
	case planner.OpRange:
		lo, hi := "null", "null"
		if r.IntN(4) > 0 {
			lo = c.lit(r)
		}
		if r.IntN(4) > 0 {
			hi = c.lit(r)
		}
		f.Value = json.RawMessage(`{"min":` + lo + `,"max":` + hi + `}`)
	case planner.OpIn, planner.OpNotIn:
		var vs []string
		for range r.IntN(4) {
			vs = append(vs, c.lit(r))
		}
		f.Value = json.RawMessage("[" + strings.Join(vs, ",") + "]")
	default:
		f.Value = json.RawMessage(c.lit(r))
	}
	if c.typ.ID() == arrow.STRING || c.typ.ID() == arrow.DICTIONARY {
		f.CaseInsensitive = r.IntN(4) == 0 && f.Op != planner.OpRange && f.Op != planner.OpLt && f.Op != planner.OpGt
	}
	return f
}

// openZoneDataset caches a random dataset of rows rows (columns
// zoneColumns, chunked differently per column) for a file in a new data
// root, on a checked allocator.
func openZoneDataset(t *testing.T, r *rand.Rand, rows int) (*Cache, *catalog.Dataset, *memory.CheckedAllocator) {
	t.Helper()
	// A real file gives the dataset a size, time and identity to be cached
	// under; its text is never read (the columns below are the data).
	path := filepath.Join(t.TempDir(), "z.csv")
	if err := os.WriteFile(path, []byte("placeholder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	c := New(Options{Budget: 1 << 30, Alloc: mem})
	fields := make([]arrow.Field, len(zoneColumns))
	cols := make([][]arrow.Array, len(zoneColumns))
	for i, zc := range zoneColumns {
		fields[i] = arrow.Field{Name: zc.name, Type: zc.typ, Nullable: true}
		cols[i] = buildZoneColumn(r, mem, zc, rows)
	}
	ds := &catalog.Dataset{ID: "z", Kind: catalog.KindCSV, AbsPath: path, Schema: arrow.NewSchema(fields, nil),
		RowCount: int64(rows), RowCountExact: true, SizeBytes: st.Size(), ModTime: st.ModTime(), Source: noSource{}}
	c.Keep(ds, cols)
	if !c.Wrap(ds).(*Source).Cached(nil) {
		t.Fatal("not cached")
	}
	return c, ds, mem
}

// TestZoneFiltersDifferential runs random filters (every op, OR groups,
// case-insensitive string ops, out-of-range, NaN and infinite literals)
// over random cached data with and without zone maps: the results must be
// identical, and zone maps must skip some zones. It runs with one zone per
// chunk (the chunks are shorter than zoneRows) and with zones of 37 rows
// (several per chunk, batches grown over consecutive zones).
func TestZoneFiltersDifferential(t *testing.T) {
	for _, rows := range []int{zoneRows, 37} {
		t.Run(fmt.Sprintf("zoneRows=%d", rows), func(t *testing.T) {
			defer func(old int) { zoneRows = old }(zoneRows)
			zoneRows = rows
			zoneFiltersDifferential(t)
		})
	}
}

func zoneFiltersDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 7))
	// 5,000 rows: 14 chunks a column on average (1-700 rows each, every
	// chunk mode several times over the 8 columns), 135 zones of 37 rows.
	c, ds, mem := openZoneDataset(t, r, 5_000)
	src := c.Wrap(ds).(*Source)
	schema := src.PlanSchema()
	specs := 0
	for range 200 {
		spec := planner.Spec{}
		for range 1 + r.IntN(3) {
			spec.Filters = append(spec.Filters, randomZoneFilter(r))
		}
		if r.IntN(3) == 0 {
			spec.Aggs = []planner.AggSpec{{Col: "*", Fn: planner.AggCount}, {Col: "id", Fn: planner.AggMin}}
		}
		if _, err := planner.Build(spec, planner.Input{Dataset: "s", Schema: schema}); err != nil {
			continue // a literal the column does not take
		}
		specs++
		want, _ := runSpecWith(t, spec, schema, src, planner.OptimizeOptions{})
		got, _ := runSpecWith(t, spec, schema, src, planner.OptimizeOptions{Zones: src})
		if got != want {
			js, _ := json.Marshal(spec.Filters)
			t.Fatalf("filters %s: results differ with zone maps\n got %.300s\nwant %.300s", js, got, want)
		}
	}
	st := c.Stats()
	t.Logf("%d specs; zone maps checked %d batches, skipped %d", specs, st.ZoneChecked, st.ZoneSkipped)
	if specs < 100 || st.ZoneSkipped == 0 || st.ZoneSkipped == st.ZoneChecked {
		t.Fatalf("%d specs ran; zone maps checked %d batches, skipped %d", specs, st.ZoneChecked, st.ZoneSkipped)
	}
	c.Purge()
	mem.AssertSize(t, 0)
}
