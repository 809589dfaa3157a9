package catalog

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/internal/chunk"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/leaktest"
)

// Tests of newline-delimited JSON read in chunks on several workers
// (json_chunks.go): every open and scan must give what the one-pass reader
// gives (schema, notes, rows, values, and the same error text), whatever
// the chunk size, wherever the chunk boundaries fall.

// writeJSONInput writes data as root/name and returns its FileInfo.
func writeJSONInput(t testing.TB, name string, data []byte) FileInfo {
	t.Helper()
	root := t.TempDir()
	p := filepath.Join(root, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return statJSONInput(t, root, name)
}

func statJSONInput(t testing.TB, root, name string) FileInfo {
	t.Helper()
	p := filepath.Join(root, name)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return FileInfo{AbsPath: p, RelPath: name, BaseID: "f", Size: st.Size(), ModTime: st.ModTime(), Root: root}
}

// scanJSONColumns scans every column of ds in batches of batch rows and
// returns each column concatenated (nil when there are no rows).
func scanJSONColumns(t *testing.T, ds *Dataset, batch int, mem memory.Allocator) ([]arrow.Array, error) {
	t.Helper()
	rr, err := ds.Source.Scan(context.Background(), ScanOptions{Alloc: mem, BatchSize: batch})
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	parts := make([][]arrow.Array, ds.Schema.NumFields())
	defer func() {
		for _, p := range parts {
			releaseAll(p)
		}
	}()
	for rr.Next() {
		rec := rr.RecordBatch()
		if !rec.Schema().Equal(ds.Schema) {
			t.Fatalf("batch schema %v, want %v", rec.Schema(), ds.Schema)
		}
		if rec.NumRows() > int64(batch) {
			t.Fatalf("batch of %d rows, more than %d", rec.NumRows(), batch)
		}
		for j, c := range rec.Columns() {
			c.Retain()
			parts[j] = append(parts[j], c)
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	out := make([]arrow.Array, len(parts))
	for j, p := range parts {
		if len(p) == 0 {
			continue
		}
		a, err := array.Concatenate(p, mem)
		if err != nil {
			t.Fatal(err)
		}
		out[j] = a
	}
	return out, nil
}

// testKeeper is a ColumnKeeper that holds the columns it is given.
type testKeeper struct {
	mem     memory.Allocator
	decline bool
	ds      *Dataset
	cols    [][]arrow.Array
}

func (k *testKeeper) Reserve(FileInfo, int64) (memory.Allocator, bool) { return k.mem, !k.decline }

func (k *testKeeper) Keep(ds *Dataset, cols [][]arrow.Array) {
	if k.ds != nil {
		panic("Keep called twice")
	}
	k.ds, k.cols = ds, cols
}

func (k *testKeeper) release() {
	for _, c := range k.cols {
		releaseAll(c)
	}
	k.cols = nil
}

// kept are the names of the columns kept.
func (k *testKeeper) kept() []string {
	var names []string
	for j, c := range k.cols {
		if c != nil {
			names = append(names, k.ds.Schema.Field(j).Name)
		}
	}
	return names
}

// checkKept compares the columns k kept of ds with a full scan's (want:
// the columns concatenated, nil when there are no rows).
func (k *testKeeper) checkKept(t *testing.T, ds *Dataset, want []arrow.Array, mem memory.Allocator) {
	t.Helper()
	if k.ds == nil {
		return
	}
	if k.ds != ds || len(k.cols) != ds.Schema.NumFields() {
		t.Fatalf("kept %d columns of %v, want the %d of the dataset opened", len(k.cols), k.ds, ds.Schema.NumFields())
	}
	for j, col := range k.cols {
		if col == nil {
			continue
		}
		f := ds.Schema.Field(j)
		var rows int64
		for _, a := range col {
			if !arrow.TypeEqual(a.DataType(), f.Type) {
				t.Fatalf("column %s kept as %v, want %v", f.Name, a.DataType(), f.Type)
			}
			rows += int64(a.Len())
		}
		if rows != ds.RowCount {
			t.Fatalf("column %s: %d rows kept, want %d", f.Name, rows, ds.RowCount)
		}
		if len(col) == 0 {
			continue
		}
		got, err := array.Concatenate(col, mem)
		if err != nil {
			t.Fatal(err)
		}
		same := array.Equal(got, want[j])
		got.Release()
		if !same {
			t.Fatalf("column %s kept differs from the scan:\nkept %v\nscan %v", f.Name, col, want[j])
		}
	}
}

// checkJSONChunked opens fi in chunks with jf (keeping the columns) and
// in one pass and compares the datasets, full scans (batch rows a batch)
// and the columns kept; it returns whether the chunked dataset scans in
// chunks (false when it did not open).
func checkJSONChunked(t *testing.T, jf jsonFormat, fi FileInfo, batch int) bool {
	t.Helper()
	chunked, _ := checkJSONChunkedKept(t, jf, fi, batch)
	return chunked
}

// checkJSONChunkedKept is checkJSONChunked, also returning the names of
// the columns kept.
func checkJSONChunkedKept(t *testing.T, jf jsonFormat, fi FileInfo, batch int) (bool, []string) {
	t.Helper()
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	keeper := &testKeeper{mem: mem}
	defer keeper.release()
	want, werr := jf.open(ctx, fi, false)
	jf.keeper = keeper
	got, gerr := jf.open(ctx, fi, true)
	if werr != nil || gerr != nil {
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() ||
			errors.Is(gerr, qerr.ErrLimitExceeded) != errors.Is(werr, qerr.ErrLimitExceeded) {
			t.Fatalf("open: chunks %v, one pass %v", gerr, werr)
		}
		if keeper.ds != nil {
			t.Fatal("columns kept of a file that did not open")
		}
		return false, nil
	}
	w, g := want[0], got[0]
	if !g.Schema.Equal(w.Schema) || g.RowCount != w.RowCount || !reflect.DeepEqual(g.ColumnNotes, w.ColumnNotes) ||
		!reflect.DeepEqual(g.Attributes, w.Attributes) {
		t.Fatalf("chunks: %v %d rows %v %v\none pass: %v %d rows %v %v", g.Schema, g.RowCount, g.ColumnNotes, g.Attributes,
			w.Schema, w.RowCount, w.ColumnNotes, w.Attributes)
	}
	if w.Source.(*jsonSource).chunked {
		t.Fatal("the one-pass open made a chunked source")
	}
	wc, werr := scanJSONColumns(t, w, batch, mem)
	gc, gerr := scanJSONColumns(t, g, batch, mem)
	defer releaseAll(nonNil(wc))
	defer releaseAll(nonNil(gc))
	if werr != nil || gerr != nil {
		t.Fatalf("scan: chunks %v, one pass %v", gerr, werr)
	}
	for j := range wc {
		if (wc[j] == nil) != (gc[j] == nil) || wc[j] != nil && !array.Equal(wc[j], gc[j]) {
			t.Fatalf("column %s differs:\nchunks   %v\none pass %v", w.Schema.Field(j).Name, gc[j], wc[j])
		}
	}
	keeper.checkKept(t, g, wc, mem)
	return g.Source.(*jsonSource).chunked, keeper.kept()
}

func nonNil(as []arrow.Array) []arrow.Array {
	var out []arrow.Array
	for _, a := range as {
		if a != nil {
			out = append(out, a)
		}
	}
	return out
}

// ndjsonLines joins records with the given line ends (cycled).
func ndjsonLines(recs []string, ends ...string) []byte {
	var b bytes.Buffer
	for i, r := range recs {
		b.WriteString(r)
		b.WriteString(ends[i%len(ends)])
	}
	return b.Bytes()
}

// kindChangeRecords: every column changes kind (or gains a note) far
// from the start, so chunk traces are merged: ints that become floats,
// dates that meet a non-date, numbers that meet a leading zero, a key
// first seen in the last records, multi-byte UTF-8 everywhere.
func kindChangeRecords(n int) []string {
	words := []string{"Երևան", "naïve", "café", "北京", "😀x", "plain", `q\"uote`, `esc\u00e9\n`}
	recs := make([]string, n)
	for i := range n {
		num := strconv.Itoa(i)
		if i == n*3/4 {
			num = "1.5"
		}
		code := strconv.Itoa(1000 + i)
		if i == n-5 {
			code = "12345678901234567890"
		}
		day := fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28)
		if i == n/2 {
			day = "not a date"
		}
		rec := fmt.Sprintf(`{"n":%s,"code":%s,"day":"%s","w":"%s","nested":{"a":%d,"b":[%d,"%s"]}`, num, code, day, words[i%len(words)], i%7, i, words[(i+3)%len(words)])
		if i > n-3 {
			rec += `,"late":true`
		}
		recs[i] = rec + "}"
	}
	return recs
}

func TestJSONChunkedMatchesOnePass(t *testing.T) {
	sales := genSalesJSON(20000)
	kinds := ndjsonLines(kindChangeRecords(6000), "\n", "\r\n", "\n\n", " \t\r\n")
	long := ndjsonLines(append(append(kindChangeRecords(300)[:150:150],
		`{"n":1,"code":1,"day":"2024-01-01","w":"`+strings.Repeat("Երևան ", 30_000)+`"}`), kindChangeRecords(300)[150:]...), "\n")
	small := []byte(`{"a":1,"b":"x"}` + "\n" + `{"a":2,"b":"y"}`)
	exact := ndjsonLines(kindChangeRecords(400), "\n")
	firstLines := bytes.Index(exact, []byte(`"n":50,`)) - 1 // the first 50 records, up to and with their newline
	if exact[firstLines-1] != '\n' {
		t.Fatal("bad test input")
	}
	var multi bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&multi, "{\n  \"i\": %d,\n  \"s\": \"row %d\"\n}\n", i, i)
	}
	oneMulti := ndjsonLines(append(kindChangeRecords(3000), "{\"x\":\n1}"), "\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(kinds)
	zw.Close()
	type input struct {
		name    string
		file    string
		data    []byte
		chunked bool // whether the scan may run in chunks
	}
	inputs := []input{
		{"sales", "f.jsonl", sales, true},
		{"kind changes, CRLF and blank lines", "f.jsonl", kinds, true},
		{"no final newline", "f.ndjson", bytes.TrimRight(kinds, " \t\r\n"), true},
		{"a line longer than a chunk", "f.jsonl", long, true},
		{"smaller than a chunk", "f.jsonl", small, true},
		{"record exactly at a chunk end", "f.jsonl", exact, true},
		{"BOM", "f.json", append([]byte("\ufeff"), kinds...), true},
		{"gzip", "f.jsonl.gz", gz.Bytes(), true},
		{"records over several lines", "f.jsonl", multi.Bytes(), false},
		{"one record over two lines", "f.jsonl", oneMulti, false},
		{"array of objects", "f.json", []byte("[" + strings.Join(kindChangeRecords(3000), ",\n") + "]"), false},
	}
	configs := []struct {
		name           string
		chunk, workers int
		batch          int
	}{
		{"default", 0, 0, 0},
		{"4KiB+7 chunks, 2 workers", 4<<10 + 7, 2, 1000},
		{"5000-byte chunks, 3 workers", 5000, 3, 777},
		{"64KiB chunks, 2 workers", 64 << 10, 2, DefaultBatchSize},
		{"exact chunk, 2 workers", firstLines, 2, 50},
	}
	for _, in := range inputs {
		for _, c := range configs {
			t.Run(in.name+"/"+c.name, func(t *testing.T) {
				jf := jsonFormat{lim: Limits{}.WithDefaults(), chunkBytes: c.chunk, workers: c.workers}
				batch := cmpOr(c.batch, DefaultBatchSize)
				got := checkJSONChunked(t, jf, writeJSONInput(t, in.file, in.data), batch)
				if got != in.chunked {
					t.Fatalf("scanned in chunks %v, want %v", got, in.chunked)
				}
			})
		}
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TestJSONChunkedErrors: a file the chunks do not take is opened in one
// pass, so the error is the one-pass error, whichever chunk holds it.
func TestJSONChunkedErrors(t *testing.T) {
	recs := kindChangeRecords(4000)
	with := func(i int, rec string) []byte {
		r := append([]string(nil), recs...)
		r[i] = rec
		return ndjsonLines(r, "\n")
	}
	tests := []struct {
		name string
		lim  Limits
		data []byte
	}{
		{"syntax error late", Limits{}, with(3900, `{"n":1,,}`)},
		{"syntax error in the first record", Limits{}, with(0, `{"n":1 "x"}`)},
		{"not an object", Limits{}, with(2500, `[1,2]`)},
		{"cut record at the end", Limits{}, append(ndjsonLines(recs, "\n"), `{"n":`...)},
		{"record past the limit", Limits{MaxRecordBytes: 4000}, with(3000, `{"n":1,"w":"`+strings.Repeat("x", 5000)+`"}`)},
		{"too many keys", Limits{MaxColumns: 7}, with(3500, `{"k1":1,"k2":2,"k3":3}`)},
		{"key past the limit", Limits{MaxNameBytes: 10}, with(3500, `{"`+strings.Repeat("k", 20)+`":1}`)},
		{"a line past the record limit holding short records", Limits{MaxRecordBytes: 4000},
			[]byte(strings.Repeat(`{"a":1} `, 2000) + "\n" + `{"a":2}` + "\n")},
	}
	for _, tc := range tests {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, workers), func(t *testing.T) {
				jf := jsonFormat{lim: tc.lim.WithDefaults(), chunkBytes: 8 << 10, workers: workers}
				checkJSONChunked(t, jf, writeJSONInput(t, "f.jsonl", tc.data), 1000)
			})
		}
	}
}

