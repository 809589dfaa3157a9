package catalog

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/xuri/excelize/v2"

	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/internal/qerr"
)

// KindXLSX is the kind of datasets read from Excel workbooks.
const KindXLSX Kind = "xlsx"

// xlsxFormat implements Format for Excel workbooks.
type xlsxFormat struct{ lim Limits }

// NewXLSXFormat returns the Format for Excel workbooks (".xlsx", any
// case; Excel's "~$" lock files are skipped), read with excelize. Every
// sheet holding a cell is a dataset whose id is the path without
// extension, a slash and the sheet's name ("sales/Q1").
//
// A sheet becomes a table so: leading empty rows are skipped; a merged
// range holds its top-left cell's value in every cell; the first row left
// is the header when every cell in it is text (not a number, date or
// boolean; empty header cells and columns without one are named by their
// column letter, "C"), otherwise columns are named by their letters and
// that row is data; columns empty in every row and trailing empty rows
// are dropped; an error cell (#N/A) is null. Column types follow the
// same no-loss inference as JSON and CSV (csv_values.go, jsonColumn):
// number cells make an int64 or float64 column when every number prints
// back as stored (otherwise text with a hint), text cells make a text
// column unless every one is a date or timestamp in a layout CSV knows
// (numeric-looking text such as "00501" stays text), boolean cells a
// bool column, and a column mixing kinds is text with a hint. Numbers in
// a date or time number format are dates (a whole serial in a format
// without time fields) or timestamps, converted from Excel serials
// (1900 or 1904 date system, rounded to the millisecond); in a time-only
// format they are text ("15:04:05").
//
// Limits: the workbook may unzip to at most MaxCompressionRatio times its
// size (at least 64 MiB, at most min(MaxDecompressedBytes, 4 GiB)), all
// in memory (no temporary files); a sheet may have at most MaxColumns
// columns. Beyond them, or not a readable workbook: a diagnostic.
func NewXLSXFormat(lim Limits) Format { return xlsxFormat{lim: lim.WithDefaults()} }

// Kind implements Format.
func (xlsxFormat) Kind() Kind { return KindXLSX }

// Match implements Format.
func (xlsxFormat) Match(name string) bool {
	base := name[strings.LastIndexByte(name, '/')+1:]
	return hasExt(name, ".xlsx") && !strings.HasPrefix(base, "~$")
}

// xlsxUnzipLimit is how far a workbook of size bytes may unzip.
func xlsxUnzipLimit(size int64, lim Limits) int64 {
	hi := min(lim.MaxDecompressedBytes, 4<<30)
	n := int64(float64(size) * lim.MaxCompressionRatio)
	return min(max(n, 64<<20), hi)
}

// openXLSX opens and parses the workbook (confined: FileInfo.Open).
func openXLSX(f FileInfo, lim Limits) (x *excelize.File, err error) {
	fh, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	defer func() {
		if p := recover(); p != nil {
			x, err = nil, fmt.Errorf("the workbook does not decode (%v)", p)
		}
	}()
	unzip := xlsxUnzipLimit(f.Size, lim)
	x, err = excelize.OpenReader(fh, excelize.Options{UnzipSizeLimit: unzip, UnzipXMLSizeLimit: unzip})
	if err != nil {
		if strings.Contains(err.Error(), "unzip size") {
			return nil, limitError("the workbook unzips to more than %s", sizeString(unzip))
		}
		return nil, fmt.Errorf("not a readable Excel workbook: %v", err)
	}
	return x, nil
}

// xlsxSheet is one sheet read as a table: column names and the rows'
// cells (kind jNull for an empty cell).
type xlsxSheet struct {
	names  []string
	rows   [][]jsonField
	header bool
}

// xlsxReader reads sheets of one workbook, with its date system and a
// cache of which styles are date formats.
type xlsxReader struct {
	x        *excelize.File
	date1904 bool
	styles   map[int]xlsxNumFmt
	lim      Limits
}

// xlsxNumFmt is what a number format makes of a number.
type xlsxNumFmt uint8

const (
	fmtNumber   xlsxNumFmt = iota
	fmtDate                // date fields only
	fmtDateTime            // date and time fields
	fmtTime                // time fields only
)

func newXLSXReader(x *excelize.File, lim Limits) *xlsxReader {
	r := &xlsxReader{x: x, styles: map[int]xlsxNumFmt{}, lim: lim}
	if p, err := x.GetWorkbookProps(); err == nil && p.Date1904 != nil {
		r.date1904 = *p.Date1904
	}
	return r
}

