package materialize

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/quarrydb/quarry/internal/jsonx"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
)

// wideTable has long values of every shortenable kind: row 0 long, row 1
// short, row 2 null (string 5000 ASCII chars, 3000 two-byte chars, binary of
// 3000 bytes, a list whose JSON is long, a dictionary value).
func wideTable(t testing.TB, mem memory.Allocator) *Table {
	t.Helper()
	long := strings.Repeat("abcde", 1000) // 5000 chars
	multi := strings.Repeat("é", 3000)
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues([]string{long, "short"}, nil)
	sb.AppendNull()
	mb := array.NewStringBuilder(mem)
	defer mb.Release()
	mb.AppendValues([]string{multi, "é"}, nil)
	mb.AppendNull()
	bb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer bb.Release()
	bb.AppendValues([][]byte{bytes.Repeat([]byte{0xff, 0, 1}, 1000), {1, 2}}, nil)
	bb.AppendNull()
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.Int64Builder)
	lb.Append(true)
	for i := range 1000 {
		vb.Append(int64(i))
	}
	lb.Append(true)
	vb.Append(7)
	lb.AppendNull()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	db := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
	defer db.Release()
	_ = db.AppendString(long)
	_ = db.AppendString("x")
	db.AppendNull()
	return tableOf(t, []string{"s", "m", "bin", "list", "dict"},
		sb.NewArray(), mb.NewArray(), bb.NewArray(), lb.NewArray(), db.NewArray())
}

