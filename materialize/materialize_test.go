package materialize

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
)

func TestCapsDefaults(t *testing.T) {
	m := New(Config{})
	want := Caps{MaxRows: 200, MaxBytes: 65536, MaxCells: 10000, PageRows: 200, MaxCellChars: 2000}
	if got := m.Caps(); got != want {
		t.Fatalf("Caps() = %+v, want %+v", got, want)
	}
	m = New(Config{Hard: Caps{MaxRows: 5, MaxBytes: -1, PageRows: 7, MaxCellChars: 9}})
	want = Caps{MaxRows: 5, MaxBytes: 65536, MaxCells: 10000, PageRows: 7, MaxCellChars: 9}
	if got := m.Caps(); got != want {
		t.Fatalf("Caps() = %+v, want %+v", got, want)
	}
}

func TestDeliverDecision(t *testing.T) {
	// idTable rows are ~45 bytes of JSON each.
	cases := []struct {
		name   string
		rows   int
		hard   Caps
		format string
		method string
	}{
		{"fits/json", 50, Caps{}, "", MethodDirect},
		{"fits/csv", 50, Caps{}, "csv", MethodFile},
		{"fits/parquet", 50, Caps{}, "parquet", MethodFile},
		{"empty/json", 0, Caps{}, "json", MethodDirect},
		{"empty/parquet", 0, Caps{}, "parquet", MethodFile},
		{"rows-exceeded/json", 201, Caps{}, "json", MethodHandle},
		{"rows-exceeded/csv", 201, Caps{}, "csv", MethodFile},
		{"rows-exceeded/parquet", 201, Caps{}, "parquet", MethodFile},
		{"cells-exceeded/json", 40, Caps{MaxCells: 100}, "", MethodHandle},
		{"cells-exceeded/csv", 40, Caps{MaxCells: 100}, "csv", MethodFile},
		{"cells-exceeded/parquet", 40, Caps{MaxCells: 100}, "parquet", MethodFile},
		{"bytes-exceeded/json", 40, Caps{MaxBytes: 1000}, "json", MethodHandle},
		{"bytes-exceeded/csv", 40, Caps{MaxBytes: 1000}, "csv", MethodFile},
		{"bytes-exceeded/parquet", 40, Caps{MaxBytes: 1000}, "parquet", MethodFile},
		{"exactly-at-caps", 200, Caps{MaxCells: 600, MaxBytes: 1 << 20}, "", MethodDirect},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc(t)
			f := newFixture(t, tc.hard)
			tbl := idTable(t, alloc, tc.rows, 17)
			defer tbl.Release()
			res, err := f.m.Deliver(ctx(), tbl, Request{Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, res)
			if res.Method != tc.method {
				t.Fatalf("method = %s, want %s (warnings %q)", res.Method, tc.method, res.Warnings)
			}
			if res.TotalRows != int64(tc.rows) {
				t.Errorf("total_rows = %d, want %d", res.TotalRows, tc.rows)
			}
			caps := f.m.Caps()
			switch res.Method {
			case MethodDirect:
				if res.RowCount != int64(tc.rows) || res.Truncated || res.Format != "json" {
					t.Errorf("direct: %+v", res)
				}
				if got := ids(t, res.Data); len(got) != tc.rows {
					t.Errorf("direct data has %d rows", len(got))
				}
				if int64(len(res.Data)) > caps.MaxBytes {
					t.Errorf("direct data is %d bytes > %d", len(res.Data), caps.MaxBytes)
				}
			case MethodFile:
				if res.RowCount != int64(tc.rows) || res.Truncated || res.Format != tc.format {
					t.Errorf("file: %+v", res)
				}
				if res.ResourceURI == "" || res.SizeBytes == 0 || res.MIMEType == "" || len(res.Columns) != 3 {
					t.Errorf("file fields missing: %+v", res)
				}
				if got := ids(t, res.Preview); len(got) != min(tc.rows, 10) || tc.rows > 0 && !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
					t.Errorf("preview ids %v", got)
				}
				if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], res.ResourceURI) ||
					!strings.Contains(res.Warnings[0], "read_result") || !strings.Contains(res.Warnings[0], strconv.Itoa(tc.rows)+" rows") {
					t.Errorf("file warning %q", res.Warnings)
				}
				a, err := f.store.Get(res.ResourceURI, "")
				if err != nil || a.Size != res.SizeBytes {
					t.Errorf("artifact %v %+v", err, a)
				}
				if got := readFileIDs(t, a.Path, tc.format); len(got) != tc.rows {
					t.Errorf("file holds %d rows, want %d", len(got), tc.rows)
				}
			case MethodHandle:
				if !res.Truncated || res.ResultHandle == "" || res.PageInfo == nil || !res.PageInfo.HasMore {
					t.Errorf("handle: %+v", res)
				}
				got := ids(t, res.Data)
				if int64(len(got)) != res.RowCount || res.RowCount == 0 || res.RowCount > caps.PageRows {
					t.Errorf("page rows %d (data %d)", res.RowCount, len(got))
				}
				if res.RowCount*3 > caps.MaxCells || int64(len(res.Data)) > caps.MaxBytes {
					t.Errorf("page over caps: %d rows, %d bytes", res.RowCount, len(res.Data))
				}
				last := res.Warnings[len(res.Warnings)-1]
				want := fmt.Sprintf("showing rows 1–%d of %d; call query_next_page", res.RowCount, tc.rows)
				if !strings.HasPrefix(last, want) || !strings.Contains(last, "output_format=parquet") {
					t.Errorf("warning %q, want prefix %q", last, want)
				}
			}
		})
	}
}

