package csv

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
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/chunk"
)

// Tests of the memory-mapped chunk reader (catalog/internal/chunk) with
// CSV's record boundaries: it must cut
// exactly the chunks the read path cuts, give the same batches, and turn a
// file truncated under it into an error.

// withMapping sets the mapping switches for one test or benchmark.
func withMapping(t testing.TB, enabled bool, minBytes int64, prefault int) {
	t.Helper()
	old := chunk.SetMapping(chunk.Mapping{Enabled: enabled, MinBytes: minBytes, Prefault: prefault})
	t.Cleanup(func() { chunk.SetMapping(old) })
}

func skipWithoutMmap(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("CSV files are mapped on Linux only")
	}
}

// edgeCSV is a CSV with every trait that moves chunk boundaries around:
// quoted fields with embedded "\n" and "\r\n", CRLF and LF terminators,
// doubled quotes, multi-byte UTF-8 everywhere (so boundaries fall inside
// runes of the window), and one record of long bytes.
func edgeCSV(r *rand.Rand, rows, long int, bom, trailingNL bool) string {
	var sb strings.Builder
	if bom {
		sb.WriteString("\ufeff")
	}
	sb.WriteString("id,name,amount,note\r\n")
	words := []string{"Երևան", "naïve", "café", "北京", "😀x", "plain", "a,b", "say \"hi\"", "two\nlines", "cr\r\nlf"}
	for i := range rows {
		note := words[r.IntN(len(words))]
		if i == rows/2 && long > 0 {
			note = strings.Repeat("Երևան ", long/len("Երևան ")+1)
		}
		if strings.ContainsAny(note, ",\"\r\n") || r.IntN(5) == 0 {
			note = `"` + strings.ReplaceAll(note, `"`, `""`) + `"`
		}
		fmt.Fprintf(&sb, "%d,%s,%d.%02d,%s", i, words[r.IntN(len(words))%5], r.IntN(1000), r.IntN(100), note)
		if i < rows-1 || trailingNL {
			sb.WriteString([]string{"\n", "\r\n"}[r.IntN(2)])
		}
	}
	return sb.String()
}

type chunkCopy struct {
	seq   int
	first bool
	data  string
}

// readChunks opens path with openChunks and returns every chunk (copied)
// and whether the reader was mapped.
func readChunks(t *testing.T, path string, size int) ([]chunkCopy, bool, error) {
	t.Helper()
	cr, err := openChunks(fileAt(path), false, size, catalog.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	var out []chunkCopy
	for {
		ch, err := cr.Next()
		if err == io.EOF {
			return out, cr.Mapped(), nil
		}
		if err != nil {
			return out, cr.Mapped(), err
		}
		out = append(out, chunkCopy{ch.Seq, ch.First, string(ch.Data)})
		cr.Release(ch)
	}
}

func TestMappedChunksMatchRead(t *testing.T) {
	skipWithoutMmap(t)
	r := rand.New(rand.NewPCG(11, 12))
	type input struct {
		name string
		text string
	}
	inputs := []input{
		{"bom crlf quotes", edgeCSV(r, 3000, 0, true, true)},
		{"no trailing newline", edgeCSV(r, 3000, 0, false, false)},
		{"bom no trailing newline", edgeCSV(r, 2000, 0, true, false)},
		{"record longer than a chunk", edgeCSV(r, 3000, 50_000, false, true)},
		{"long last record", edgeCSV(r, 1, 40_000, true, false)},
		{"header only", "a,b\n"},
		{"header without newline", "\ufeffa,b"},
		{"bom only", "\ufeff"},
		{"unterminated quote", "a,b\n1,\"" + strings.Repeat("x\n", 5000)},
	}
	sizes := []int{4 << 10, 4<<10 + 7, 5000, 16 << 10, 64 << 10, 1 << 20}
	for _, in := range inputs {
		p := filepath.Join(t.TempDir(), "x.csv")
		if err := os.WriteFile(p, []byte(in.text), 0o644); err != nil {
			t.Fatal(err)
		}
		// A window ending exactly at the end of the file is not a short read.
		cases := append(append([]int(nil), sizes...), len(in.text), len(in.text)-3)
		for _, size := range cases {
			if size <= 0 {
				continue
			}
			for _, pf := range []int{chunk.PrefaultPopulate, chunk.PrefaultWillNeed, chunk.PrefaultNone} {
				t.Run(fmt.Sprintf("%s/%d/%d", in.name, size, pf), func(t *testing.T) {
					withMapping(t, false, 0, pf)
					want, wasMapped, werr := readChunks(t, p, size)
					if wasMapped {
						t.Fatal("read path mapped the file")
					}
					chunk.SetMapping(chunk.Mapping{Enabled: true, Prefault: pf})
					got, mapped, gerr := readChunks(t, p, size)
					if !mapped && len(in.text) > 0 {
						t.Fatal("file not mapped")
					}
					if (werr == nil) != (gerr == nil) {
						t.Fatalf("read error %v, mapped error %v", werr, gerr)
					}
					if len(got) != len(want) {
						t.Fatalf("%d chunks mapped, %d read", len(got), len(want))
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("chunk %d differs: mapped %d bytes (seq %d first %v), read %d bytes (seq %d first %v)",
								i, len(got[i].data), got[i].seq, got[i].first, len(want[i].data), want[i].seq, want[i].first)
						}
					}
					var all strings.Builder
					for _, c := range got {
						all.WriteString(c.data)
					}
					if werr == nil && all.String() != strings.TrimPrefix(in.text, "\ufeff") {
						t.Fatal("chunks do not add up to the file")
					}
				})
			}
		}
	}
}