func TestCellShortening(t *testing.T) {
	alloc := newAlloc(t)
	tbl := wideTable(t, alloc)
	defer tbl.Release()
	long := strings.Repeat("abcde", 1000)
	list := "[" + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(seq(1000))), ","), "[]") + "]"
	binB64 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xff, 0, 1}, 1000))

	check := func(t *testing.T, data []byte, limit int) {
		t.Helper()
		var recs []map[string]any
		if err := json.Unmarshal(data, &recs); err != nil {
			t.Fatalf("invalid JSON: %v", err)
		}
		wantCut := func(full string, keep int) string {
			cut := charIndex(full, keep)
			return full[:cut] + fmt.Sprintf("…[truncated %d chars]", utf8.RuneCountInString(full[cut:]))
		}
		want := map[string]string{
			"s":    wantCut(long, limit),
			"m":    wantCut(strings.Repeat("é", 3000), limit),
			"bin":  binB64[:limit/4*4] + fmt.Sprintf("…[truncated %d chars]", len(binB64)-limit/4*4),
			"list": wantCut(list, limit),
			"dict": wantCut(long, limit),
		}
		for k, w := range want {
			if got := recs[0][k]; got != w {
				t.Errorf("%s: got %.80q..., want %.80q...", k, got, w)
			}
		}
		if recs[1]["s"] != "short" || recs[1]["m"] != "é" || recs[1]["dict"] != "x" || recs[2]["s"] != nil {
			t.Errorf("short values changed: %v %v", recs[1], recs[2])
		}
		if l, ok := recs[1]["list"].([]any); !ok || len(l) != 1 {
			t.Errorf("short list became %v", recs[1]["list"])
		}
	}
	shortWarning := func(t *testing.T, warnings []string, n int, limit int) {
		t.Helper()
		w := fmt.Sprintf("%d cell values were longer than %d characters and were shortened", n, limit)
		for _, s := range warnings {
			if strings.Contains(s, w) && strings.Contains(s, "output_format=parquet") {
				return
			}
		}
		t.Errorf("warnings %q lack %q", warnings, w)
	}

	t.Run("direct", func(t *testing.T) {
		f := newFixture(t, Caps{MaxBytes: 1 << 20})
		res, err := f.m.Deliver(ctx(), tbl, Request{})
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, res)
		if res.Method != MethodDirect {
			t.Fatalf("method %s", res.Method)
		}
		check(t, res.Data, DefaultMaxCellChars)
		shortWarning(t, res.Warnings, 5, DefaultMaxCellChars)
	})
	t.Run("configured limit", func(t *testing.T) {
		f := newFixture(t, Caps{MaxCellChars: 100})
		res, err := f.m.Deliver(ctx(), tbl, Request{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, res.Data, 100)
		shortWarning(t, res.Warnings, 5, 100)
	})
	t.Run("handle pages", func(t *testing.T) {
		f := newFixture(t, Caps{MaxRows: 1, PageRows: 1, MaxBytes: 1 << 20})
		res, err := f.m.Deliver(ctx(), tbl, Request{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Method != MethodHandle || res.RowCount != 1 {
			t.Fatalf("%s %d", res.Method, res.RowCount)
		}
		var rec []map[string]any
		_ = json.Unmarshal(res.Data, &rec)
		if s, _ := rec[0]["s"].(string); !strings.HasSuffix(s, "…[truncated 3000 chars]") {
			t.Errorf("page value %.60q", s)
		}
		shortWarning(t, res.Warnings, 5, DefaultMaxCellChars)
		p, err := f.m.NextPage(ctx(), res.ResultHandle, res.PageInfo.PageToken, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range p.Warnings {
			if strings.Contains(w, "shortened") {
				t.Errorf("page without long values warns %q", w)
			}
		}
		rp, err := f.m.ReadPage(ctx(), res.ResultHandle, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		shortWarning(t, rp.Warnings, 5, DefaultMaxCellChars)
	})
	t.Run("files keep full values", func(t *testing.T) {
		f := newFixture(t, Caps{MaxRows: 1})
		for _, format := range []string{"parquet", "csv"} {
			res, err := f.m.Deliver(ctx(), tbl, Request{Format: format})
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != MethodFile {
				t.Fatalf("%s: method %s", format, res.Method)
			}
			a, _ := f.store.Get(res.ResourceURI, "")
			got := firstStringCell(t, a.Path, format)
			if got != long {
				t.Errorf("%s file: s has %d chars, want %d", format, len(got), len(long))
			}
			var pv []map[string]any
			_ = json.Unmarshal(res.Preview, &pv)
			if s, _ := pv[0]["s"].(string); !strings.HasSuffix(s, "…[truncated 3000 chars]") {
				t.Errorf("%s preview value %.60q", format, s)
			}
			found := false
			for _, w := range res.Warnings {
				found = found || strings.Contains(w, "5 cell values in the preview were longer than 2000 characters")
			}
			if !found {
				t.Errorf("%s: warnings %q", format, res.Warnings)
			}
		}
	})
	t.Run("preview function", func(t *testing.T) {
		pv, err := Preview(tbl, 3)
		if err != nil {
			t.Fatal(err)
		}
		check(t, pv, DefaultMaxCellChars)
		full, _, _ := EncodeRecords(ctx(), tbl, 0, 3, 0)
		if !strings.Contains(string(full), long) {
			t.Error("EncodeRecords shortened values")
		}
	})
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// firstStringCell reads column "s" of the first row of a parquet or csv file.
func firstStringCell(t *testing.T, path, format string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if format == "csv" {
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs[1][0]
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]parquet.Row, 1)
	r := parquet.NewReader(pf)
	defer r.Close()
	if _, err := r.ReadRows(rows); err != nil && len(rows[0]) == 0 {
		t.Fatal(err)
	}
	return string(rows[0][0].ByteArray())
}

func TestArrowFormat(t *testing.T) {
	alloc := newAlloc(t)
	t.Run("disabled", func(t *testing.T) {
		f := newFixture(t, Caps{})
		tbl := idTable(t, alloc, 500, 100)
		defer tbl.Release()
		_, err := f.m.Deliver(ctx(), tbl, Request{Format: "arrow"})
		if qerr.Code(err) != qerr.CodeUnsupportedFormat || !strings.Contains(qerr.As(err).Hint, "--enable-arrow-ipc") {
			t.Fatalf("err %v (hint %q)", err, qerr.As(err).Hint)
		}
		if slices.Contains(f.m.Formats(), "arrow") {
			t.Error("Formats lists arrow")
		}
	})
	t.Run("enabled", func(t *testing.T) {
		f := newFixtureCfg(t, Config{Hard: Caps{MaxRows: 2}, EnableArrowIPC: true}, handles.Options{})
		tbl := allTypesTable(t, alloc)
		defer tbl.Release()
		res, err := f.m.Deliver(ctx(), tbl, Request{Format: "ARROW"})
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, res)
		if res.Method != MethodFile || res.Format != "arrow" || res.MIMEType != "application/vnd.apache.arrow.file" ||
			!strings.HasSuffix(res.ResourceURI, ".arrow") || res.RowCount != 5 {
			t.Fatalf("arrow file: %+v", res)
		}
		a, _ := f.store.Get(res.ResourceURI, "")
		back := readArrowTable(t, a.Path)
		defer back.Release()
		// Same JSON as the source, types kept except the decoded dictionary.
		want, _, _ := EncodeRecords(ctx(), tbl, 0, 5, 0)
		got, _, _ := EncodeRecords(ctx(), back, 0, 5, 0)
		if !bytes.Equal(want, got) {
			t.Errorf("arrow round trip:\n got %s\nwant %s", got, want)
		}
		for i, fd := range back.Schema().Fields() {
			src := tbl.Schema().Field(i).Type
			if d, ok := src.(*arrow.DictionaryType); ok {
				src = d.ValueType
			}
			if !arrow.TypeEqual(fd.Type, src) {
				t.Errorf("column %s: type %s, want %s", fd.Name, fd.Type, src)
			}
		}
		// Pages may switch to arrow.
		h := newFixtureCfg(t, Config{Hard: Caps{PageRows: 700}, EnableArrowIPC: true}, handles.Options{})
		ids := idTable(t, alloc, 3000, 512)
		defer ids.Release()
		first, err := h.m.Deliver(ctx(), ids, Request{})
		if err != nil {
			t.Fatal(err)
		}
		checkContiguous(t, walk(t, h, first, []string{"arrow", "", "json", "csv", "arrow"}), 3000)
	})
}

func readArrowTable(t testing.TB, path string) *Table {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := ipc.NewFileReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var batches []arrow.RecordBatch
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, rec)
	}
	tbl := NewTable(r.Schema(), batches)
	for _, b := range batches {
		b.Release()
	}
	return tbl
}

func readArrowIDs(t *testing.T, path string) []int64 {
	tbl := readArrowTable(t, path)
	defer tbl.Release()
	data, _, err := EncodeRecords(ctx(), tbl, 0, tbl.NumRows(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return ids(t, data)
}

func TestFilePaths(t *testing.T) {
	alloc := newAlloc(t)
	tbl := idTable(t, alloc, 500, 100)
	defer tbl.Release()
	for _, expose := range []bool{false, true} {
		f := newFixtureCfg(t, Config{ExposeFilePaths: expose}, handles.Options{})
		res, err := f.m.Deliver(ctx(), tbl, Request{Format: "csv"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if !expose {
			if res.FilePath != "" || strings.Contains(string(b), "file_path") {
				t.Errorf("file path exposed: %s", b)
			}
			continue
		}
		a, _ := f.store.Get(res.ResourceURI, "")
		if res.FilePath != a.Path || !filepath.IsAbs(res.FilePath) || !strings.Contains(string(b), `"file_path"`) {
			t.Errorf("file_path %q, artifact %q", res.FilePath, a.Path)
		}
		if _, err := os.Stat(res.FilePath); err != nil {
			t.Error(err)
		}
	}
}

// TestTokenCarriesMaxBytes: a per-call max_bytes bounds every page of the
// walk, not only the first.
func TestTokenCarriesMaxBytes(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{})
	tbl := idTable(t, alloc, 2000, 300)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{MaxBytes: 700})
	if err != nil {
		t.Fatal(err)
	}
	all := ids(t, res.Data)
	pages := 1
	for res.PageInfo.HasMore {
		if len(res.Data) > 700 {
			t.Fatalf("page %d: %d bytes > 700", pages, len(res.Data))
		}
		if res, err = f.m.NextPage(ctx(), res.ResultHandle, res.PageInfo.PageToken, "", ""); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, res)
		all = append(all, ids(t, res.Data)...)
		pages++
	}
	checkContiguous(t, all, 2000)
	if pages < 2000/20 {
		t.Errorf("only %d pages: later pages ignored max_bytes", pages)
	}
	// The token is signed: its byte cap cannot be raised.
	tok, err := f.reg.Verify(mustFirstToken(t, f, tbl), "")
	if err != nil || tok.MaxBytes != 700 {
		t.Errorf("token %+v %v", tok, err)
	}
}

func mustFirstToken(t *testing.T, f *fixture, tbl *Table) string {
	res, err := f.m.Deliver(ctx(), tbl, Request{MaxBytes: 700})
	if err != nil {
		t.Fatal(err)
	}
	return res.PageInfo.PageToken
}

func TestReadPage(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{PageRows: 100, MaxBytes: 1500})
	tbl := idTable(t, alloc, 1050, 77)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var all []int64
	for n := int64(0); n < 11; n++ {
		p, err := f.m.ReadPage(ctx(), res.ResultHandle, n, "alice")
		if err != nil {
			t.Fatalf("page %d: %v", n, err)
		}
		checkInvariants(t, p)
		got := ids(t, p.Data)
		want := min(int64(100), 1050-n*100)
		if int64(len(got)) != want || p.PageInfo.Offset != n*100 || got[0] != n*100 {
			t.Fatalf("page %d: %d rows from %d (page_info %+v)", n, len(got), got[0], p.PageInfo)
		}
		all = append(all, got...)
		if n == 3 { // its token continues with query_next_page
			next, err := f.m.NextPage(ctx(), res.ResultHandle, p.PageInfo.PageToken, "", "alice")
			if err != nil || next.PageInfo.Offset != 400 {
				t.Fatalf("continue after page 3: %v %+v", err, next)
			}
		}
	}
	checkContiguous(t, all, 1050)
	for _, tc := range []struct {
		n         int64
		principal string
		code      string
	}{{11, "alice", qerr.CodeResourceNotFound}, {-1, "alice", qerr.CodeInvalidArgument}, {0, "bob", qerr.CodeHandleExpired}, {0, "", qerr.CodeHandleExpired}} {
		if _, err := f.m.ReadPage(ctx(), res.ResultHandle, tc.n, tc.principal); qerr.Code(err) != tc.code {
			t.Errorf("page %d as %q: %v, want %s", tc.n, tc.principal, err, tc.code)
		}
	}
	if _, err := f.m.ReadPage(ctx(), "h_unknown", 0, "alice"); qerr.Code(err) != qerr.CodeHandleExpired {
		t.Errorf("unknown handle: %v", err)
	}
}

// collectVia runs tbl's batches through m.Collect (as the service does).
func collectVia(t testing.TB, m *Materializer, tbl *Table) *Table {
	t.Helper()
	bs := sliceBatches(t, tbl, 0, tbl.NumRows())
	rr, err := array.NewRecordReader(tbl.Schema(), bs)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		b.Release()
	}
	defer rr.Release()
	out, err := m.Collect(ctx(), rr, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSpill(t *testing.T) {
	alloc := newAlloc(t)
	src := idTable(t, alloc, 10_001, 997)
	defer src.Release()

	t.Run("below threshold", func(t *testing.T) {
		f := newFixtureCfg(t, Config{SpillRows: 20_000}, handles.Options{})
		tbl := collectVia(t, f.m, src)
		defer tbl.Release()
		if tbl.Spilled() || tbl.SizeBytes() == 0 || f.m.SpilledBytes() != 0 {
			t.Fatalf("spilled %v size %d, SpilledBytes %d", tbl.Spilled(), tbl.SizeBytes(), f.m.SpilledBytes())
		}
	})
	for _, cfg := range []Config{{SpillRows: 1000}, {SpillRows: -1, SpillBytes: 4096}} {
		t.Run(fmt.Sprintf("rows %d bytes %d", cfg.SpillRows, cfg.SpillBytes), func(t *testing.T) {
			cfg.Hard = Caps{PageRows: 1000, MaxBytes: 30_000}
			f := newFixtureCfg(t, cfg, handles.Options{})
			tbl := collectVia(t, f.m, src)
			if !tbl.Spilled() || tbl.SizeBytes() != 0 || tbl.NumRows() != 10_001 {
				t.Fatalf("spilled %v size %d rows %d", tbl.Spilled(), tbl.SizeBytes(), tbl.NumRows())
			}
			spillURI := tbl.spill.art.URI
			if got := f.m.SpilledBytes(); got != tbl.spill.art.Size || got == 0 {
				t.Fatalf("SpilledBytes %d, spill file %d bytes", got, tbl.spill.art.Size)
			}
			if _, err := f.store.Get(spillURI, ""); err != nil {
				t.Fatalf("spill artifact: %v", err)
			}
			// Same pages as the in-memory table, in every format.
			mem := newFixtureCfg(t, Config{Hard: cfg.Hard}, handles.Options{})
			for _, formats := range [][]string{{""}, {"csv", "", "json", "parquet"}} {
				a, err := f.m.Deliver(ctx(), tbl, Request{})
				if err != nil {
					t.Fatal(err)
				}
				b, err := mem.m.Deliver(ctx(), src, Request{})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Data, b.Data) {
					t.Fatalf("first pages differ")
				}
				checkContiguous(t, walk(t, f, a, formats), 10_001)
			}
			// Random ranges read back exactly.
			r := rand.New(rand.NewPCG(1, 2))
			for range 50 {
				off, n := r.Int64N(10_001), r.Int64N(3000)
				a, _, err := EncodeRecords(ctx(), tbl, off, n, 0)
				if err != nil {
					t.Fatal(err)
				}
				b, _, _ := EncodeRecords(ctx(), src, off, n, 0)
				if !bytes.Equal(a, b) {
					t.Fatalf("range %d+%d differs", off, n)
				}
			}
			// The whole result as Parquet is the spill file itself.
			pq, err := f.m.Deliver(ctx(), tbl, Request{Format: "parquet"})
			if err != nil {
				t.Fatal(err)
			}
			if pq.ResourceURI != spillURI || pq.RowCount != 10_001 {
				t.Errorf("parquet result %s, spill %s", pq.ResourceURI, spillURI)
			}
			ap, _ := f.store.Get(pq.ResourceURI, "")
			checkContiguous(t, readFileIDs(t, ap.Path, "parquet"), 10_001)
			// Releasing the table keeps the published spill file...
			tbl.Release()
			if _, err := f.store.Get(spillURI, ""); err != nil {
				t.Errorf("published spill file deleted: %v", err)
			}
		})
	}
	t.Run("unpublished spill deleted on release", func(t *testing.T) {
		f := newFixtureCfg(t, Config{SpillRows: 100}, handles.Options{})
		tbl := collectVia(t, f.m, src)
		uri := tbl.spill.art.URI
		res, err := f.m.Deliver(ctx(), tbl, Request{})
		if err != nil {
			t.Fatal(err)
		}
		tbl.Release() // the handle still holds it
		if _, err := f.store.Get(uri, ""); err != nil {
			t.Fatalf("spill file gone while the handle lives: %v", err)
		}
		f.reg.Delete(res.ResultHandle)
		if _, err := f.store.Get(uri, ""); err == nil {
			t.Error("spill file kept after the handle was released")
		}
	})
	t.Run("concurrent pages", func(t *testing.T) {
		f := newFixtureCfg(t, Config{Hard: Caps{PageRows: 500}, SpillRows: 100}, handles.Options{})
		tbl := collectVia(t, f.m, src)
		defer tbl.Release()
		res, err := f.m.Deliver(ctx(), tbl, Request{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := int64(g); n < 20; n += 8 {
					p, err := f.m.ReadPage(ctx(), res.ResultHandle, n, "")
					if err != nil {
						t.Error(err)
						return
					}
					if got := ids(t, p.Data); got[0] != n*500 {
						t.Errorf("page %d starts at %d", n, got[0])
					}
				}
			}()
		}
		wg.Wait()
	})
}

// TestSpillAllTypes: every type comes back from a spill file with the
// same JSON and CSV as the in-memory table.
func TestSpillAllTypes(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixtureCfg(t, Config{SpillRows: 1}, handles.Options{})
	r := rand.New(rand.NewPCG(9, 9))
	tables := []*Table{allTypesTable(t, alloc), wideTable(t, alloc)}
	for range 20 {
		tables = append(tables, randomTable(t, alloc, r, 2+r.IntN(300)))
	}
	for i, src := range tables {
		sp := collectVia(t, f.m, src)
		if !sp.Spilled() {
			t.Fatalf("table %d not spilled", i)
		}
		if !slices.Equal(columnInfos(sp), columnInfos(src)) {
			t.Errorf("table %d: columns %v, want %v", i, columnInfos(sp), columnInfos(src))
		}
		for _, rng := range [][2]int64{{0, src.NumRows()}, {1, 1}, {src.NumRows() / 2, src.NumRows()}} {
			a, _, err := EncodeRecords(ctx(), sp, rng[0], rng[1], 0)
			if err != nil {
				t.Fatal(err)
			}
			b, _, _ := EncodeRecords(ctx(), src, rng[0], rng[1], 0)
			if !bytes.Equal(a, b) {
				t.Fatalf("table %d (%s) range %v:\nspilled %s\nmemory  %s", i, src.Schema(), rng, clipBytes(a), clipBytes(b))
			}
		}
		var ca, cb bytes.Buffer
		v, err := sp.Slice(ctx(), 0, sp.NumRows())
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteCSV(ctx(), &ca, v.Schema(), v.batches); err != nil {
			t.Fatal(err)
		}
		v.Release()
		bs := sliceBatches(t, src, 0, src.NumRows())
		if err := WriteCSV(ctx(), &cb, src.Schema(), bs); err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			b.Release()
		}
		if ca.String() != cb.String() {
			t.Fatalf("table %d: CSV differs", i)
		}
		sp.Release()
		src.Release()
	}
}