// TestJSONChunkedScanError: a file changed after it was opened fails the
// chunked scan with the error, and the record number, of a one-pass scan,
// after the rows before it.
func TestJSONChunkedScanError(t *testing.T) {
	recs := kindChangeRecords(5000)
	data := ndjsonLines(recs, "\n")
	for _, bad := range []int{0, 1, 2345, 4999} {
		t.Run(strconv.Itoa(bad), func(t *testing.T) {
			fi := writeJSONInput(t, "f.jsonl", data)
			jf := jsonFormat{lim: Limits{}.WithDefaults(), chunkBytes: 8 << 10, workers: 2}
			dss, err := jf.open(context.Background(), fi, true)
			if err != nil {
				t.Fatal(err)
			}
			src := dss[0].Source.(*jsonSource)
			if !src.chunked {
				t.Fatal("not chunked")
			}
			// Same size and inode: the scan reads the new bytes.
			changed := bytes.Clone(data)
			at := bytes.Index(changed, []byte(recs[bad]))
			changed[at+1] = '!'
			if err := os.WriteFile(fi.AbsPath, changed, 0o644); err != nil {
				t.Fatal(err)
			}
			onePass := *src
			onePass.chunked = false
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var msgs []string
			var rows []int64
			for _, s := range []*jsonSource{src, &onePass} {
				rr, err := s.Scan(context.Background(), ScanOptions{Alloc: mem, BatchSize: 100})
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for rr.Next() {
					n += rr.RecordBatch().NumRows()
				}
				if rr.Err() == nil {
					t.Fatal("no error")
				}
				msgs = append(msgs, rr.Err().Error())
				rows = append(rows, n)
				rr.Release()
			}
			if msgs[0] != msgs[1] || !strings.Contains(msgs[0], fmt.Sprintf("record %d ", bad+1)) {
				t.Fatalf("chunked error %q, one pass %q (record %d)", msgs[0], msgs[1], bad+1)
			}
			if rows[0] > int64(bad) || rows[1] > int64(bad) {
				t.Fatalf("rows before the error: chunked %d, one pass %d, bad record %d", rows[0], rows[1], bad+1)
			}
		})
	}
}