// numFmt classifies the number format of style id.
func (r *xlsxReader) numFmt(id int) xlsxNumFmt {
	if k, ok := r.styles[id]; ok {
		return k
	}
	k := fmtNumber
	if st, err := r.x.GetStyle(id); err == nil && st != nil {
		switch n := st.NumFmt; {
		case st.CustomNumFmt != nil:
			k = classifyNumFmt(*st.CustomNumFmt)
		case n >= 14 && n <= 17, n >= 27 && n <= 31, n >= 34 && n <= 36, n >= 50 && n <= 58:
			k = fmtDate
		case n == 22:
			k = fmtDateTime
		case n >= 18 && n <= 21, n >= 32 && n <= 33, n >= 45 && n <= 47:
			k = fmtTime
		}
	}
	r.styles[id] = k
	return k
}

// classifyNumFmt classifies a number format code by its date and time
// fields (outside quoted text, escapes and [...] sections).
func classifyNumFmt(code string) xlsxNumFmt {
	var date, clock bool
	inQuote, inBracket := false, false
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case inQuote:
			inQuote = c != '"'
		case inBracket:
			inBracket = c != ']'
		case c == '"':
			inQuote = true
		case c == '[':
			// [h], [mm], [ss] are elapsed-time fields; others are colors and locales.
			if j := strings.IndexByte(code[i:], ']'); j > 0 {
				if f := strings.ToLower(code[i+1 : i+j]); strings.Trim(f, "hms") == "" && f != "" {
					clock = true
				}
			}
			inBracket = true
		case c == '\\' || c == '_' || c == '*':
			i++
		default:
			switch c | 0x20 {
			case 'y', 'd':
				date = true
			case 'h', 's':
				clock = true
			case 'm':
				// month or minute: a date field unless next to an hour or second
				date = date || !clock
			}
		}
	}
	switch {
	case date && clock:
		return fmtDateTime
	case date:
		return fmtDate
	case clock:
		return fmtTime
	}
	return fmtNumber
}

// cell turns one cell (its raw value at axis) into a typed text.
func (r *xlsxReader) cell(sheet, axis, raw string) (jsonField, error) {
	if raw == "" {
		return jsonField{kind: jNull}, nil
	}
	t, err := r.x.GetCellType(sheet, axis)
	if err != nil {
		return jsonField{}, err
	}
	switch t {
	case excelize.CellTypeBool:
		return jsonField{kind: jBool, text: strconv.FormatBool(raw == "1" || strings.EqualFold(raw, "true"))}, nil
	case excelize.CellTypeError:
		return jsonField{kind: jNull}, nil
	case excelize.CellTypeSharedString, excelize.CellTypeInlineString, excelize.CellTypeFormula:
		return jsonField{kind: jString, text: raw}, nil
	case excelize.CellTypeDate: // ISO 8601 text
		return jsonField{kind: jString, text: strings.TrimSuffix(strings.Replace(raw, "T", " ", 1), "Z")}, nil
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return jsonField{kind: jString, text: raw}, nil
	}
	style, err := r.x.GetCellStyle(sheet, axis)
	if err != nil {
		return jsonField{}, err
	}
	nf := r.numFmt(style)
	if nf == fmtNumber || v < 0 || v > 2958465 { // past 9999-12-31
		return jsonField{kind: jNumber, text: raw}, nil
	}
	ts, err := excelSerialTime(v, r.date1904)
	if err != nil {
		return jsonField{kind: jNumber, text: raw}, nil
	}
	switch {
	case nf == fmtTime:
		return jsonField{kind: jString, text: ts.Format("15:04:05.999")}, nil
	case nf == fmtDate && v == math.Trunc(v):
		return jsonField{kind: jString, text: ts.Format("2006-01-02")}, nil
	}
	return jsonField{kind: jString, text: ts.Format("2006-01-02 15:04:05.999")}, nil
}

// excelSerialTime converts the Excel serial v (days since the date
// system's epoch, the fraction the time of day) to a time rounded to the
// millisecond. excelize's ExcelDateToTime rounds to whole seconds (so
// 23:59:59.999 became the next day); it is used only for the serials
// before 1900-03-01 of the 1900 system (Excel's fictitious 1900-02-29).
func excelSerialTime(v float64, date1904 bool) (time.Time, error) {
	if !date1904 && v < 61 {
		t, err := excelize.ExcelDateToTime(v, false)
		return t.Round(time.Millisecond), err
	}
	epoch := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC) // serial 61 is 1900-03-01
	if date1904 {
		epoch = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	const msPerDay = 86_400_000
	ms := int64(math.Round(v * msPerDay))
	return epoch.AddDate(0, 0, int(ms/msPerDay)).Add(time.Duration(ms%msPerDay) * time.Millisecond), nil
}