func TestDeliverReasons(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{MaxCells: 100, MaxBytes: 500})
	tbl := idTable(t, alloc, 300, 100)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings, "\n")
	for _, s := range []string{"300 rows", "max_rows 200", "max_cells 100"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q lack %q", w, s)
		}
	}
}

func TestPerCallCaps(t *testing.T) {
	cases := []struct {
		name      string
		req       Request
		rows      int
		method    string
		pageRows  int64
		warnClamp string
	}{
		{"lower-rows", Request{MaxRows: 10}, 50, MethodHandle, 10, ""},
		{"lower-rows-fits", Request{MaxRows: 60}, 50, MethodDirect, 0, ""},
		{"raise-rows-clamped", Request{MaxRows: 1000}, 300, MethodHandle, 200, "max_rows 1000 is above the server cap of 200"},
		{"lower-bytes", Request{MaxBytes: 300}, 50, MethodHandle, -1, ""},
		{"raise-bytes-clamped", Request{MaxBytes: 1 << 30}, 50, MethodDirect, 0, "max_bytes 1073741824 is above the server cap of 65536"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc(t)
			f := newFixture(t, Caps{})
			tbl := idTable(t, alloc, tc.rows, 64)
			defer tbl.Release()
			res, err := f.m.Deliver(ctx(), tbl, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, res)
			if res.Method != tc.method {
				t.Fatalf("method %s, want %s", res.Method, tc.method)
			}
			if tc.pageRows > 0 && res.RowCount != tc.pageRows {
				t.Errorf("page rows %d, want %d", res.RowCount, tc.pageRows)
			}
			if tc.req.MaxBytes > 0 && tc.req.MaxBytes < 65536 && int64(len(res.Data)) > tc.req.MaxBytes {
				t.Errorf("data %d bytes > per-call %d", len(res.Data), tc.req.MaxBytes)
			}
			clamped := false
			for _, w := range res.Warnings {
				if tc.warnClamp != "" && strings.Contains(w, tc.warnClamp) {
					clamped = true
				}
			}
			if (tc.warnClamp != "") != clamped {
				t.Errorf("warnings %q, want clamp warning %q", res.Warnings, tc.warnClamp)
			}
			if f.m.Caps() != (Caps{}).withDefaults() {
				t.Errorf("per-call caps changed the hard caps")
			}
		})
	}
	t.Run("negative", func(t *testing.T) {
		alloc := newAlloc(t)
		f := newFixture(t, Caps{})
		tbl := idTable(t, alloc, 5, 5)
		defer tbl.Release()
		for _, req := range []Request{{MaxRows: -1}, {MaxBytes: -5}} {
			_, err := f.m.Deliver(ctx(), tbl, req)
			if qerr.Code(err) != qerr.CodeInvalidArgument {
				t.Errorf("%+v: err %v", req, err)
			}
		}
	})
}

