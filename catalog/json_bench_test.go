package catalog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// genSalesJSON is n records of the peer benchmark's sales table as DuckDB
// writes it (COPY ... (FORMAT json)): 9 keys, ids near 3e9, a timestamp
// and four strings, two integers and two decimals.
func genSalesJSON(n int) []byte {
	var b bytes.Buffer
	regions := []string{"northwest", "east", "south", "west"}
	for i := range n {
		fmt.Fprintf(&b, `{"id":%d,"ts":"2023-%02d-%02d %02d:%02d:%02d","region":"%s","product":"Heavy Watch %d","category":"home & kitchen","qty":%d,"price":%d.%02d,"discount":0.%02d,"note":"late excellent thanks"}`+"\n",
			3000000000+i, 1+i%12, 1+i%28, i%24, i%60, (i*7)%60, regions[i%4], i%500, 1+i%9, i%1000, i%100, i%30)
	}
	return b.Bytes()
}

// BenchmarkJSONRecords: tokenizing 20,000 sales records with the
// byte-level reader and with the encoding/json reader it replaced.
func BenchmarkJSONRecords(b *testing.B) {
	data := genSalesJSON(20000)
	lim := Limits{}.WithDefaults()
	for _, name := range []string{"bytes", "encoding_json"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				br := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
				var next func() (bool, error)
				if name == "bytes" {
					r, err := newJSONRecords(br, lim)
					if err != nil {
						b.Fatal(err)
					}
					next = r.next
				} else {
					r, err := newOracleRecords(br, lim)
					if err != nil {
						b.Fatal(err)
					}
					next = r.next
				}
				n := 0
				for {
					more, err := next()
					if err != nil {
						b.Fatal(err)
					}
					if !more {
						break
					}
					n++
				}
				if n != 20000 {
					b.Fatalf("%d records", n)
				}
			}
		})
	}
}

// BenchmarkJSONOpenScan: what a cold query of a JSON file costs the
// reader: the catalog's open (inference over every record) and a scan of
// every column, on 100,000 sales records (18 MB).
func BenchmarkJSONOpenScan(b *testing.B) {
	root := b.TempDir()
	p := filepath.Join(root, "sales.jsonl")
	if err := os.WriteFile(p, genSalesJSON(100000), 0o644); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	fi := FileInfo{AbsPath: p, RelPath: "sales.jsonl", BaseID: "sales", Size: st.Size(), ModTime: st.ModTime(), Root: root}
	b.SetBytes(st.Size())
	for b.Loop() {
		dss, err := NewJSONFormat(Limits{}).Open(context.Background(), fi)
		if err != nil {
			b.Fatal(err)
		}
		rr, err := dss[0].Source.Scan(context.Background(), ScanOptions{Alloc: memory.DefaultAllocator})
		if err != nil {
			b.Fatal(err)
		}
		var rows int64
		for rr.Next() {
			rows += rr.RecordBatch().NumRows()
		}
		if err := rr.Err(); err != nil || rows != 100000 {
			b.Fatalf("%d rows, %v", rows, err)
		}
		rr.Release()
	}
}

// BenchmarkJSONOpenKeep: what a cold query of a JSON file costs the
// reader with a column keeper (as quarry serve opens it): the catalog's
// open, which also builds every column, on the 100,000 sales records of
// BenchmarkJSONOpenScan; the query then reads the kept columns.
func BenchmarkJSONOpenKeep(b *testing.B) {
	fi := writeJSONInput(b, "sales.jsonl", genSalesJSON(100000))
	b.SetBytes(fi.Size)
	for b.Loop() {
		k := &testKeeper{mem: memory.DefaultAllocator}
		dss, err := NewJSONFormatWith(JSONOptions{Keeper: k}).Open(context.Background(), fi)
		if err != nil {
			b.Fatal(err)
		}
		if len(k.kept()) != dss[0].Schema.NumFields() {
			b.Fatalf("kept %v", k.kept())
		}
		k.release()
	}
}
