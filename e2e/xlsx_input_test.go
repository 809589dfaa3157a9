package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// TestXLSXInput: an Excel workbook written by excelize (a header row, zip
// codes as text cells, numbers, booleans, dates as date-formatted
// serials, blank cells for the missing notes, and a second sheet) is one
// dataset per sheet queried over MCP, every value compared with the rows
// written (formatRow). DuckDB reads xlsx only through an extension it
// downloads, so it is not the oracle here.
func TestXLSXInput(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	sh := "Sheet1"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetName(sh, "q1"))
	sh = "q1"
	must(f.SetSheetRow(sh, "A1", &[]any{"id", "code", "x", "ok", "day", "grp", "note"}))
	dateStyle, err := f.NewStyle(&excelize.Style{NumFmt: 14})
	must(err)
	for i := range formatRows {
		id, code, x, ok, day, grp, note := formatRow(i)
		r := i + 2
		cell := func(col int) string { c, _ := excelize.CoordinatesToCellName(col, r); return c }
		must(f.SetCellInt(sh, cell(1), id))
		must(f.SetCellStr(sh, cell(2), code))
		must(f.SetCellFloat(sh, cell(3), x, -1, 64))
		must(f.SetCellBool(sh, cell(4), ok))
		d, err := time.Parse("2006-01-02", day)
		must(err)
		must(f.SetCellValue(sh, cell(5), d))
		must(f.SetCellStyle(sh, cell(5), cell(5), dateStyle))
		must(f.SetCellStr(sh, cell(6), grp))
		if note != nil {
			must(f.SetCellStr(sh, cell(7), *note))
		}
	}
	_, err = f.NewSheet("notes")
	must(err)
	must(f.SetSheetRow("notes", "A1", &[]any{"text"}))
	must(f.SetSheetRow("notes", "A2", &[]any{"hello"}))
	dir := t.TempDir()
	must(f.SaveAs(filepath.Join(dir, "sales.xlsx")))
	// checkFormatDataset expects the one dataset of its kind: the second
	// sheet goes in a workbook of its own directory run below.
	must(f.DeleteSheet("notes"))
	must(f.SaveAs(filepath.Join(dir, "sales.xlsx")))
	checkFormatDataset(t, dir, "sales/q1", "xlsx")

	f2 := excelize.NewFile()
	defer f2.Close()
	must(f2.SetSheetRow("Sheet1", "A1", &[]any{"n"}))
	must(f2.SetSheetRow("Sheet1", "A2", &[]any{7}))
	_, err = f2.NewSheet("other")
	must(err)
	must(f2.SetSheetRow("other", "A1", &[]any{"zip"}))
	must(f2.SetSheetRow("other", "A2", &[]any{"00501"}))
	dir2 := t.TempDir()
	must(f2.SaveAs(filepath.Join(dir2, "two.xlsx")))
	if _, err := os.Stat(filepath.Join(dir2, "two.xlsx")); err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, "--data", dir2, "--artifact-dir", t.TempDir())
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "two/other"}, &q)
	if len(q.Data) != 1 || q.Data[0]["zip"] != "00501" {
		t.Fatalf("two/other: %+v", q.Data)
	}
	call(t, c, "query_data", map[string]any{"dataset": "two/Sheet1"}, &q)
	if len(q.Data) != 1 || q.Data[0]["n"] != float64(7) {
		t.Fatalf("two/Sheet1: %+v", q.Data)
	}
}
