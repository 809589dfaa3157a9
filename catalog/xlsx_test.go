package catalog_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/xuri/excelize/v2"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// xlsxBytes builds a workbook with fill and returns its bytes.
func xlsxBytes(t testing.TB, fill func(f *excelize.File)) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	fill(f)
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sampleWorkbook: sheet "Sales" with a blank leading row, a header, zip
// codes as text, integers, floats, booleans, dates and timestamps in date
// formats, a merged group label and an error cell; sheet "raw" of numbers
// without a header; an empty sheet.
func sampleWorkbook(t testing.TB) []byte {
	return xlsxBytes(t, func(f *excelize.File) {
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(f.SetSheetName("Sheet1", "Sales"))
		sh := "Sales"
		must(f.SetSheetRow(sh, "B2", &[]any{"zip", "n", "x", "ok", "day", "when", "grp", "mixed", "err"}))
		dateStyle, err := f.NewStyle(&excelize.Style{NumFmt: 14})
		must(err)
		tsFmt := "yyyy-mm-dd hh:mm:ss"
		tsStyle, err := f.NewStyle(&excelize.Style{CustomNumFmt: &tsFmt})
		must(err)
		for i := range 4 {
			r := i + 3
			cell := func(col string) string { c, _ := excelize.JoinCellName(col, r); return c }
			must(f.SetCellStr(sh, cell("B"), []string{"00501", "10001", "02134", "99950"}[i]))
			must(f.SetCellInt(sh, cell("C"), int64(i*1000-1)))
			must(f.SetCellFloat(sh, cell("D"), float64(i)/4+0.1, -1, 64))
			must(f.SetCellBool(sh, cell("E"), i%2 == 0))
			must(f.SetCellValue(sh, cell("F"), time.Date(2015, 1, 31+i, 0, 0, 0, 0, time.UTC)))
			must(f.SetCellStyle(sh, cell("F"), cell("F"), dateStyle))
			must(f.SetCellValue(sh, cell("G"), time.Date(2015, 1, 1, 1+i, 30, 15, 0, time.UTC)))
			must(f.SetCellStyle(sh, cell("G"), cell("G"), tsStyle))
			if i%2 == 0 {
				must(f.SetCellValue(sh, cell("I"), i))
			} else {
				must(f.SetCellStr(sh, cell("I"), "n/a"))
			}
		}
		must(f.SetCellStr(sh, "H3", "north"))
		must(f.MergeCell(sh, "H3", "H4"))
		must(f.SetCellStr(sh, "H5", "south"))
		must(f.SetCellFormula(sh, "J3", "1/0"))
		must(f.SetCellStr(sh, "J4", "fine"))
		_, err = f.NewSheet("raw")
		must(err)
		must(f.SetSheetRow("raw", "A1", &[]any{1, 2.5}))
		must(f.SetSheetRow("raw", "A2", &[]any{3, 4.5}))
		_, err = f.NewSheet("empty")
		must(err)
	})
}

// TestXLSXDataset: each sheet with cells is a dataset file/sheet; header,
// blank rows and columns, merged cells, dates and the no-loss types.
func TestXLSXDataset(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	cattest.WriteRaw(t, root, "book.xlsx", string(sampleWorkbook(t)))
	cattest.WriteRaw(t, root, "~$book.xlsx", "lock")
	c := cattest.NewCatalog(t, root, catalog.NewXLSXFormat(catalog.Limits{}))
	if d := c.Diagnostics(); len(d) != 0 {
		t.Fatalf("diagnostics %v", d)
	}
	if n := len(c.Datasets()); n != 2 {
		t.Fatalf("%d datasets, want 2 (Sales, raw)", n)
	}
	ds := cattest.Lookup(t, c, "book/Sales")
	if ds.Kind != catalog.KindXLSX || ds.RowCount != 4 || !ds.RowCountExact || ds.Attributes["header_row"] != true {
		t.Fatalf("kind %s rows %d attrs %v", ds.Kind, ds.RowCount, ds.Attributes)
	}
	if got := cattest.FieldNames(ds.Schema); !reflect.DeepEqual(got, []string{"zip", "n", "x", "ok", "day", "when", "grp", "mixed", "err"}) {
		t.Fatalf("names %v", got)
	}
	want := []string{"utf8", "int64", "float64", "bool", "date32", "timestamp[ms]", "utf8", "utf8", "utf8"}
	if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, want) {
		t.Fatalf("types %v, want %v", got, want)
	}
	if h := ds.ColumnNotes["mixed"].Hint; !strings.Contains(h, "mixes Excel numbers and strings") {
		t.Errorf("mixed hint %q", h)
	}
	_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{Alloc: mem, BatchSize: 3})
	if cols[0][0] != "00501" || cols[0][2] != "02134" || cols[1][0] != int64(-1) || cols[2][1] != 0.35 || cols[3][0] != true ||
		cols[4][1] != "2015-02-01" || cols[5][3] != "2015-01-01T04:30:15.000" || cols[6][1] != "north" || cols[6][2] != "south" ||
		cols[6][3] != nil || cols[7][1] != "n/a" || cols[7][2] != "2" || cols[8][0] != nil || cols[8][1] != "fine" {
		t.Fatalf("values %v", cols)
	}
	raw := cattest.Lookup(t, c, "book/raw")
	if got := cattest.FieldNames(raw.Schema); raw.RowCount != 2 || !reflect.DeepEqual(got, []string{"A", "B"}) || raw.Attributes["header_row"] != false {
		t.Fatalf("raw: rows %d names %v", raw.RowCount, got)
	}
	_, cols = cattest.ScanAll(t, raw, catalog.ScanOptions{Alloc: mem, Columns: []string{"B"}})
	if cols[0][0] != 2.5 || cols[0][1] != 4.5 {
		t.Fatalf("raw values %v", cols)
	}
}