// TestHandleMemoryEviction: the registry's byte bound evicts in-memory
// results; spilled ones cost nothing.
func TestHandleMemoryEviction(t *testing.T) {
	alloc := newAlloc(t)
	a := idTable(t, alloc, 5000, 1000)
	defer a.Release()
	f := newFixtureCfg(t, Config{SpillRows: -1, SpillBytes: -1}, handles.Options{MaxBytes: a.SizeBytes() + a.SizeBytes()/2})
	b := idTable(t, alloc, 5000, 1000)
	defer b.Release()
	ra, err := f.m.Deliver(ctx(), a, Request{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := f.m.Deliver(ctx(), b, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.NextPage(ctx(), ra.ResultHandle, ra.PageInfo.PageToken, "", ""); qerr.Code(err) != qerr.CodeHandleExpired {
		t.Fatalf("evicted handle: %v", err)
	}
	if _, err := f.m.NextPage(ctx(), rb.ResultHandle, rb.PageInfo.PageToken, "", ""); err != nil {
		t.Fatal(err)
	}
	// Spilled results do not count against the byte bound.
	g := newFixtureCfg(t, Config{SpillRows: 10}, handles.Options{MaxBytes: 1})
	var res []*Result
	for range 3 {
		sp := collectVia(t, g.m, a)
		r, err := g.m.Deliver(ctx(), sp, Request{})
		sp.Release()
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	for _, r := range res {
		if _, err := g.m.NextPage(ctx(), r.ResultHandle, r.PageInfo.PageToken, "", ""); err != nil {
			t.Fatalf("spilled handle evicted: %v", err)
		}
	}
}

// TestCapsCombinations checks every response against every cap for many
// combinations of hard and per-call caps: what is inline fits all caps,
// a page is the longest prefix that fits, and rows are withheld only with
// truncated/has_more set.
func TestCapsCombinations(t *testing.T) {
	alloc := newAlloc(t)
	tbl := idTable(t, alloc, 400, 64) // ~40 bytes per row, 3 columns
	defer tbl.Release()
	full, _, _ := EncodeRecords(ctx(), tbl, 0, 400, 0)
	rowBytes := func(off, n int64) int64 {
		b, _, _ := EncodeRecords(ctx(), tbl, off, n, 0)
		return int64(len(b))
	}
	base := newFixture(t, Caps{})
	values := []int64{0, 1, 7, 150, 400, 1000}
	byteValues := []int64{0, 30, 300, 4000, int64(len(full)), 1 << 20}
	var n int
	for _, rows := range values {
		for _, cells := range []int64{0, 3, 20, 450, 1200, 100_000} {
			for _, bytesCap := range byteValues {
				for _, pageRows := range []int64{0, 1, 50, 1000} {
					for _, req := range []Request{{}, {MaxRows: 5}, {MaxBytes: 200}, {MaxRows: 100, MaxBytes: 2000}} {
						n++
						hard := Caps{MaxRows: rows, MaxCells: cells, MaxBytes: bytesCap, PageRows: pageRows}
						m := New(Config{Hard: hard, Artifacts: base.store, Handles: base.reg})
						eff, _, _ := m.effective(req)
						res, err := m.Deliver(ctx(), tbl, req)
						if err != nil {
							t.Fatal(err)
						}
						checkInvariants(t, res)
						name := fmt.Sprintf("hard %+v req %+v", hard, req)
						switch res.Method {
						case MethodDirect:
							if res.RowCount != 400 || 400 > eff.MaxRows || 400*3 > eff.MaxCells || int64(len(res.Data)) > eff.MaxBytes {
								t.Fatalf("%s: direct over caps", name)
							}
						case MethodHandle:
							fits := 400 <= eff.MaxRows && 400*3 <= eff.MaxCells && int64(len(full)) <= eff.MaxBytes
							if fits {
								t.Fatalf("%s: paged although it fits", name)
							}
							k := res.RowCount
							limit := min(eff.PageRows, max(eff.MaxCells/3, 1))
							if k > limit || (k > 1 && int64(len(res.Data)) > eff.MaxBytes) {
								t.Fatalf("%s: page of %d rows (%d bytes) over caps", name, k, len(res.Data))
							}
							if k < limit && k < 400 && rowBytes(0, k+1) <= eff.MaxBytes {
								t.Fatalf("%s: page of %d rows is not the longest that fits", name, k)
							}
							if (k < 400) != (res.Truncated && res.PageInfo.HasMore) {
								t.Fatalf("%s: %d of 400 rows, truncated %v", name, k, res.Truncated)
							}
						default:
							t.Fatalf("%s: method %s", name, res.Method)
						}
					}
				}
			}
		}
	}
	t.Logf("%d combinations", n)
}

// TestEncoderMatchesReference compares the column-major record encoder
// with a straightforward row-by-row encoding through the per-value
// encoders, on random tables (nulls, slices, many batches, dictionaries).
func TestEncoderMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 34))
	for iter := range 80 {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		tbl := randomTable(t, alloc, r, 1+r.IntN(3000))
		got, n, err := EncodeRecords(ctx(), tbl, 0, tbl.NumRows(), 0)
		if err != nil || n != tbl.NumRows() {
			t.Fatal(err)
		}
		if want := referenceEncode(tbl); !bytes.Equal(got, want) {
			t.Fatalf("iter %d (%s):\n got %s\nwant %s", iter, tbl.Schema(), clipBytes(got), clipBytes(want))
		}
		tbl.Release()
		alloc.AssertSize(t, 0)
	}
}

func referenceEncode(t *Table) []byte {
	names := ColumnNames(t.Schema())
	out := []byte{'['}
	for _, b := range t.batches {
		encs := make([]valueEncoder, b.NumCols())
		for c := range encs {
			encs[c] = newValueEncoder(b.Column(c))
		}
		for i := range int(b.NumRows()) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, '{')
			for c, enc := range encs {
				if c > 0 {
					out = append(out, ',')
				}
				out = jsonx.AppendString(out, names[c])
				out = append(out, ':')
				out = enc(out, i)
			}
			out = append(out, '}')
		}
	}
	return append(out, ']')
}

