package catalog_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/internal/qerr"
)

// gzipRepeat writes path as a gzip stream of head followed by body
// repeated times (gzip members concatenated: the body is compressed once,
// so a file inflating to gigabytes is written in well under a second).
// Keep body small (a MiB) and times large: compressing it is the cost,
// several seconds for 64 MiB in the race-instrumented test, and the
// stream inflates to the same bytes either way.
func gzipRepeat(t testing.TB, path string, head []byte, body []byte, times int) {
	t.Helper()
	var hb, bb bytes.Buffer
	for _, x := range []struct {
		buf *bytes.Buffer
		b   []byte
	}{{&hb, head}, {&bb, body}} {
		zw, _ := gzip.NewWriterLevel(x.buf, gzip.BestCompression)
		if _, err := zw.Write(x.b); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(hb.Bytes()); err != nil {
		t.Fatal(err)
	}
	for range times {
		if _, err := f.Write(bb.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// memDelta runs f and returns the bytes it allocated on the heap (all
// goroutines) and the peak live heap seen by a sampler.
func memDelta(f func()) (total, peak uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, peak
}

// diagFor returns the catalog diagnostic of rel, failing when there is none.
func diagFor(t testing.TB, c *catalog.Catalog, rel string) catalog.Diagnostic {
	t.Helper()
	for _, d := range c.Diagnostics() {
		if d.Path == rel {
			return d
		}
	}
	t.Fatalf("no diagnostic for %s; diagnostics: %v; datasets: %v", rel, c.Diagnostics(), cattest.IDs(c))
	return catalog.Diagnostic{}
}

// TestHostileFiles: files beyond the CSV limits become diagnostics within
// bounded memory and time, and the catalog keeps the good files.
func TestHostileFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes files of hundreds of megabytes")
	}
	const mib = 1 << 20
	tests := []struct {
		name   string
		rel    string
		write  func(t *testing.T, p string)
		lim    catalog.Limits
		reason string        // substring of the diagnostic
		budget uint64        // bytes the open may allocate
		limit  bool          // the error is resource_exhausted
		within time.Duration // wall time bound
	}{
		{
			// 2 GiB of rows in a 2 MB file: the ratio limit stops it
			// after 32 MiB of output.
			name: "gzip bomb of rows", rel: "bomb.csv.gz",
			write: func(t *testing.T, p string) {
				gzipRepeat(t, p, []byte("a,b\n"), bytes.Repeat([]byte("0,0\n"), mib/4), 2048)
			},
			reason: "decompresses more than 250 times", budget: 512 * mib, limit: true, within: 20 * time.Second,
		},
		{
			// 4 GiB on one line: the record limit stops it at 16 MiB.
			name: "gzip one 4 GiB line", rel: "line.csv.gz",
			write: func(t *testing.T, p string) {
				gzipRepeat(t, p, []byte("a"), bytes.Repeat([]byte("x"), mib), 4096)
			},
			reason: "longer than 16 MiB", budget: 512 * mib, limit: true, within: 20 * time.Second,
		},
		{
			name: "decompressed size", rel: "big.csv.gz",
			write: func(t *testing.T, p string) {
				gzipRepeat(t, p, []byte("a,b\n"), bytes.Repeat([]byte("1,2\n"), mib/4), 16)
			},
			lim:    catalog.Limits{MaxDecompressedBytes: 8 * mib},
			reason: "decompresses to more than 8 MiB", budget: 256 * mib, limit: true, within: 20 * time.Second,
		},
		{
			// A 200 MB file that is one line (the header): mapped, then
			// read by the reference reader; refused at 16 MiB.
			name: "200 MB one-line CSV", rel: "oneline.csv",
			write: func(t *testing.T, p string) {
				writeBig(t, p, nil, []byte("y"), 200*mib, nil)
			},
			reason: "longer than 16 MiB", budget: 256 * mib, limit: true, within: 20 * time.Second,
		},
		{
			// A good header, then one 40 MiB record: the parallel reader
			// (memory-mapped) refuses it.
			name: "40 MiB record after the header", rel: "longrec.csv",
			write: func(t *testing.T, p string) {
				writeBig(t, p, []byte("a,b\n1,2\n"), []byte("z"), 40*mib, []byte(",3\n4,5\n"))
			},
			reason: "longer than 16 MiB", budget: 256 * mib, limit: true, within: 20 * time.Second,
		},
		{
			name: "lowered record limit", rel: "rec.csv",
			write: func(t *testing.T, p string) {
				writeBig(t, p, []byte("a,b\n1,2\n"), []byte("w"), 2*mib, []byte(",3\n"))
			},
			lim:    catalog.Limits{MaxRecordBytes: mib / 2},
			reason: "longer than 512 KiB", budget: 128 * mib, limit: true, within: 10 * time.Second,
		},
		{
			name: "100,000 columns", rel: "wide.csv",
			write: func(t *testing.T, p string) {
				writeWide(t, p, 100_000, 3)
			},
			reason: "100000 columns, more than the limit of 16384", budget: 256 * mib, limit: true, within: 10 * time.Second,
		},
		{
			name: "NUL bytes", rel: "nul.csv",
			write: func(t *testing.T, p string) {
				if err := os.WriteFile(p, []byte("a,b\n1,\x00\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			reason: "NUL", budget: 64 * mib, within: 5 * time.Second,
		},
		{
			name: "invalid UTF-8", rel: "latin1.csv",
			write: func(t *testing.T, p string) {
				if err := os.WriteFile(p, []byte("a,b\n1,caf\xe9\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			reason: "UTF-8", budget: 64 * mib, within: 5 * time.Second,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteFile(t, root, "good.csv", "x\n1\n")
			p := filepath.Join(root, tc.rel)
			tc.write(t, p)
			f := csv.NewFormatWith(csv.Options{Limits: tc.lim})
			start := time.Now()
			var c *catalog.Catalog
			total, peak := memDelta(func() { c = cattest.NewCatalog(t, root, f) })
			took := time.Since(start)
			t.Logf("allocated %d MiB, peak heap %d MiB, %v", total>>20, peak>>20, took)
			if got := cattest.IDs(c); len(got) != 1 || got[0] != "good" {
				t.Fatalf("datasets = %v, want [good]", got)
			}
			d := diagFor(t, c, tc.rel)
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("diagnostic %q does not mention %q", d.Reason, tc.reason)
			}
			if total > tc.budget {
				t.Errorf("opening allocated %d MiB, budget %d MiB", total>>20, tc.budget>>20)
			}
			if took > tc.within {
				t.Errorf("opening took %v, want < %v", took, tc.within)
			}
			_, err := f.Open(context.Background(), catalog.FileInfo{AbsPath: p, RelPath: tc.rel, BaseID: "x"})
			if tc.limit != errors.Is(err, qerr.ErrLimitExceeded) {
				t.Errorf("Open error %v: limit = %v, want %v", err, !tc.limit, tc.limit)
			}
			if tc.limit && qerr.Code(err) != qerr.CodeResourceExhausted {
				t.Errorf("Open error code %q, want %q", qerr.Code(err), qerr.CodeResourceExhausted)
			}
		})
	}
}

// writeBig writes head, then fill repeated up to n bytes, then tail,
// without holding n bytes in memory.
func writeBig(t testing.TB, p string, head, fill []byte, n int, tail []byte) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat(fill, (1<<20)/len(fill))
	for w := 0; w < n; w += len(block) {
		if _, err := f.Write(block[:min(len(block), n-w)]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Write(tail); err != nil {
		t.Fatal(err)
	}
}

// writeWide writes a CSV of ncols int columns and rows rows.
func writeWide(t testing.TB, p string, ncols, rows int) {
	t.Helper()
	var b bytes.Buffer
	for c := range ncols {
		if c > 0 {
			b.WriteByte(',')
		}
		b.WriteString("c" + strconv.Itoa(c))
	}
	b.WriteByte('\n')
	for r := range rows {
		for c := range ncols {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(r + c%7))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWideFileScanMemory: a 100,000-column file allowed by raised limits
// is opened and scanned by two concurrent readers (as two get_schema
// calls do) in bounded memory: the tokenizer's span layout is sized by
// the rows a chunk can hold, not by its bytes.
func TestWideFileScanMemory(t *testing.T) {
	root := t.TempDir()
	writeWide(t, filepath.Join(root, "wide.csv"), 100_000, 3)
	f := csv.NewFormatWith(csv.Options{Limits: catalog.Limits{MaxColumns: 200_000}})
	c := cattest.NewCatalog(t, root, f)
	ds := cattest.Lookup(t, c, "wide")
	if n := ds.Schema.NumFields(); n != 100_000 || ds.RowCount != 3 {
		t.Fatalf("shape %d x %d, want 3 x 100000", ds.RowCount, n)
	}
	total, peak := memDelta(func() {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: 5, Alloc: mem})
				if err != nil {
					t.Error(err)
					return
				}
				defer rr.Release()
				rows := int64(0)
				for rr.Next() {
					rows += rr.RecordBatch().NumRows()
				}
				if rr.Err() != nil || rows != 3 {
					t.Errorf("scanned %d rows (%v), want 3", rows, rr.Err())
				}
			})
		}
		wg.Wait()
	})
	t.Logf("two concurrent scans allocated %d MiB, peak heap %d MiB", total>>20, peak>>20)
	if total > 512<<20 { // ~1.5 KiB of Arrow arrays per column per scan; the old span layout took 6.7 GB
		t.Errorf("two scans of a 3-row file allocated %d MiB", total>>20)
	}
}

// TestLongColumnNames: names longer than MaxNameBytes are cut (at a UTF-8
// boundary), kept unique, and counted in the dataset's attributes.
func TestLongColumnNames(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("é", 600) // 1200 bytes
	cattest.WriteFile(t, root, "names.csv", long+"x,"+long+"y,b\n1,2,3\n")
	c := cattest.NewCatalog(t, root, csv.NewFormat())
	ds := cattest.Lookup(t, c, "names")
	names := cattest.FieldNames(ds.Schema)
	want := []string{strings.Repeat("é", 512), strings.Repeat("é", 512) + "_2", "b"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("names = %.40q, want %.40q", names, want)
	}
	if got := ds.Attributes["truncated_column_names"]; got != 2 {
		t.Errorf("truncated_column_names = %v, want 2", got)
	}
	if _, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{}); len(cols) != 3 || len(cols[0]) != 1 {
		t.Errorf("columns = %v", cols)
	}
}

// gateFormat is a fake format whose Open of a file named slow.* waits
// until gate is closed (or its context ends).
type gateFormat struct {
	fakeFormat
	gate chan struct{}
}

func (f gateFormat) Open(ctx context.Context, fi catalog.FileInfo) ([]*catalog.Dataset, error) {
	if strings.HasPrefix(filepath.Base(fi.RelPath), "slow.") {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return f.fakeFormat.Open(ctx, fi)
}

// TestBackgroundScan: with Options.Background, New returns while a file
// is still being opened; the files opened so far are listed, the scan is
// reported, lookups of ids not known yet wait for it (bounded by their
// context), and the final snapshot holds every file.
func TestBackgroundScan(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "fast.fk", "x")
	cattest.WriteFile(t, root, "slow.fk", "x")
	gate := make(chan struct{})
	f := gateFormat{fakeFormat: fakeFormat{ext: ".fk"}, gate: gate}
	c, err := catalog.New(context.Background(), catalog.Options{Root: root, Formats: []catalog.Format{f}, Workers: 2, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// The fast file is published while the slow one is still open.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.LookupContext(ctx, "fast"); err != nil {
		t.Fatalf("LookupContext(fast) during the scan: %v", err)
	}
	st := c.ScanStatus()
	if !st.Scanning || st.PendingFiles != 1 {
		t.Errorf("ScanStatus = %+v, want scanning with 1 pending file", st)
	}
	if got := cattest.IDs(c); len(got) != 1 || got[0] != "fast" {
		t.Errorf("datasets during the scan = %v, want [fast]", got)
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Errorf("Refresh during the scan: %v", err)
	}
	// A bounded lookup of a file still being opened says so: a request
	// whose deadline passes gets timeout, a cancelled one dataset_not_found,
	// both marked as scanning.
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = c.LookupContext(short, "slow")
	cancelShort()
	cattest.AssertCode(t, err, qerr.ErrLimitExceeded, qerr.CodeTimeout)
	if qe := qerr.As(err); qe == nil || qe.Diagnostics["scanning"] != true {
		t.Errorf("lookup during the scan: %v, want a scanning mark", err)
	}
	gone, cancelGone := context.WithCancel(context.Background())
	cancelGone()
	_, err = c.LookupContext(gone, "slow")
	cattest.AssertCode(t, err, qerr.ErrNotFound, qerr.CodeDatasetNotFound)
	if qe := qerr.As(err); qe == nil || qe.Diagnostics["scanning"] != true {
		t.Errorf("cancelled lookup during the scan: %v, want a scanning mark", err)
	}
	if _, err := c.Lookup("slow"); err == nil {
		t.Error("Lookup (no wait) found a file still being opened")
	}

	// A waiting lookup gets the slow file once it is open.
	got := make(chan error, 1)
	go func() {
		_, err := c.LookupContext(ctx, "slow")
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	close(gate)
	if err := <-got; err != nil {
		t.Fatalf("LookupContext(slow) after the gate opened: %v", err)
	}
	if err := c.WaitScanned(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.ScanStatus(); st.Scanning {
		t.Errorf("ScanStatus after the scan = %+v", st)
	}
	if got := cattest.IDs(c); strings.Join(got, ",") != "fast,slow" {
		t.Errorf("datasets = %v", got)
	}
	// An unknown id after the scan is not found at once.
	if _, err := c.LookupContext(ctx, "nope"); qerr.Code(err) != qerr.CodeDatasetNotFound {
		t.Errorf("unknown id: %v", err)
	}
}

// TestBackgroundScanClose: Close stops a running first scan.
func TestBackgroundScanClose(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "slow.fk", "x")
	f := gateFormat{fakeFormat: fakeFormat{ext: ".fk"}, gate: make(chan struct{})}
	c, err := catalog.New(context.Background(), catalog.Options{Root: root, Formats: []catalog.Format{f}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the scan")
	}
	if !errors.Is(c.WaitScanned(context.Background()), nil) || c.ScanStatus().Scanning {
		t.Error("the scan is still reported after Close")
	}
}