// TestJSONChunkedCancel: a cancelled open fails with the context's error;
// cancelling a chunked scan in the middle stops it with the context's
// error, frees every buffer; neither leaves a goroutine.
func TestJSONChunkedCancel(t *testing.T) {
	fi := writeJSONInput(t, "f.jsonl", genSalesJSON(30000))
	jf := jsonFormat{lim: Limits{}.WithDefaults(), chunkBytes: 64 << 10, workers: 2}
	dss, err := jf.open(context.Background(), fi, true)
	if err != nil {
		t.Fatal(err)
	}
	if !dss[0].Source.(*jsonSource).chunked {
		t.Fatal("not chunked")
	}
	before := runtime.NumGoroutine()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := jf.open(cancelled, fi, true); !errors.Is(err, context.Canceled) {
		t.Fatalf("open under a cancelled context: %v", err)
	}
	for _, after := range []int{0, 1, 5} {
		t.Run(strconv.Itoa(after), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rr, err := dss[0].Source.Scan(ctx, ScanOptions{Alloc: mem, BatchSize: 500})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rr.Next() {
				if n++; n == after {
					cancel()
				}
			}
			if after > 0 && !errors.Is(rr.Err(), context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", rr.Err())
			}
			if after == 0 && rr.Err() != nil { // read to the end
				t.Fatal(rr.Err())
			}
			rr.Release()
			mem.AssertSize(t, 0)
		})
	}
	leaktest.Goroutines(t, before)
}