func TestUnsupportedFormat(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{})
	tbl := idTable(t, alloc, 500, 100)
	defer tbl.Release()
	for _, format := range []string{"arrow", "xml", "PARQUETX"} {
		_, err := f.m.Deliver(ctx(), tbl, Request{Format: format})
		if !errors.Is(err, qerr.ErrUnsupported) || qerr.Code(err) != qerr.CodeUnsupportedFormat {
			t.Errorf("%s: %v", format, err)
		}
		if err != nil && !strings.Contains(qerr.As(err).Hint, "parquet") {
			t.Errorf("hint %q does not list the formats", qerr.As(err).Hint)
		}
		if err != nil && !strings.Contains(qerr.As(err).Hint, "--enable-arrow-ipc") {
			t.Errorf("hint %q does not name the arrow flag", qerr.As(err).Hint)
		}
	}
	res, err := f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.m.NextPage(ctx(), res.ResultHandle, res.PageInfo.PageToken, "arrow", "")
	if qerr.Code(err) != qerr.CodeUnsupportedFormat {
		t.Errorf("NextPage arrow: %v", err)
	}
}

// walk pages through a handle result from res, using formats[i] for the
// i-th NextPage call (cycling; "" = token format), and returns every id seen.
func walk(t *testing.T, f *fixture, res *Result, formats []string) []int64 {
	t.Helper()
	all := ids(t, res.Data)
	handle := res.ResultHandle
	expectOffset := res.RowCount
	current := "json"
	for i := 0; res.PageInfo.HasMore; i++ {
		if i > 100000 {
			t.Fatal("page walk does not end")
		}
		format := formats[i%len(formats)]
		next, err := f.m.NextPage(ctx(), handle, res.PageInfo.PageToken, format, "")
		if format == "" { // the token's format: the previous page's
			format = current
		}
		current = format
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		checkInvariants(t, next)
		if next.PageInfo.Offset != expectOffset || next.TotalRows != res.TotalRows || next.ResultHandle != handle {
			t.Fatalf("page %d: offset %d want %d; %+v", i, next.PageInfo.Offset, expectOffset, next.PageInfo)
		}
		var got []int64
		switch format {
		case "csv", "parquet", "arrow":
			if next.Method != MethodFile || next.Format != format {
				t.Fatalf("page %d: method %s format %s", i, next.Method, next.Format)
			}
			a, err := f.store.Get(next.ResourceURI, "")
			if err != nil {
				t.Fatal(err)
			}
			got = readFileIDs(t, a.Path, format)
			if pv := ids(t, next.Preview); len(pv) == 0 || pv[0] != expectOffset {
				t.Errorf("preview %v does not start at %d", pv, expectOffset)
			}
		default:
			if next.Method != MethodHandle || next.Format != "json" {
				t.Fatalf("page %d: method %s", i, next.Method)
			}
			got = ids(t, next.Data)
			caps := f.m.Caps()
			if (int64(len(next.Data)) > caps.MaxBytes && next.RowCount > 1) || next.RowCount > caps.PageRows || next.RowCount*3 > caps.MaxCells {
				t.Errorf("page %d over caps: %d bytes, %d rows", i, len(next.Data), next.RowCount)
			}
		}
		if int64(len(got)) != next.RowCount || next.RowCount == 0 {
			t.Fatalf("page %d: %d rows, row_count %d", i, len(got), next.RowCount)
		}
		all = append(all, got...)
		expectOffset += next.RowCount
		res = next
	}
	if res.Truncated {
		t.Errorf("last page truncated")
	}
	return all
}

func checkContiguous(t *testing.T, got []int64, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("collected %d rows, want %d", len(got), n)
	}
	for i, id := range got {
		if id != int64(i) {
			t.Fatalf("row %d has id %d", i, id)
		}
	}
}

func TestPageWalk(t *testing.T) {
	for _, hard := range []Caps{{}, {PageRows: 333, MaxBytes: 4000}, {MaxCells: 150}} {
		t.Run(fmt.Sprintf("%+v", hard), func(t *testing.T) {
			alloc := newAlloc(t)
			f := newFixture(t, hard)
			tbl := idTable(t, alloc, 10_001, 997)
			defer tbl.Release()
			res, err := f.m.Deliver(ctx(), tbl, Request{})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, res)
			if res.Method != MethodHandle {
				t.Fatalf("method %s", res.Method)
			}
			checkContiguous(t, walk(t, f, res, []string{""}), 10_001)
		})
	}
}