// TestXLSXBroken: files that are not workbooks, and a zip bomb, are
// diagnostics.
func TestXLSXBroken(t *testing.T) {
	good := sampleWorkbook(t)
	for _, tc := range []struct{ name, data, reason string }{
		{"text", "a,b\n1,2\n", "not a readable Excel workbook"},
		{"cut", string(good[:len(good)/2]), "not a readable Excel workbook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteRaw(t, root, "x.xlsx", tc.data)
			c := cattest.NewCatalog(t, root, catalog.NewXLSXFormat(catalog.Limits{}))
			d := c.Diagnostics()
			if len(c.Datasets()) != 0 || len(d) != 1 || !strings.Contains(d[0].Reason, tc.reason) {
				t.Fatalf("datasets %d diagnostics %v", len(c.Datasets()), d)
			}
		})
	}
	// A sheet of 200,000 repeated cells compresses far beyond the ratio limit.
	bomb := xlsxBytes(t, func(f *excelize.File) {
		sw, err := f.NewStreamWriter("Sheet1")
		if err != nil {
			t.Fatal(err)
		}
		row := make([]any, 20)
		for i := range row {
			row[i] = 0
		}
		for r := 1; r <= 10000; r++ {
			c, _ := excelize.CoordinatesToCellName(1, r)
			if err := sw.SetRow(c, row); err != nil {
				t.Fatal(err)
			}
		}
		if err := sw.Flush(); err != nil {
			t.Fatal(err)
		}
	})
	root := t.TempDir()
	cattest.WriteRaw(t, root, "bomb.xlsx", string(bomb))
	c := cattest.NewCatalog(t, root, catalog.NewXLSXFormat(catalog.Limits{MaxCompressionRatio: 2, MaxDecompressedBytes: 1 << 20}))
	if d := c.Diagnostics(); len(c.Datasets()) != 0 || len(d) != 1 || !strings.Contains(d[0].Reason, "unzips to more than") {
		t.Fatalf("bomb: datasets %d diagnostics %v", len(c.Datasets()), d)
	}
}

// TestXLSXMilliseconds: date-time serials keep their milliseconds
// (excelize's own conversion rounds to whole seconds, so 23:59:59.999
// became the next day), in both date systems and before 1900-03-01.
func TestXLSXMilliseconds(t *testing.T) {
	serials := []float64{45322.41666809028, 73050.99999998842, 25569.5, 22082.33333912037, 32.75}
	want := []any{"2024-01-31T10:00:00.123", "2099-12-31T23:59:59.999", "1970-01-01T12:00:00.000", "1960-06-15T08:00:00.500", "1900-02-01T18:00:00.000"}
	root := t.TempDir()
	for _, name := range []string{"d1900", "d1904"} {
		cattest.WriteRaw(t, root, name+".xlsx", string(xlsxBytes(t, func(f *excelize.File) {
			tsFmt := "yyyy-mm-dd hh:mm:ss"
			st, err := f.NewStyle(&excelize.Style{CustomNumFmt: &tsFmt})
			if err != nil {
				t.Fatal(err)
			}
			if name == "d1904" {
				yes := true
				if err := f.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes}); err != nil {
					t.Fatal(err)
				}
			}
			f.SetCellStr("Sheet1", "A1", "when")
			for i, v := range serials {
				c, _ := excelize.JoinCellName("A", i+2)
				if name == "d1904" {
					if i == 4 {
						break // no serial before 1904 there
					}
					v -= 1462 // the same instants in the 1904 system
				}
				f.SetCellFloat("Sheet1", c, v, -1, 64)
				f.SetCellStyle("Sheet1", c, c, st)
			}
		})))
	}
	c := cattest.NewCatalog(t, root, catalog.NewXLSXFormat(catalog.Limits{}))
	for _, id := range []string{"d1900/Sheet1", "d1904/Sheet1"} {
		ds := cattest.Lookup(t, c, id)
		_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{})
		got := cols[0]
		if ty := cattest.TypeNames(ds.Schema)[0]; ty != "timestamp[ms]" {
			t.Errorf("%s: type %s", id, ty)
		}
		if !reflect.DeepEqual(got, want[:len(got)]) || len(got) < 4 {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
}
