package csv

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/catalog/internal/chunk"
)

// Differential tests of the fast CSV path against the reference path
// (encoding/csv for tokenizing and inference, arrow-go's CSV reader for
// scans) on random inputs full of quoting, embedded newlines and
// delimiters, "\r\n", lone '\r', blank lines, BOMs, Unicode and nulls.

func TestStructMask(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, 64*(1+r.IntN(8)))
		for i := range b {
			b[i] = ",;\n\"ab\x00\xff-+!"[r.IntN(11)]
		}
		var pat [48]byte
		d := ",;"[r.IntN(2)]
		for i := range 16 {
			pat[i], pat[16+i], pat[32+i] = d, '\n', '"'
		}
		k64 := len(b) / 64
		mk := func() []uint64 { return make([]uint64, k64) }
		got, gotNQ, gotHi := mk(), mk(), mk()
		want, wantNQ, wantHi := mk(), mk(), mk()
		structMask(b, &pat, got, gotNQ, gotHi)
		for k := range want {
			for i := range 64 {
				c := b[64*k+i]
				if c == pat[0] || c == '\n' || c == '"' {
					want[k] |= 1 << i
				}
				if c == '\n' || c == '"' {
					wantNQ[k] |= 1 << i
				}
				if c >= 0x80 {
					wantHi[k] |= 1 << i
				}
			}
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotNQ, wantNQ) || !reflect.DeepEqual(gotHi, wantHi) {
			t.Fatalf("structMask %x %x %x, want %x %x %x", got, gotNQ, gotHi, want, wantNQ, wantHi)
		}
		structMaskGo(b, &pat, got, gotNQ, gotHi)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotNQ, wantNQ) || !reflect.DeepEqual(gotHi, wantHi) {
			t.Fatalf("structMaskGo %x %x %x, want %x %x %x", got, gotNQ, gotHi, want, wantNQ, wantHi)
		}
	}
}

func randField(r *rand.Rand, d byte, valid bool) string {
	pieces := []string{"a", "b", "xyz", "1", "-2.5", "Երևան", "café", " ", "\r", "é", "2024-01-02", "true"}
	var sb strings.Builder
	for range r.IntN(4) {
		sb.WriteString(pieces[r.IntN(len(pieces))])
	}
	s := sb.String()
	switch k := r.IntN(10); {
	case k < 3:
		// quoted, with specials inside
		inner := []string{s, string(d), "\n", "\r\n", `""`, "x"}
		var q strings.Builder
		q.WriteByte('"')
		for range r.IntN(5) {
			q.WriteString(inner[r.IntN(len(inner))])
		}
		q.WriteByte('"')
		return q.String()
	case k == 3 && !valid:
		return s + `"` + s // bare quote
	case k == 4 && !valid:
		return `"` + s + `"x` // garbage after closing quote
	}
	return strings.TrimRight(s, "\r") // a trailing \r before the newline would be eaten
}

// randCSV returns a random CSV text with ncols fields per record.
func randCSV(r *rand.Rand, d byte, ncols, nrec int, valid bool) string {
	var sb strings.Builder
	if r.IntN(5) == 0 {
		sb.WriteString("\ufeff")
	}
	for i := range nrec {
		if r.IntN(8) == 0 {
			sb.WriteString([]string{"\n", "\r\n"}[r.IntN(2)]) // blank line
		}
		n := ncols
		if !valid && r.IntN(20) == 0 {
			n += r.IntN(3) - 1
		}
		for j := range n {
			if j > 0 {
				sb.WriteByte(d)
			}
			f := randField(r, d, valid || r.IntN(10) != 0)
			if n == 1 && f == "" {
				f = `""` // a lone empty field would be a blank line
			}
			sb.WriteString(f)
		}
		if i < nrec-1 || r.IntN(2) == 0 {
			sb.WriteString([]string{"\n", "\r\n"}[r.IntN(2)])
		} else if r.IntN(3) == 0 {
			sb.WriteString("\r")
		}
	}
	if !valid && r.IntN(10) == 0 {
		sb.WriteString(`"unterminated`)
	}
	return sb.String()
}

// refRecords reads text with encoding/csv (BOM stripped).
func refRecords(text string, d byte) ([][]string, error) {
	cr := csv.NewReader(strings.NewReader(strings.TrimPrefix(text, "\ufeff")))
	cr.Comma = rune(d)
	return cr.ReadAll()
}