// sheet reads one sheet as a table (nil when it holds no cell).
func (r *xlsxReader) sheet(ctx context.Context, name string) (*xlsxSheet, error) {
	rows, err := getRows(r.x, name)
	if err != nil {
		return nil, fmt.Errorf("sheet %q: %v", name, err)
	}
	width := 0
	for _, row := range rows {
		width = max(width, len(row))
	}
	if width > r.lim.MaxColumns {
		return nil, limitError("sheet %q has %d columns, more than the limit of %d", name, width, r.lim.MaxColumns)
	}
	grid := make([][]jsonField, len(rows))
	for i, row := range rows {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		grid[i] = make([]jsonField, width)
		for j, raw := range row {
			axis, _ := excelize.CoordinatesToCellName(j+1, i+1)
			if grid[i][j], err = r.cell(name, axis, raw); err != nil {
				return nil, fmt.Errorf("sheet %q, cell %s: %v", name, axis, err)
			}
		}
	}
	if err := r.fillMerged(name, grid); err != nil {
		return nil, err
	}
	return sheetTable(grid, width), nil
}

// getRows is excelize's GetRows (raw cell values) with the error of a
// row that does not decode returned: GetRows stops at it silently, so a
// corrupt part read a sheet short, and differently on the next read.
func getRows(x *excelize.File, sheet string) (out [][]string, err error) {
	rows, err := x.Rows(sheet)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := rows.Close(); err == nil && cerr != nil {
			out, err = nil, cerr
		}
	}()
	last := 0
	for cur := 1; rows.Next(); cur++ {
		row, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return nil, fmt.Errorf("row %d: %v", cur, err)
		}
		if len(row) > 0 {
			for len(out) < cur-1 {
				out = append(out, nil)
			}
			out = append(out, row)
			last = cur
		}
	}
	if err := rows.Error(); err != nil {
		return nil, err
	}
	return out[:last], nil
}

// fillMerged copies each merged range's top-left cell into the range.
func (r *xlsxReader) fillMerged(name string, grid [][]jsonField) error {
	merged, err := r.x.GetMergeCells(name, true)
	if err != nil {
		return fmt.Errorf("sheet %q: %v", name, err)
	}
	for _, m := range merged {
		c1, r1, err1 := excelize.CellNameToCoordinates(m.GetStartAxis())
		c2, r2, err2 := excelize.CellNameToCoordinates(m.GetEndAxis())
		if err1 != nil || err2 != nil || r1 > len(grid) || c1 > len(grid[r1-1]) {
			continue
		}
		v := grid[r1-1][c1-1]
		for i := r1; i <= min(r2, len(grid)); i++ {
			for j := c1; j <= min(c2, len(grid[i-1])); j++ {
				grid[i-1][j-1] = v
			}
		}
	}
	return nil
}

// sheetTable makes a table of a sheet's cells: leading and trailing empty
// rows and empty columns dropped, the header detected.
func sheetTable(grid [][]jsonField, width int) *xlsxSheet {
	empty := func(row []jsonField) bool {
		for _, c := range row {
			if c.kind != jNull {
				return false
			}
		}
		return true
	}
	for len(grid) > 0 && empty(grid[0]) {
		grid = grid[1:]
	}
	for len(grid) > 0 && empty(grid[len(grid)-1]) {
		grid = grid[:len(grid)-1]
	}
	if len(grid) == 0 {
		return nil
	}
	var keep []int
	for j := range width {
		for _, row := range grid {
			if row[j].kind != jNull {
				keep = append(keep, j)
				break
			}
		}
	}
	header := len(grid) > 1
	for _, j := range keep {
		c := grid[0][j]
		if c.kind != jNull && (c.kind != jString || infer.Classify(c.text) != infer.KindString) {
			header = false
		}
	}
	t := &xlsxSheet{header: header}
	used := map[string]bool{}
	for _, j := range keep {
		n, _ := excelize.ColumnNumberToName(j + 1)
		if header && grid[0][j].kind != jNull {
			if h := strings.TrimSpace(grid[0][j].text); h != "" {
				n = h
			}
		}
		base := n
		for k := 2; used[n]; k++ {
			n = base + "_" + strconv.Itoa(k)
		}
		used[n] = true
		t.names = append(t.names, n)
	}
	if header {
		grid = grid[1:]
	}
	t.rows = make([][]jsonField, len(grid))
	for i, row := range grid {
		out := make([]jsonField, len(keep))
		for k, j := range keep {
			out[k] = row[j]
		}
		t.rows[i] = out
	}
	return t
}