// TestFloatMatchesEncodingJSON: the float text is exactly encoding/json's
// (which formats like JavaScript), fast paths included.
func TestFloatMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	vals := []float64{0, 1, -1, 0.1, 0.5, 12.25, 19.99, -0.0001, 0.00015, 1e-6, 9.999999e-7, 1e15, 1e15 + 0.5, 123456789.5,
		1e21, 1e20, 99999999999.99, 2.5e-5, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2, 0.3, 0.1 + 0.2}
	for range 20000 {
		switch r.IntN(4) {
		case 0:
			vals = append(vals, r.NormFloat64()*math.Pow(10, float64(r.IntN(30)-15)))
		case 1:
			vals = append(vals, math.Round(r.Float64()*1e6)/math.Pow(10, float64(r.IntN(6))))
		case 2:
			vals = append(vals, float64(r.Int64N(1<<53))*math.Pow(2, float64(r.IntN(40)-20)))
		default:
			vals = append(vals, math.Float64frombits(r.Uint64()))
		}
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		for _, x := range []float64{v, -v} {
			want, _ := json.Marshal(x)
			if got := jsonx.AppendFloat(nil, x, 64); string(got) != string(want) {
				t.Fatalf("%v (%#x): got %s, encoding/json %s", x, math.Float64bits(x), got, want)
			}
			f32 := float32(x)
			if math.IsInf(float64(f32), 0) {
				continue
			}
			want, _ = json.Marshal(f32)
			if got := jsonx.AppendFloat(nil, float64(f32), 32); string(got) != string(want) {
				t.Fatalf("float32 %v: got %s, encoding/json %s", f32, got, want)
			}
		}
	}
}

