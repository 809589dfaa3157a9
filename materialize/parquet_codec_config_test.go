package materialize

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
)

// TestConfigParquetCodec checks that Config.ParquetCodec reaches the
// artifacts' column chunks and that an unknown codec fails the write with
// invalid_argument instead of writing something else.
func TestConfigParquetCodec(t *testing.T) {
	for _, tc := range []struct {
		codec ParquetCodec
		want  format.CompressionCodec
	}{
		{"", format.Snappy},
		{ParquetZstd, format.Zstd},
		{ParquetSnappy, format.Snappy},
		{ParquetUncompressed, format.Uncompressed},
	} {
		for _, spill := range []int64{-1, 100} {
			t.Run(fmt.Sprintf("%s/spill rows %d", tc.codec, spill), func(t *testing.T) {
				mem := newAlloc(t)
				src := idTable(t, mem, 1000, 100)
				defer src.Release()
				f := newFixtureCfg(t, Config{Hard: Caps{MaxRows: 10}, ParquetCodec: tc.codec, SpillRows: spill}, handles.Options{})
				// A spilled result's Parquet file is its spill file: it
				// must use the codec too.
				tbl := collectVia(t, f.m, src)
				defer tbl.Release()
				if tbl.Spilled() != (spill > 0) {
					t.Fatalf("spilled %v", tbl.Spilled())
				}
				res, err := f.m.Deliver(ctx(), tbl, Request{Format: FormatParquet})
				if err != nil {
					t.Fatal(err)
				}
				a, _ := f.store.Get(res.ResourceURI, "")
				fh, err := os.Open(a.Path)
				if err != nil {
					t.Fatal(err)
				}
				defer fh.Close()
				st, _ := fh.Stat()
				pf, err := parquet.OpenFile(fh, st.Size())
				if err != nil {
					t.Fatal(err)
				}
				if pf.NumRows() != 1000 {
					t.Errorf("rows %d, want 1000", pf.NumRows())
				}
				for _, rg := range pf.Metadata().RowGroups {
					for _, cc := range rg.Columns {
						if cc.MetaData.Codec != tc.want {
							t.Fatalf("column %v codec %v, want %v", cc.MetaData.PathInSchema, cc.MetaData.Codec, tc.want)
						}
					}
				}
			})
		}
	}
	t.Run("unknown", func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		tbl := idTable(t, mem, 1000, 100)
		defer tbl.Release()
		f := newFixtureCfg(t, Config{Hard: Caps{MaxRows: 10}, ParquetCodec: "lzo"}, handles.Options{})
		_, err := f.m.Deliver(ctx(), tbl, Request{Format: FormatParquet})
		if !errors.Is(err, qerr.ErrInvalidArgument) {
			t.Fatalf("err %v, want invalid argument", err)
		}
	})
}
