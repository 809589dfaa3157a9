package catalog_test

import (
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/quarrydb/quarry/catalog"
)

// FuzzXLSX checks that no file makes the Excel format panic: opening
// either catalogs the workbook's sheets or diagnoses the file, and a
// scan of the first dataset reads its cataloged rows in its schema,
// leaking nothing. The corpus (testdata/fuzz/FuzzXLSX) holds workbooks
// written by excelize (types, dates, merged cells, several sheets), one
// cut short and one that is not a zip file.
func FuzzXLSX(f *testing.F) {
	f.Add(sampleWorkbook(f))
	f.Add(xlsxBytes(f, func(x *excelize.File) {
		_ = x.SetSheetRow("Sheet1", "A1", &[]any{"a", "b"})
		_ = x.SetSheetRow("Sheet1", "A2", &[]any{1, "00501"})
	}))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOpenAndScan(t, "f.xlsx", data, false, catalog.NewXLSXFormat(catalog.Limits{MaxDecompressedBytes: 16 << 20}))
	})
}