// TestDictionaryDecodes: dictionary arrays (sliced, with null indices and
// null values, several batches with different dictionaries, int16 and
// int32 indices) decode to their values in JSON.
func TestDictionaryDecodes(t *testing.T) {
	for _, it := range []arrow.DataType{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32} {
		t.Run(it.String(), func(t *testing.T) { testDictionaryDecodes(t, it) })
	}
}

func testDictionaryDecodes(t *testing.T, it arrow.DataType) {
	alloc := newAlloc(t)
	dt := &arrow.DictionaryType{IndexType: it, ValueType: arrow.PrimitiveTypes.Float64}
	mk := func(values string, idx string) arrow.Array {
		v := fromJSON(t, alloc, arrow.PrimitiveTypes.Float64, values)
		defer v.Release()
		i := fromJSON(t, alloc, it, idx)
		defer i.Release()
		return array.NewDictionaryArray(dt, i, v)
	}
	a1 := mk(`[1.5, null, 2]`, `[0, 1, null, 2, 0]`)
	a2 := mk(`[7, 8]`, `[1, 0]`)
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
	r1 := array.NewRecordBatch(schema, []arrow.Array{a1}, 5)
	r2 := array.NewRecordBatch(schema, []arrow.Array{a2}, 2)
	a1.Release()
	a2.Release()
	s1 := r1.NewSlice(1, 5)
	tbl := NewTable(schema, []arrow.RecordBatch{s1, r2})
	r1.Release()
	r2.Release()
	s1.Release()
	defer tbl.Release()
	got, _, _ := EncodeRecords(ctx(), tbl, 0, 10, 0)
	if want := `[{"d":null},{"d":null},{"d":2},{"d":1.5},{"d":8},{"d":7}]`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestChunkRows(t *testing.T) {
	if chunkRows(1, 0, 0) != 1024 || chunkRows(1, 0, 100) != 32 {
		t.Fatal("initial chunk")
	}
	// 100 bytes per row, 1000 bytes left: about 10 rows, with slack.
	if c := chunkRows(10_001, 100, 11_001); c < 10 || c > 16 {
		t.Fatalf("chunk %d", c)
	}
	if c := chunkRows(1000, 10, 1000); c != 8 {
		t.Fatalf("minimum chunk %d", c)
	}
}

var _ = context.Background

// FuzzNextPage: any handle, token and format give a result or a structured
// error (invalid_page_token, handle_expired, unsupported_format), never a
// panic; a valid token's page is always well formed.
func FuzzNextPage(f *testing.F) {
	fx := newFixture(f, Caps{MaxBytes: 2000})
	tbl := idTable(f, memory.NewGoAllocator(), 1000, 128)
	f.Cleanup(tbl.Release)
	res, err := fx.m.Deliver(ctx(), tbl, Request{Principal: "p"})
	if err != nil {
		f.Fatal(err)
	}
	tok := res.PageInfo.PageToken
	f.Add(res.ResultHandle, tok, "", "p")
	f.Add(res.ResultHandle, tok, "csv", "q")
	f.Add("h_x", tok[:len(tok)/2], "json", "p")
	f.Add(res.ResultHandle, fx.reg.Sign(handles.Token{Handle: res.ResultHandle, Offset: 999, Size: 1 << 40, Format: "json", MaxBytes: 1}), "", "p")
	f.Fuzz(func(t *testing.T, handle, token, format, principal string) {
		r, err := fx.m.NextPage(ctx(), handle, token, format, principal)
		if err != nil {
			switch qerr.Code(err) {
			case qerr.CodeInvalidPageToken, qerr.CodeHandleExpired, qerr.CodeUnsupportedFormat:
				if qerr.As(err).Hint == "" {
					t.Fatalf("no hint: %v", err)
				}
			default:
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		checkInvariants(t, r)
	})
}