func TestPageSwitchFormat(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{PageRows: 1000})
	tbl := idTable(t, alloc, 10_001, 4096)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	checkContiguous(t, walk(t, f, res, []string{"", "csv", "", "parquet", "parquet", ""}), 10_001)

	// A file page's token keeps the file format when format is "".
	res, err = f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.m.NextPage(ctx(), res.ResultHandle, res.PageInfo.PageToken, "csv", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.RowCount != 1000 || p.Warnings == nil || !strings.Contains(p.Warnings[0], p.ResourceURI) {
		t.Errorf("csv page: %+v", p)
	}
	p2, err := f.m.NextPage(ctx(), res.ResultHandle, p.PageInfo.PageToken, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if p2.Method != MethodFile || p2.Format != "csv" || p2.PageInfo.Offset != p.PageInfo.Offset+p.RowCount {
		t.Errorf("page after csv: %s %s %+v", p2.Method, p2.Format, p2.PageInfo)
	}
}

func TestDeterministicPages(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{MaxBytes: 3000})
	tbl := idTable(t, alloc, 5000, 333)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	tok := res.PageInfo.PageToken
	var first []byte
	for i := range 3 {
		p, err := f.m.NextPage(ctx(), res.ResultHandle, tok, "", "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("same token, different pages:\n%s\n%s", first, b)
		}
	}
}

func TestLastPage(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{})
	tbl := idTable(t, alloc, 250, 100)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.m.NextPage(ctx(), res.ResultHandle, res.PageInfo.PageToken, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.RowCount != 50 || p.Truncated || p.PageInfo.HasMore || p.PageInfo.PageToken != "" || p.PageInfo.Offset != 200 {
		t.Errorf("last page: %+v %+v", p, p.PageInfo)
	}
	b, _ := json.Marshal(p)
	if strings.Contains(string(b), "page_token") {
		t.Errorf("last page carries a token: %s", b)
	}
}