// TestMappedOnlyWhenWorthIt: gzip, small files and the switch keep the
// read path.
func TestMappedOnlyWhenWorthIt(t *testing.T) {
	skipWithoutMmap(t)
	dir := t.TempDir()
	text := edgeCSV(rand.New(rand.NewPCG(1, 2)), 2000, 0, false, true)
	plain := filepath.Join(dir, "a.csv")
	gz := filepath.Join(dir, "a.csv.gz")
	empty := filepath.Join(dir, "e.csv")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(text))
	zw.Close()
	for p, b := range map[string][]byte{plain: []byte(text), gz: buf.Bytes(), empty: nil} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		path     string
		gz       bool
		enabled  bool
		minBytes int64
		want     bool
	}{
		{"plain", plain, false, true, 0, true},
		{"disabled", plain, false, false, 0, false},
		{"smaller than the minimum", plain, false, true, int64(len(text)) + 1, false},
		{"gzip", gz, true, true, 0, false},
		{"empty", empty, false, true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withMapping(t, tc.enabled, tc.minBytes, chunk.PrefaultPopulate)
			cr, err := openChunks(fileAt(tc.path), tc.gz, 64<<10, catalog.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer cr.Close()
			if got := cr.Mapped(); got != tc.want {
				t.Fatalf("mapped %v, want %v", got, tc.want)
			}
		})
	}
}

// collectBatches reads every batch of rr, retained.
func collectBatches(t *testing.T, rr array.RecordReader) []arrow.RecordBatch {
	t.Helper()
	defer rr.Release()
	var out []arrow.RecordBatch
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		out = append(out, rec)
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMappedLoadMatchesRead loads the same files through both paths, as
// the column cache does (inference keeping every column) and as a scan
// does, and compares every batch and every kept chunk.
func TestMappedLoadMatchesRead(t *testing.T) {
	skipWithoutMmap(t)
	r := rand.New(rand.NewPCG(21, 22))
	texts := map[string]string{
		"edge":       edgeCSV(r, 20_000, 70_000, true, false),
		"typed":      randTypedCSV(r, 20_000),
		"edge crlf":  edgeCSV(r, 5_000, 0, false, true),
		"one record": edgeCSV(r, 1, 0, true, false),
	}
	defer func(k int) { keepChunkBytes = k }(keepChunkBytes)
	keepChunkBytes = 64 << 10 // many chunks, some shorter than the long record
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x.csv")
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			size := int64(chunk.ParallelMin * 2) // several workers
			type loaded struct {
				inf     *csvInference
				batches []arrow.RecordBatch
			}
			load := func(mapped bool, mem memory.Allocator) loaded {
				withMapping(t, mapped, 0, chunk.PrefaultPopulate)
				inf, err := inferFast(context.Background(), fileAt(p), false, ',', size, mem, catalog.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				fields := make([]arrow.Field, len(inf.names))
				for i, n := range inf.names {
					fields[i] = arrow.Field{Name: n, Type: inf.kinds[i].ArrowType(), Nullable: true}
				}
				src := &csvSource{id: "t", file: fileAt(p), delim: inf.delim, schema: arrow.NewSchema(fields, nil),
					kinds: inf.kinds, rows: inf.rows, size: size}
				rr, err := src.Scan(context.Background(), catalog.ScanOptions{BatchSize: 777, Alloc: mem})
				if err != nil {
					t.Fatal(err)
				}
				return loaded{inf, collectBatches(t, rr)}
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			want := load(false, mem)
			got := load(true, mem)
			if fmt.Sprint(got.inf.kinds, got.inf.rows) != fmt.Sprint(want.inf.kinds, want.inf.rows) {
				t.Fatalf("inference mapped %v %d, read %v %d", got.inf.kinds, got.inf.rows, want.inf.kinds, want.inf.rows)
			}
			for c := range want.inf.kept {
				if len(got.inf.kept[c]) != len(want.inf.kept[c]) {
					t.Fatalf("column %d: %d kept chunks mapped, %d read", c, len(got.inf.kept[c]), len(want.inf.kept[c]))
				}
				for i := range want.inf.kept[c] {
					if !sameArray(got.inf.kept[c][i], want.inf.kept[c][i]) {
						t.Fatalf("column %d kept chunk %d differs", c, i)
					}
				}
			}
			if len(got.batches) != len(want.batches) || len(want.batches) == 0 && want.inf.rows > 0 {
				t.Fatalf("%d batches mapped, %d read", len(got.batches), len(want.batches))
			}
			for i := range want.batches {
				if !array.RecordEqual(got.batches[i], want.batches[i]) {
					t.Fatalf("batch %d differs", i)
				}
			}
			for _, l := range []loaded{got, want} {
				for _, b := range l.batches {
					b.Release()
				}
				for _, c := range l.inf.kept {
					for _, a := range c {
						a.Release()
					}
				}
			}
			mem.AssertSize(t, 0)
		})
	}
}