// fastRecords tokenizes text through the chunk reader with the given
// chunk size and returns every record (the header included).
func fastRecords(text string, d byte, ncols, size int) ([][]string, error) {
	cr := chunk.NewReader(strings.NewReader(text), nil, chunk.Config{Size: size, Boundary: lastBoundary, What: "CSV"})
	all := make([]int, ncols)
	for i := range all {
		all[i] = i
	}
	tok := newTokenizer(d, ncols, all)
	var out [][]string
	var scratch []byte
	for {
		ch, err := cr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		// Record the header too: tokenize without skipping.
		if err := tok.run(ch.Data, false); err != nil {
			return nil, err
		}
		for row := range tok.rows {
			rec := make([]string, ncols)
			for c := range ncols {
				rec[c] = string(field(ch.Data, tok.cols[c][2*row], tok.cols[c][2*row+1], &scratch))
			}
			out = append(out, rec)
		}
	}
}

func TestTokenizerDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 4000 {
		d := ",;\t|"[r.IntN(4)]
		ncols := 1 + r.IntN(5)
		valid := r.IntN(3) != 0
		text := randCSV(r, d, ncols, r.IntN(30), valid)
		want, werr := refRecords(text, d)
		chunk := []int{1, 7, 64, 100, 1 << 20}[r.IntN(5)]
		got, gerr := fastRecords(text, d, ncols, chunk)
		if werr == nil && len(want) > 0 && len(want[0]) != ncols {
			// header width differs from ncols: tokenizer must fail
			if gerr == nil {
				t.Fatalf("iter %d: header has %d fields, tokenizer with %d accepted\n%q", iter, len(want[0]), ncols, text)
			}
			continue
		}
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("iter %d (chunk %d): reference err %v, fast err %v\n%q", iter, chunk, werr, gerr, text)
		}
		if werr != nil {
			continue
		}
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iter %d (chunk %d):\n got %q\nwant %q\ntext %q", iter, chunk, got, want, text)
		}
	}
}

func TestTokenizerUTF8(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	pieces := []string{"a", ",", "\n", "é", "Երևան", "\xe9", "\xff", "\xd5", "\x80", strings.Repeat("x", 60)}
	for range 5000 {
		var sb strings.Builder
		sb.WriteString("a\n")
		for range r.IntN(40) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		sb.WriteString("\n")
		text := sb.String()
		text = strings.ReplaceAll(text, ",", "")
		tok := newTokenizer(',', 1, nil)
		tok.utf8 = true
		err := tok.run([]byte(text), true)
		if (err != nil) != !utf8.ValidString(text) {
			t.Fatalf("%q: tokenizer err %v, utf8.Valid %v", text, err, utf8.ValidString(text))
		}
	}
}

func TestTokenizerEdgeCases(t *testing.T) {
	for _, text := range []string{
		"a,b\n1,2", "a,b\n1,2\r", "a,b\r\n1,2\r\n", "a,b\n\n\n1,2\n", "a,b\n\r\n1,2\n", "a,b\n1,\"x\"\r",
		"a,b\n\"1\r\n2\",\"\"\"\"\n", "a,b\n1\r2,3\n", "a,b\n,\n", "a,b\n\"\",\"\"", "a\n\r", "a\n\"\"\n",
		"a,b\n1,\"x\"y\n", "a,b\n1,x\"y\n", "a,b\n1,\"abc\n", "a,b\n1,2,3\n", "a,b\n1\n", "a,b\n1,2\n\r\r\n",
		"a,b\n1,2\r\r\n", "a,b\n\"x\"\r,y\n", strings.Repeat("x", 70) + ",y\n" + strings.Repeat("\"a\"\"b\",c\n", 20),
	} {
		want, werr := refRecords(text, ',')
		ncols := 2
		if strings.HasPrefix(text, "a\n") {
			ncols = 1
		}
		if werr == nil && len(want) > 0 {
			ncols = len(want[0])
		}
		for _, chunk := range []int{1, 3, 64, 1 << 20} {
			got, gerr := fastRecords(text, ',', ncols, chunk)
			if (werr != nil) != (gerr != nil) {
				t.Errorf("%q (chunk %d): reference err %v, fast err %v", text, chunk, werr, gerr)
				continue
			}
			if werr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%q (chunk %d):\n got %q\nwant %q", text, chunk, got, want)
			}
		}
	}
}