// TestJSONChunkBoundaries: the chunks of an NDJSON file end just after a
// newline (the last one at the end of the file), add up to the file, and
// are the same read and memory-mapped, including around multi-byte UTF-8,
// CRLF, a final line without newline and a line longer than a chunk.
func TestJSONChunkBoundaries(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, `{"i":%d,"s":"%s"}`, i, strings.Repeat("Երևան😀", rng.IntN(20)))
		if i == 1500 {
			fmt.Fprintf(&b, `{"long":"%s"}`, strings.Repeat("é", 40_000))
		}
		if i < 2999 {
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[rng.IntN(3)])
		}
	}
	text := b.String()
	fi := writeJSONInput(t, "f.jsonl", []byte(text))
	read := func(size int, mapped bool) []string {
		old := chunk.SetMapping(chunk.Mapping{Enabled: mapped, Prefault: chunk.PrefaultPopulate})
		defer chunk.SetMapping(old)
		cr, err := openJSONChunks(fi, false, size, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		defer cr.Close()
		if cr.Mapped() != mapped {
			t.Fatalf("mapped %v, want %v", cr.Mapped(), mapped)
		}
		var out []string
		var off int64
		for {
			ch, err := cr.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.Start != off {
				t.Fatalf("chunk %d starts at %d, want %d", ch.Seq, ch.Start, off)
			}
			off += int64(len(ch.Data))
			out = append(out, string(ch.Data))
			cr.Release(ch)
		}
	}
	for _, size := range []int{4 << 10, 4<<10 + 7, 5000, 64 << 10, len(text) - 3, len(text)} {
		got := read(size, false)
		for i, c := range got[:len(got)-1] {
			if !strings.HasSuffix(c, "\n") {
				t.Fatalf("size %d: chunk %d does not end with a newline", size, i)
			}
		}
		if strings.Join(got, "") != text {
			t.Fatalf("size %d: the chunks do not add up to the file", size)
		}
		if runtime.GOOS == "linux" {
			if mapped := read(size, true); !reflect.DeepEqual(mapped, got) {
				t.Fatalf("size %d: %d chunks mapped, %d read, or their bytes differ", size, len(mapped), len(got))
			}
		}
	}
}

// FuzzJSONChunked: any input opens and scans the same in chunks (tiny
// ones, two workers) and in one pass, errors included.
func FuzzJSONChunked(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 8 {
		f.Add(genJSONFile(rng, 1+rng.IntN(60)), uint16(rng.IntN(600)))
	}
	f.Add([]byte(strings.Join(kindChangeRecords(40), "\n")), uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		jf := jsonFormat{lim: Limits{MaxRecordBytes: 1 << 12, MaxColumns: 50}.WithDefaults(), chunkBytes: 1 + int(size), workers: 2}
		checkJSONChunked(t, jf, writeJSONInput(t, "f.jsonl", data), 3)
	})
}