// TestMappedFileChanged: a file truncated, grown or rewritten under the
// mapping is an error wrapping catalog.ErrFileChanged, never a crash, whichever
// goroutine touches the missing pages.
func TestMappedFileChanged(t *testing.T) {
	skipWithoutMmap(t)
	text := edgeCSV(rand.New(rand.NewPCG(31, 32)), 30_000, 0, false, true) // ~1 MB
	tests := []struct {
		name     string
		prefault int
		chunk    int
		// before runs after the file is opened, before the pipeline starts;
		// inWork runs in the worker of chunk 0 before it reads the chunk.
		before, inWork func(p string) error
		fault          bool // the error must come from a memory fault
	}{
		{name: "truncated before the reader scans (no prefault)", prefault: chunk.PrefaultNone, chunk: 64 << 10,
			before: func(p string) error { return os.Truncate(p, 100) }, fault: true},
		{name: "truncated before the reader prefaults", prefault: chunk.PrefaultPopulate, chunk: 64 << 10,
			before: func(p string) error { return os.Truncate(p, 100) }},
		{name: "truncated before the reader prefaults (willneed)", prefault: chunk.PrefaultWillNeed, chunk: 64 << 10,
			before: func(p string) error { return os.Truncate(p, 100) }, fault: true},
		{name: "truncated under a worker", prefault: chunk.PrefaultPopulate, chunk: 4 << 20,
			inWork: func(p string) error { return os.Truncate(p, 0) }, fault: true},
		{name: "grown", prefault: chunk.PrefaultPopulate, chunk: 64 << 10,
			before: func(p string) error { return appendTo(p, "1,x,2.00,more\n") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withMapping(t, true, 0, tc.prefault)
			p := filepath.Join(t.TempDir(), "x.csv")
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			cr, err := openChunks(fileAt(p), false, tc.chunk, catalog.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !cr.Mapped() {
				t.Fatal("not mapped")
			}
			if tc.before != nil {
				if err := tc.before(p); err != nil {
					t.Fatal(err)
				}
			}
			pipe := chunk.Start(cr, 2, func(_ int, ch *chunk.Chunk) (int, error) {
				if ch.Seq == 0 && tc.inWork != nil {
					if err := tc.inWork(p); err != nil {
						return 0, err
					}
				}
				n := 0
				for _, b := range ch.Data {
					n += int(b)
				}
				return n, nil
			}, nil)
			defer pipe.Close()
			for {
				_, ok, err := pipe.Next()
				if err != nil {
					if !errors.Is(err, catalog.ErrFileChanged) {
						t.Fatalf("error %v, want catalog.ErrFileChanged", err)
					}
					var mf *chunk.MapFault
					if tc.fault != errors.As(err, &mf) {
						t.Fatalf("error %v: from a fault %v, want %v", err, !tc.fault, tc.fault)
					}
					return
				}
				if !ok {
					t.Fatal("no error")
				}
			}
		})
	}
}

func appendTo(p, s string) error {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	return errors.Join(err, f.Close())
}

// TestMappedOtherPanics: a panic that is not a fault on the mapping stays
// an ordinary worker error.
func TestMappedOtherPanics(t *testing.T) {
	skipWithoutMmap(t)
	withMapping(t, true, 0, chunk.PrefaultPopulate)
	p := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(p, []byte(edgeCSV(rand.New(rand.NewPCG(1, 1)), 1000, 0, false, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	var nilSlice []byte
	var nilPtr *int
	tests := []struct {
		name  string
		panic func(seq int) int
	}{
		{"index out of range", func(seq int) int { return int(nilSlice[seq]) }},
		{"nil dereference", func(int) int { return *nilPtr }},
		{"plain panic", func(int) int { panic("boom") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cr, err := openChunks(fileAt(p), false, 4<<10, catalog.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			pipe := chunk.Start(cr, 2, func(_ int, ch *chunk.Chunk) (int, error) {
				if ch.Seq == 1 {
					return tc.panic(ch.Seq), nil
				}
				return len(ch.Data), nil
			}, nil)
			defer pipe.Close()
			for {
				_, ok, err := pipe.Next()
				if err != nil {
					if errors.Is(err, catalog.ErrFileChanged) || !strings.Contains(err.Error(), "panic while parsing CSV") {
						t.Fatalf("error %v", err)
					}
					return
				}
				if !ok {
					t.Fatal("no error")
				}
			}
		})
	}
}