// Open implements Format.
func (xf xlsxFormat) Open(ctx context.Context, f FileInfo) ([]*Dataset, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x, err := openXLSX(f, xf.lim)
	if err != nil {
		return nil, asFileError(err)
	}
	defer x.Close()
	r := newXLSXReader(x, xf.lim)
	var out []*Dataset
	for _, name := range x.GetSheetList() {
		sh, err := r.sheet(ctx, name)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, asFileError(err)
		}
		if sh == nil {
			continue
		}
		ds, err := sh.dataset(f, name, xf.lim)
		if err != nil {
			return nil, asFileError(fmt.Errorf("sheet %q: %w", name, err))
		}
		out = append(out, ds)
	}
	if len(out) == 0 {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "no sheet of the workbook holds a cell")
	}
	return out, nil
}

// dataset infers the sheet's column types (jsonColumn: the no-loss rules
// shared with JSON and CSV), applies the schema card's type overrides
// (cardtypes.go) and makes its dataset.
func (sh *xlsxSheet) dataset(f FileInfo, name string, lim Limits) (*Dataset, error) {
	cols := make([]*jsonColumn, len(sh.names))
	defer func() { releaseChecks(cols) }()
	for j, n := range sh.names {
		c, err := newJSONColumn(f.Read, n, "Excel")
		if err != nil {
			return nil, err
		}
		cols[j] = c
	}
	for i, row := range sh.rows {
		for j := range row {
			if row[j].kind == jNull {
				continue
			}
			cols[j].add(int64(i), &row[j])
			if c := cols[j].card; c != nil {
				if err := c.check(f.Read, int64(i)+1, cols[j].name, row[j].text); err != nil {
					return nil, err
				}
			}
		}
	}
	schema, kinds, notes := inferredSchema(cols)
	types := cardTypes(cols)
	schema, notes = cardTyped(schema, notes, types)
	id := f.BaseID + "/" + name
	return &Dataset{
		ID:            id,
		Kind:          KindXLSX,
		Path:          f.RelPath,
		AbsPath:       f.AbsPath,
		Schema:        schema,
		RowCount:      int64(len(sh.rows)),
		RowCountExact: true,
		SizeBytes:     f.Size,
		ModTime:       f.ModTime,
		FileID:        f.FileID,
		Attributes:    map[string]any{"sheet": name, "header_row": sh.header},
		ColumnNotes:   notes,
		Source:        &xlsxSource{id: id, file: f, sheet: name, schema: schema, kinds: kinds, types: types, rows: int64(len(sh.rows)), lim: lim},
	}, nil
}

// xlsxSource reads one sheet.
type xlsxSource struct {
	id     string
	file   FileInfo
	sheet  string
	schema *arrow.Schema
	kinds  []infer.Kind
	types  []*cardType // type overrides by column (nil: none)
	rows   int64
	lim    Limits
}

// Scan implements Source: the workbook is read again and the sheet's
// requested columns are built as text, then converted to their types.
func (s *xlsxSource) Scan(ctx context.Context, opts ScanOptions) (array.RecordReader, error) {
	ts, err := newTypedScan(ctx, s.id, s.schema, opts)
	if err != nil {
		return nil, err
	}
	x, err := openXLSX(s.file, s.lim)
	if err != nil {
		return nil, SourceOpenError(s.id, asFileError(err))
	}
	sh, err := newXLSXReader(x, s.lim).sheet(ctx, s.sheet)
	x.Close()
	if err == nil && (sh == nil || int64(len(sh.rows)) != s.rows || len(sh.names) != s.schema.NumFields()) {
		err = fmt.Errorf("the file changed since it was cataloged")
	}
	if err != nil {
		return nil, corruptFileError(s.id, err)
	}
	textFields := make([]arrow.Field, len(ts.proj))
	pick := make([]int, len(ts.proj))
	for i, j := range ts.proj {
		textFields[i] = arrow.Field{Name: s.schema.Field(j).Name, Type: arrow.BinaryTypes.String, Nullable: true}
		pick[i] = i
	}
	textSchema := arrow.NewSchema(textFields, nil)
	pos := 0
	next := func() (arrow.RecordBatch, error) {
		n := min(ts.batch, len(sh.rows)-pos)
		if n <= 0 {
			return nil, nil
		}
		cols := make([]arrow.Array, len(ts.proj))
		for i, j := range ts.proj {
			b := array.NewStringBuilder(ts.alloc)
			for _, row := range sh.rows[pos : pos+n] {
				if row[j].kind == jNull {
					b.AppendNull()
				} else {
					b.Append(row[j].text)
				}
			}
			cols[i] = b.NewArray()
			b.Release()
		}
		defer releaseAll(cols)
		pos += n
		return array.NewRecordBatch(textSchema, cols, int64(n)), nil
	}
	r := newExposedReader(ctx, s.id, newFuncReader(textSchema, next), ts.out, pick, ts.alloc, func() {})
	r.convert = func(mem memory.Allocator, a arrow.Array, i int) (arrow.Array, error) {
		return convertText(mem, a.(*array.String), s.kinds, s.types, ts.proj[i])
	}
	return r, nil
}