// randTypedCSV returns a CSV whose columns lean towards one type each,
// with nulls, quoting and occasional odd cells.
func randTypedCSV(r *rand.Rand, nrows int) string {
	gens := []func() string{
		func() string { return fmt.Sprint(r.Int64N(2_000_000_000) - 1_000_000_000) },
		func() string { return fmt.Sprintf("%d.%02d", r.IntN(1000), r.IntN(100)) },
		func() string { return fmt.Sprint(r.NormFloat64() * 1e6) },
		func() string { return []string{"true", "FALSE", "True"}[r.IntN(3)] },
		func() string { return fmt.Sprintf("%04d-%02d-%02d", 1900+r.IntN(200), 1+r.IntN(12), 1+r.IntN(28)) },
		func() string {
			return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", 1960+r.IntN(80), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60))
		},
		func() string {
			return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%03dZ", 1960+r.IntN(80), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
		},
		func() string {
			return []string{"north", "south", "Երևան", "café, bar", "say \"hi\"", "a\nb"}[r.IntN(6)]
		},
		func() string { return fmt.Sprintf("%05d", r.IntN(100000)) }, // codes, some with leading zeros
		func() string { return fmt.Sprint(r.Int64()) },               // 19-digit ints
		func() string {
			return fmt.Sprintf("%.*g", 1+r.IntN(20), r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20)))
		},
		func() string { return fmt.Sprintf("%d/%d/%04d", 1+r.IntN(12), 1+r.IntN(28), 1990+r.IntN(30)) },
		func() string { return fmt.Sprintf("%02d/%02d/%04d", 1+r.IntN(28), 1+r.IntN(12), 1990+r.IntN(30)) },
		func() string {
			return fmt.Sprintf("%04d/%02d/%02d %02d:%02d:%02d", 1990+r.IntN(30), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60))
		},
		func() string {
			m := infer.MonthNames[r.IntN(12)]
			if r.IntN(2) == 0 {
				m = m[:3]
			}
			layout := []string{"%[1]s %[2]d %[3]d", "%[2]d %[1]s %[3]d", "%[3]d-%[1]s-%02[2]d", "%02[2]d-%[1]s-%[3]d", "%[1]s %[2]d, %[3]d"}[r.IntN(5)]
			return fmt.Sprintf(layout, m, 1+r.IntN(28), 1990+r.IntN(30))
		},
	}
	odd := []string{"1e5", "NaN", "inf", "-0", "+7", "2024-02-29", "2023-02-29", "x", "00012", "1.", ".5", "99999999999999999999", "0.1234567890123456789", "0x1p3", "1_0",
		"007", "0", "-0.0", "01.5", "1E5", "12345678901234567", "9223372036854775808", "100000000000000000000", "0.30000000000000004",
		"01/02/2015", "13/01/2015", "01/13/2015", "2015/01/31", "2015/02/30", "Jan 1 2000", "1 January 2000", "2000-Jan-01", "2015/01/01 01:00", "N/A"}
	if r.IntN(8) == 0 {
		odd = append(odd, "caf\xe9", "\xff1", "\xe2\x82")
	}
	ncols := 1 + r.IntN(6)
	cols := make([]int, ncols)
	var sb strings.Builder
	for c := range ncols {
		cols[c] = r.IntN(len(gens))
		if c > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "c%d", c)
	}
	sb.WriteByte('\n')
	for range nrows {
		for c := range ncols {
			if c > 0 {
				sb.WriteByte(',')
			}
			var v string
			switch k := r.IntN(100); {
			case k < 8:
				v = ""
			case k < 10:
				v = odd[r.IntN(len(odd))]
			default:
				v = gens[cols[c]]()
			}
			if v == "" && ncols == 1 {
				v = `""`
			} else if strings.ContainsAny(v, ",\"\n") || r.IntN(30) == 0 {
				v = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
			sb.WriteString(v)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// openBoth catalogs text as root/name with the fast inference and returns
// the source, plus the reference inference.
func openBoth(t *testing.T, name, text string) (*csvSource, *csvInference, error, error) {
	t.Helper()
	root := t.TempDir()
	p := filepath.Join(root, name)
	data := []byte(text)
	gz := strings.HasSuffix(name, ".gz")
	if gz {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		data = buf.Bytes()
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ref, rerr := inferCSV(context.Background(), fileAt(p), gz, ',', catalog.Limits{})
	fast, ferr := inferFast(context.Background(), fileAt(p), gz, ',', int64(len(data)), nil, catalog.Limits{})
	if ferr != nil {
		return nil, ref, rerr, ferr
	}
	schema := make([]arrow.Field, len(fast.names))
	for i, n := range fast.names {
		schema[i] = arrow.Field{Name: n, Type: fast.kinds[i].ArrowType(), Nullable: true}
	}
	src := &csvSource{id: "t", file: fileAt(p), gz: gz, delim: fast.delim, schema: arrow.NewSchema(schema, nil),
		kinds: fast.kinds, rows: fast.rows, size: int64(len(data))}
	return src, ref, rerr, nil
}

func readAll(t *testing.T, rr array.RecordReader) ([]arrow.Array, error) {
	t.Helper()
	defer rr.Release()
	var chunks [][]arrow.Array
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range rec.NumCols() {
			if int(i) >= len(chunks) {
				chunks = append(chunks, nil)
			}
			c := rec.Column(int(i))
			c.Retain()
			chunks[i] = append(chunks[i], c)
		}
	}
	out := make([]arrow.Array, len(chunks))
	for i, cs := range chunks {
		a, err := array.Concatenate(cs, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = a
		for _, c := range cs {
			c.Release()
		}
	}
	return out, rr.Err()
}

func TestScanDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	defer func(w, f int) { maskWindow, minFlushRows = w, f }(maskWindow, minFlushRows)
	for iter := range 300 {
		// a third with tiny mask windows and flushes (records cut across them)
		maskWindow, minFlushRows = []int{16 << 10, 64, 16 << 10}[iter%3], []int{512, 3, 1}[iter%3]
		name := []string{"a.csv", "a.csv.gz"}[r.IntN(2)]
		text := randTypedCSV(r, r.IntN(300))
		src, ref, rerr, ferr := openBoth(t, name, text)
		if rerr != nil {
			if ferr == nil {
				t.Fatalf("iter %d: reference rejects (%v), fast accepts\n%q", iter, rerr, text)
			}
			p := filepath.Join(t.TempDir(), "k.csv")
			os.WriteFile(p, []byte(text), 0o644)
			if _, err := inferFast(context.Background(), fileAt(p), false, ',', int64(len(text)), memory.DefaultAllocator, catalog.Limits{}); err == nil {
				t.Fatalf("iter %d: keeping inference accepts what the reference rejects (%v)", iter, rerr)
			}
			continue
		}
		if ferr != nil {
			t.Fatalf("iter %d: fast rejects (%v), reference accepts\n%q", iter, ferr, text)
		}
		if !reflect.DeepEqual(src.kinds, ref.kinds) || src.rows != ref.rows || !reflect.DeepEqual(src.schema.Fields()[0].Name, ref.names[0]) {
			t.Fatalf("iter %d: inference kinds %v rows %d, reference %v rows %d\n%q", iter, src.kinds, src.rows, ref.kinds, ref.rows, text)
		}
		if fast, _ := inferFast(context.Background(), src.file, src.gz, ',', src.size, nil, catalog.Limits{}); !reflect.DeepEqual(fast.traces, ref.traces) {
			t.Fatalf("iter %d: inference traces %v, reference %v\n%q", iter, fast.traces, ref.traces, text)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		checkKept(t, src, mem)
		var cols []string
		if r.IntN(2) == 0 && src.schema.NumFields() > 1 {
			cols = []string{src.schema.Field(src.schema.NumFields() - 1).Name, src.schema.Field(0).Name}
		}
		batch := []int{0, 1, 7, 100}[r.IntN(4)]
		frr, err := src.Scan(context.Background(), catalog.ScanOptions{Columns: cols, BatchSize: batch, Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := readAll(t, frr)
		rrr, err := src.scanReference(context.Background(), catalog.ScanOptions{Columns: cols, BatchSize: batch})
		if err != nil {
			t.Fatal(err)
		}
		want, werr := readAll(t, rrr)
		if gerr != nil || werr != nil {
			t.Fatalf("iter %d: scan errors fast %v reference %v", iter, gerr, werr)
		}
		for i := range want {
			if !sameArray(got[i], want[i]) {
				t.Fatalf("iter %d column %d:\n got %v\nwant %v\n%q", iter, i, got[i], want[i], text)
			}
			got[i].Release()
			want[i].Release()
		}
		mem.AssertSize(t, 0)
	}
}

// checkKept runs the inference with a keeper allocator and compares every
// kept column with the reference reader's.
func checkKept(t *testing.T, src *csvSource, mem memory.Allocator) {
	t.Helper()
	inf, err := inferFast(context.Background(), src.file, src.gz, ',', src.size, mem, catalog.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if ref, err := inferCSV(context.Background(), src.file, src.gz, ',', catalog.Limits{}); err != nil || !reflect.DeepEqual(inf.traces, ref.traces) {
		t.Fatalf("kept inference traces %v, reference %v (%v)", inf.traces, ref.traces, err)
	}
	rrr, err := src.scanReference(context.Background(), catalog.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, werr := readAll(t, rrr)
	if werr != nil {
		t.Fatal(werr)
	}
	for c, chunks := range inf.kept {
		if chunks == nil {
			continue
		}
		if len(want) == 0 { // no rows: nothing to compare
			for _, a := range chunks {
				a.Release()
			}
			continue
		}
		var plain []arrow.Array
		for _, a := range chunks {
			if d, ok := a.(*array.Dictionary); ok {
				b := array.NewStringBuilder(memory.DefaultAllocator)
				for j := range d.Len() {
					if d.IsNull(j) {
						b.AppendNull()
					} else {
						b.Append(d.Dictionary().(*array.String).Value(d.GetValueIndex(j)))
					}
				}
				plain = append(plain, b.NewArray())
				b.Release()
			} else {
				a.Retain()
				plain = append(plain, a)
			}
			if chunks[0].DataType().ID() != a.DataType().ID() {
				t.Fatalf("column %d mixes %s and %s", c, chunks[0].DataType(), a.DataType())
			}
		}
		var got arrow.Array
		if len(plain) == 0 {
			got = array.MakeArrayOfNull(memory.DefaultAllocator, want[c].DataType(), 0)
		} else {
			got, err = array.Concatenate(plain, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
		}
		if !sameArray(got, want[c]) {
			t.Fatalf("kept column %d:\n got %v\nwant %v", c, got, want[c])
		}
		got.Release()
		for _, a := range plain {
			a.Release()
		}
		for _, a := range chunks {
			a.Release()
		}
	}
	for _, a := range want {
		a.Release()
	}
}

// TestKeptAcrossChunks: columns whose chunks disagree on the kind.
func TestKeptAcrossChunks(t *testing.T) {
	for _, size := range []int{16 << 10, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { testKeptAcrossChunks(t, size) })
	}
}

func testKeptAcrossChunks(t *testing.T, size int) {
	old := keepChunkBytes
	keepChunkBytes = size
	defer func() { keepChunkBytes = old }()
	var sb strings.Builder
	sb.WriteString("a,b,c,d,e,f\n")
	const n = 40000
	for i := range n {
		late := i > n/2
		a := fmt.Sprint(i)
		if late {
			a = fmt.Sprintf("%d.5", i)
		}
		b := ""
		if late {
			b = "x"
		}
		c := fmt.Sprint(i)
		if i == n-1 {
			c = "x"
		}
		d := "-0"
		if late {
			d = "1.5"
		}
		e := []string{"p", "q"}[i%2]
		if late {
			e = fmt.Sprintf("u%d", i)
		}
		fmt.Fprintf(&sb, "%s,%s,%s,%s,%s,%d\n", a, b, c, d, e, i%3)
	}
	src, ref, rerr, ferr := openBoth(t, "k.csv", sb.String())
	if rerr != nil || ferr != nil {
		t.Fatal(rerr, ferr)
	}
	if fmt.Sprint(ref.kinds) != fmt.Sprint([]infer.Kind{infer.KindFloat, infer.KindString, infer.KindString, infer.KindFloat, infer.KindString, infer.KindInt}) {
		t.Fatalf("kinds %v", ref.kinds)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src.size = chunk.ParallelMin * 2
	inf, err := inferFast(context.Background(), src.file, false, ',', src.size, mem, catalog.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inf.kept[0]) < 2 && size < 1<<20 {
		t.Fatalf("only %d chunks", len(inf.kept[0]))
	}
	if size < 1<<20 && (inf.kept[2] != nil || inf.kept[3] != nil) {
		t.Fatal("int/string and -0 columns kept across chunks")
	}
	for _, c := range inf.kept {
		for _, a := range c {
			a.Release()
		}
	}
	checkKept(t, src, mem)
	mem.AssertSize(t, 0)
}

// TestScanDifferentialBig crosses many chunk boundaries in parallel.
func TestScanDifferentialBig(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var sb strings.Builder
	sb.WriteString("\ufeffid,price,when,name,flag\n")
	for i := range 60_000 {
		fmt.Fprintf(&sb, "%d,%d.%02d,2024-%02d-%02dT10:00:%02d,", i, r.IntN(100), r.IntN(100), 1+r.IntN(12), 1+r.IntN(28), r.IntN(60))
		switch r.IntN(10) {
		case 0:
			sb.WriteString(`"multi` + "\n" + `line, ""quoted"""`)
		case 1:
		default:
			sb.WriteString([]string{"north", "Երևան", "café"}[r.IntN(3)])
		}
		sb.WriteString([]string{",true\n", ",\r\n", ",FALSE\n"}[r.IntN(3)])
	}
	for _, name := range []string{"big.csv", "big.csv.gz"} {
		src, ref, rerr, ferr := openBoth(t, name, sb.String())
		if rerr != nil || ferr != nil {
			t.Fatal(rerr, ferr)
		}
		if !reflect.DeepEqual(src.kinds, ref.kinds) || src.rows != ref.rows {
			t.Fatalf("inference %v %d, reference %v %d", src.kinds, src.rows, ref.kinds, ref.rows)
		}
		src.size = chunk.ParallelMin * 2 // force several workers
		keptMem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		checkKept(t, src, keptMem)
		keptMem.AssertSize(t, 0)
		for _, batch := range []int{0, 1000} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			frr, err := src.Scan(context.Background(), catalog.ScanOptions{BatchSize: batch, Alloc: mem})
			if err != nil {
				t.Fatal(err)
			}
			got, gerr := readAll(t, frr)
			rrr, _ := src.scanReference(context.Background(), catalog.ScanOptions{BatchSize: batch})
			want, werr := readAll(t, rrr)
			if gerr != nil || werr != nil {
				t.Fatal(gerr, werr)
			}
			for i := range want {
				if !sameArray(got[i], want[i]) {
					t.Fatalf("%s column %d differs", name, i)
				}
				got[i].Release()
				want[i].Release()
			}
			mem.AssertSize(t, 0)
		}
	}
}

// TestFastFallsBackForErrors: files the tokenizer rejects get the
// reference reader's message.
func TestFastFallsBackForErrors(t *testing.T) {
	for _, text := range []string{"a,b\n1,2\n3\n", "a,b\n1,x\"y\n", "a,b\n1,\"abc\n", "a,b\n1,caf\xe9\n"} {
		_, ref, rerr, ferr := openBoth(t, "x.csv", text)
		_ = ref
		if rerr == nil || ferr == nil {
			t.Fatalf("%q: errors %v %v", text, rerr, ferr)
		}
		_, err := inferCSVFast(context.Background(), fileAt(filepath.Join(t.TempDir(), "missing.csv")), false, ',', 0, nil, catalog.Limits{})
		if err == nil {
			t.Fatal("missing file accepted")
		}
	}
	root := t.TempDir()
	p := filepath.Join(root, "r.csv")
	os.WriteFile(p, []byte("a,b\n1,2\n3\n"), 0o644)
	_, err := inferCSVFast(context.Background(), fileAt(p), false, ',', 10, nil, catalog.Limits{})
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("error %v, want the reference message with line 3", err)
	}
}

func TestParseFastPathsMatchStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 200_000 {
		var s string
		switch r.IntN(4) {
		case 0:
			s = fmt.Sprintf("%d.%0*d", r.IntN(100000), r.IntN(8), r.IntN(10000000))
		case 1:
			s = fmt.Sprint(r.Int64())
		case 2:
			s = fmt.Sprint(r.Float64() * float64(r.IntN(1e9)))
		default:
			b := make([]byte, r.IntN(6))
			for i := range b {
				b[i] = "0123456789.-+e"[r.IntN(14)]
			}
			s = string(b)
		}
		f, ok := parseFloat64Bytes([]byte(s))
		if ok != infer.IsFloat(s) && !strings.ContainsAny(s, "xX_") {
			if _, err := parseFloatRef(s); (err == nil) != ok {
				t.Fatalf("%q: ok %v", s, ok)
			}
		}
		if ref, err := parseFloatRef(s); err == nil && (!ok || ref != f) {
			t.Fatalf("%q: %v %v, strconv %v", s, f, ok, ref)
		}
		if validDecimal([]byte(s)) && !infer.IsFloat(s) || validInt([]byte(s)) && !infer.IsInt(s) {
			t.Fatalf("validDecimal/validInt(%q) accept what isFloat/isInt reject", s)
		}
		if isFloatBytes([]byte(s)) != infer.IsFloat(s) {
			t.Fatalf("isFloatBytes(%q) != isFloat", s)
		}
		if isIntBytes([]byte(s)) != infer.IsInt(s) {
			t.Fatalf("isIntBytes(%q) != isInt", s)
		}
		if v, ok := parseInt64Bytes([]byte(s)); ok != (parseIntRef(s) == nil) || (ok && v != mustInt(s)) {
			t.Fatalf("parseInt64Bytes(%q) = %v %v", s, v, ok)
		}
	}
	for _, s := range []string{"2024-02-29", "2023-02-29", "0000-01-01", "9999-12-31", "1969-12-31", "2024-13-01", "2024-00-10", "2024-1-01", "20240101xx"} {
		d, ok := infer.ParseDateBytes([]byte(s))
		if ok != infer.IsDate(s) {
			t.Fatalf("parseDateBytes(%q) ok %v", s, ok)
		}
		if ok {
			tm, _ := timeParseDate(s)
			if int32(arrow.Date32FromTime(tm)) != d {
				t.Fatalf("parseDateBytes(%q) = %d want %d", s, d, arrow.Date32FromTime(tm))
			}
		}
	}
	for _, s := range []string{"2024-02-29T23:59:59", "1969-12-31 23:59:59", "0001-01-01T00:00:00", "2023-02-29T00:00:00", "2024-01-01T24:00:00"} {
		ms, ok := parseNaiveTSFast([]byte(s))
		if validNaiveTS([]byte(s)) != ok {
			t.Fatalf("validNaiveTS(%q) != parseNaiveTSFast", s)
		}
		rms, zoned, rok := infer.ParseTimestamp(s)
		if ok != rok || zoned || (ok && ms != rms) {
			t.Fatalf("parseNaiveTSFast(%q) = %d %v, parseTimestamp %d %v", s, ms, ok, rms, rok)
		}
	}
}

func TestMergeKindsMatchesWiden(t *testing.T) {
	cells := []string{"1", "-3", "2.5", "1e999", "true", "FALSE", "2024-01-01", "2024-01-01T00:00:00", "2024-01-01T00:00:00Z", "x", "NaN",
		"007", "+1", "-0", "1e3", "12345678901234567", "99999999999999999999", "100000000000000000000", "0.30000000000000000001",
		"01/02/2015", "13/01/2015", "01/13/2015", "01/02/2015 10:00", "13/01/2015 10:00", "2015/01/31", "Jan 1 2000"}
	r := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		seq := make([]string, r.IntN(8))
		for i := range seq {
			seq[i] = cells[r.IntN(len(cells))]
		}
		cut := 0
		if len(seq) > 0 {
			cut = r.IntN(len(seq) + 1)
		}
		fold := func(cs []string) infer.Kind {
			k := infer.KindNull
			for _, c := range cs {
				k = widenBytes(k, []byte(c))
			}
			return k
		}
		if got, want := mergeKinds(fold(seq[:cut]), fold(seq[cut:])), func() infer.Kind {
			k := infer.KindNull
			for _, c := range seq {
				k = infer.Widen(k, c)
			}
			return k
		}(); got != want {
			t.Fatalf("%q cut %d: merged %d, sequential %d", seq, cut, got, want)
		}
	}
}

// sameArray is array.Equal with NaN equal to NaN (bitwise float equality).
func sameArray(a, b arrow.Array) bool {
	fa, ok1 := a.(*array.Float64)
	fb, ok2 := b.(*array.Float64)
	if !ok1 || !ok2 {
		return array.Equal(a, b)
	}
	if fa.Len() != fb.Len() || fa.NullN() != fb.NullN() {
		return false
	}
	for i := range fa.Len() {
		if fa.IsNull(i) != fb.IsNull(i) || (!fa.IsNull(i) && math.Float64bits(fa.Value(i)) != math.Float64bits(fb.Value(i))) {
			return false
		}
	}
	return true
}

func parseFloatRef(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

func parseIntRef(s string) error {
	_, err := strconv.ParseInt(s, 10, 64)
	return err
}

func mustInt(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

func timeParseDate(s string) (time.Time, error) { return time.Parse("2006-01-02", s) }

// FuzzTokenizer checks the fast tokenizer against encoding/csv on any input
// (header width taken from the reference), with small chunks.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a,b\n\"x\ny\",\"\"\"\"\r\n", "a\n\r", "a,b\n1,x\"y\n", "\ufeffa;b\n1;2"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunkSel uint8) {
		text := string(data)
		want, werr := refRecords(text, ',')
		ncols := 1
		if werr == nil && len(want) > 0 {
			ncols = len(want[0])
		}
		got, gerr := fastRecords(text, ',', ncols, []int{1, 5, 64, 4096}[chunkSel%4])
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("reference err %v, fast err %v", werr, gerr)
		}
		if werr == nil && len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// TestStringBuilderUTF8: cells are validated one by one even though the
// check runs over their concatenation.
func TestStringBuilderUTF8(t *testing.T) {
	for _, tc := range []struct {
		cells []string
		ok    bool
	}{
		{[]string{"a", "é", "Երևան", ""}, true},
		{[]string{"a\xc3", "\xa9b"}, false}, // "é" split across two cells
		{[]string{"\xc3", "\xa9"}, false},
		{[]string{"ok", "caf\xe9"}, false},
		{[]string{"ok", "\xe2\x82"}, false},
	} {
		var sb strings.Builder
		sb.WriteString("h\n")
		for _, c := range tc.cells {
			sb.WriteString(c + "\n")
		}
		b := []byte(sb.String())
		tok := newTokenizer(',', 1, []int{0})
		if err := tok.run(b, true); err != nil {
			t.Fatal(err)
		}
		sbld := newStringBuilder(memory.DefaultAllocator, tok.rows, true)
		var scratch []byte
		err := sbld.add(tok.spansOf(b, 0), &scratch)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v", tc.cells, err)
		}
		sbld.release()
	}
}

func TestStrDict(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var d strDict
	d.init(4)
	ref := map[string]int32{}
	for range 200_000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = "ab\x00\xff"[r.IntN(4)]
		}
		if r.IntN(3) == 0 && len(b) > 2 {
			b = b[:2+r.IntN(2)] // many short values
		}
		got := d.code(b)
		want, ok := ref[string(b)]
		if !ok {
			want = int32(len(ref))
			ref[string(b)] = want
		}
		if got != want {
			t.Fatalf("code(%q) = %d, want %d", b, got, want)
		}
	}
	for s, c := range ref {
		if v := string(d.vals[d.offs[c]:d.offs[c+1]]); v != s {
			t.Fatalf("value %d = %q, want %q", c, v, s)
		}
	}
}

func TestNaiveTSFastRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for range 300_000 {
		b := []byte(fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", r.IntN(10000), r.IntN(14), r.IntN(33), r.IntN(26), r.IntN(62), r.IntN(62)))
		if r.IntN(3) == 0 {
			b[r.IntN(19)] = "0123456789-:T x\xff/"[r.IntN(17)]
		}
		ms, ok := parseNaiveTSFast(b)
		rms, zoned, rok := infer.ParseTimestamp(string(b))
		if ok != (rok && !zoned) || (ok && ms != rms) {
			t.Fatalf("parseNaiveTSFast(%q) = %d %v, parseTimestamp %d %v", b, ms, ok, rms, rok)
		}
	}
}

func TestParse8Digits(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for range 100_000 {
		b := []byte(fmt.Sprintf("%08d", r.IntN(100_000_000)))
		if r.IntN(4) == 0 {
			b[r.IntN(8)] = byte(r.IntN(256))
		}
		got, ok := parse8Digits(load64(b, 0))
		want, err := strconv.ParseUint(string(b), 10, 64)
		digitsOnly := true
		for _, c := range b {
			digitsOnly = digitsOnly && c >= '0' && c <= '9'
		}
		if ok != digitsOnly || (ok && (err != nil || got != want)) {
			t.Fatalf("parse8Digits(%q) = %d %v, want %d", b, got, ok, want)
		}
	}
}