func TestPageTokenErrors(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{})
	tbl := idTable(t, alloc, 1000, 100)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.m.Deliver(ctx(), tbl, Request{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	tok := res.PageInfo.PageToken
	tampered := []byte(tok)
	tampered[3] ^= 1
	cases := []struct {
		name, handle, token, principal, code string
	}{
		{"tampered", res.ResultHandle, string(tampered), "alice", qerr.CodeInvalidPageToken},
		{"empty", res.ResultHandle, "", "alice", qerr.CodeInvalidPageToken},
		{"garbage", res.ResultHandle, "not-a-token", "alice", qerr.CodeInvalidPageToken},
		{"other-handle", other.ResultHandle, tok, "alice", qerr.CodeInvalidPageToken},
		{"past-end", res.ResultHandle, f.reg.Sign(handles.Token{Handle: res.ResultHandle, Offset: 1000, Size: 200, Format: "json"}), "alice", qerr.CodeInvalidPageToken},
		{"zero-size", res.ResultHandle, f.reg.Sign(handles.Token{Handle: res.ResultHandle, Offset: 10, Size: 0, Format: "json"}), "alice", qerr.CodeInvalidPageToken},
		{"unknown-handle", "h_nope", f.reg.Sign(handles.Token{Handle: "h_nope", Offset: 10, Size: 10, Format: "json"}), "alice", qerr.CodeHandleExpired},
		{"other-principal", res.ResultHandle, tok, "bob", qerr.CodeHandleExpired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.m.NextPage(ctx(), tc.handle, tc.token, "", tc.principal)
			if got := qerr.Code(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		if _, err := f.m.NextPage(ctx(), res.ResultHandle, tok, "", "alice"); err != nil {
			t.Fatal(err)
		}
		f.now = f.now.Add(2 * time.Minute)
		_, err := f.m.NextPage(ctx(), res.ResultHandle, tok, "", "alice")
		if qerr.Code(err) != qerr.CodeHandleExpired || !errors.Is(err, qerr.ErrExpired) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestOversizeRow(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{MaxBytes: 1000})
	big := strings.Repeat("x", 3000)
	tbl := tableOf(t, []string{"id", "s"},
		fromJSON(t, alloc, arrow.PrimitiveTypes.Int64, `[0,1,2]`),
		fromJSON(t, alloc, arrow.BinaryTypes.String, `["`+big+`","`+big+`","`+big+`"]`))
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if res.Method != MethodHandle || res.RowCount != 1 {
		t.Fatalf("%s %d", res.Method, res.RowCount)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "row 1 alone is") {
		t.Errorf("no oversize warning: %q", res.Warnings)
	}
	checkContiguous(t, walk(t, f, res, []string{""}), 3)
}

func TestNoStores(t *testing.T) {
	alloc := newAlloc(t)
	m := New(Config{})
	tbl := idTable(t, alloc, 500, 100)
	defer tbl.Release()
	for _, format := range []string{"json", "csv", "parquet"} {
		_, err := m.Deliver(ctx(), tbl, Request{Format: format})
		if qerr.Code(err) != qerr.CodeInternal {
			t.Errorf("%s: %v", format, err)
		}
	}
	if _, err := m.NextPage(ctx(), "h", "t", "", ""); qerr.Code(err) != qerr.CodeInternal {
		t.Errorf("NextPage: %v", err)
	}
	res, err := m.Deliver(ctx(), tbl, Request{MaxRows: 1000, MaxBytes: 1 << 20})
	if err == nil {
		t.Errorf("expected an error (clamped caps), got %s", res.Method)
	}
}

func TestDeliverCancelled(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{})
	tbl := idTable(t, alloc, 10_000, 1000)
	defer tbl.Release()
	c, cancel := context.WithCancel(ctx())
	cancel()
	for _, format := range []string{"json", "csv", "parquet"} {
		_, err := f.m.Deliver(c, tbl, Request{Format: format})
		if qerr.Code(err) != qerr.CodeCancelled {
			t.Errorf("%s: %v", format, err)
		}
	}
	if n := f.reg.Len(); n != 0 {
		t.Errorf("%d handles left after cancelled deliveries", n)
	}
}

// readFileIDs reads the id column of a parquet or csv artifact.
func readFileIDs(t *testing.T, path, format string) []int64 {
	t.Helper()
	var out []int64
	switch format {
	case "csv":
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		recs, err := csv.NewReader(fh).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 || recs[0][0] != "id" {
			t.Fatalf("csv header %v", recs)
		}
		for _, r := range recs[1:] {
			n, err := strconv.ParseInt(r[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
	case "arrow":
		out = readArrowIDs(t, path)
	case "parquet":
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		st, _ := fh.Stat()
		pf, err := parquet.OpenFile(fh, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		r := parquet.NewReader(pf)
		defer r.Close()
		rows := make([]parquet.Row, 100)
		for {
			n, err := r.ReadRows(rows)
			for _, row := range rows[:n] {
				out = append(out, row[0].Int64())
			}
			if err != nil {
				break
			}
		}
	}
	return out
}

func TestCollect(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		alloc := newAlloc(t)
		src := idTable(t, alloc, 1000, 300)
		batches := sliceBatches(t, src, 0, 1000)
		src.Release()
		rr, err := array.NewRecordReader(idSchema, batches)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			b.Release()
		}
		tbl, err := Collect(ctx(), rr)
		rr.Release()
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Release()
		if tbl.NumRows() != 1000 || tbl.NumCols() != 3 || tbl.SizeBytes() <= 0 {
			t.Fatalf("rows %d cols %d size %d", tbl.NumRows(), tbl.NumCols(), tbl.SizeBytes())
		}
		pv, err := Preview(tbl, 3)
		if err != nil {
			t.Fatal(err)
		}
		if want := `[{"id":0,"name":"row-0","score":0},{"id":1,"name":"row-1","score":0.5},{"id":2,"name":"row-2","score":1}]`; string(pv) != want {
			t.Errorf("preview %s", pv)
		}
	})
	t.Run("reader-error", func(t *testing.T) {
		alloc := newAlloc(t)
		src := idTable(t, alloc, 1000, 300)
		defer src.Release()
		rr := &failingReader{batches: sliceBatches(t, src, 0, 1000), failAt: 2, err: qerr.Internal(errors.New("disk"), "read failed")}
		defer rr.Release()
		tbl, err := Collect(ctx(), rr)
		if err == nil || tbl != nil || qerr.Code(err) != qerr.CodeInternal {
			t.Fatalf("tbl %v err %v", tbl, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		alloc := newAlloc(t)
		src := idTable(t, alloc, 1000, 300)
		defer src.Release()
		c, cancel := context.WithCancel(ctx())
		rr := &failingReader{batches: sliceBatches(t, src, 0, 1000), failAt: -1, onNext: func(i int) {
			if i == 2 {
				cancel()
			}
		}}
		defer rr.Release()
		tbl, err := Collect(c, rr)
		if tbl != nil || qerr.Code(err) != qerr.CodeCancelled {
			t.Fatalf("tbl %v err %v", tbl, err)
		}
	})
}

// failingReader yields batches and fails (Err) after failAt of them.
type failingReader struct {
	batches []arrow.RecordBatch
	i       int
	failAt  int
	err     error
	onNext  func(int)
	cur     arrow.RecordBatch
}

func (r *failingReader) Retain() {}
func (r *failingReader) Release() {
	for _, b := range r.batches {
		b.Release()
	}
	r.batches = nil
}
func (r *failingReader) Schema() *arrow.Schema { return idSchema }
func (r *failingReader) Next() bool {
	if r.onNext != nil {
		r.onNext(r.i)
	}
	if r.i == r.failAt || r.i >= len(r.batches) {
		return false
	}
	r.cur = r.batches[r.i]
	r.i++
	return true
}
func (r *failingReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *failingReader) Record() arrow.RecordBatch      { return r.cur }
func (r *failingReader) Err() error {
	if r.i == r.failAt {
		return r.err
	}
	return nil
}

func TestTableSlice(t *testing.T) {
	alloc := newAlloc(t)
	tbl := idTable(t, alloc, 100, 30) // batches 30,30,30,10
	defer tbl.Release()
	cases := []struct {
		off, n int64
		want   []int64 // batch lengths
	}{
		{0, 100, []int64{30, 30, 30, 10}},
		{0, 1000, []int64{30, 30, 30, 10}},
		{25, 10, []int64{5, 5}},
		{30, 30, []int64{30}},
		{99, 5, []int64{1}},
		{100, 5, nil},
		{-5, 10, []int64{10}},
		{10, 0, nil},
	}
	for _, tc := range cases {
		bs := sliceBatches(t, tbl, tc.off, tc.n)
		var lens []int64
		first := int64(-1)
		for i, b := range bs {
			lens = append(lens, b.NumRows())
			if i == 0 {
				first = b.Column(0).(*array.Int64).Value(0)
			}
			b.Release()
		}
		if !slices.Equal(lens, tc.want) {
			t.Errorf("Slice(%d,%d) = %v, want %v", tc.off, tc.n, lens, tc.want)
		}
		if len(bs) > 0 && first != max(tc.off, 0) {
			t.Errorf("Slice(%d,%d) starts at id %d", tc.off, tc.n, first)
		}
	}
	tbl.Retain()
	tbl.Release()
	if tbl.NumRows() != 100 {
		t.Fatal("rows")
	}
}

func TestColumnNames(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32},
		{Name: "a", Type: arrow.PrimitiveTypes.Int32},
		{Name: "", Type: arrow.PrimitiveTypes.Int32},
		{Name: "a_2", Type: arrow.PrimitiveTypes.Int32},
		{Name: "column_3", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	got := ColumnNames(s)
	want := []string{"a", "a_3", "column_3_2", "a_2", "column_3"}
	if !slices.Equal(got, want) {
		t.Fatalf("ColumnNames = %q, want %q", got, want)
	}
}

func TestSinglePageHandle(t *testing.T) {
	alloc := newAlloc(t)
	f := newFixture(t, Caps{MaxRows: 10, PageRows: 100})
	tbl := idTable(t, alloc, 50, 50)
	defer tbl.Release()
	res, err := f.m.Deliver(ctx(), tbl, Request{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if res.Method != MethodHandle || res.RowCount != 50 || res.Truncated || res.PageInfo.HasMore || res.PageInfo.PageToken != "" {
		t.Fatalf("%+v %+v", res, res.PageInfo)
	}
	if w := res.Warnings[len(res.Warnings)-1]; !strings.Contains(w, "all 50 rows") {
		t.Errorf("warning %q", w)
	}
}
