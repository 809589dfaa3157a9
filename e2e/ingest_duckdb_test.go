package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
)

// TestIngestAgainstDuckDB is the property test of CSV type inference:
// random tables (leading-zero codes, big integers, floats of many shapes,
// dates and timestamps in several layouts, booleans, quoted text, empty
// cells, stray values) are written as CSV files and read by Quarry's
// catalog and by DuckDB's read_csv sniffer (interop/duckdb/csvcheck.js).
//
// Quarry must never change a value: a string cell is the file's text, an
// int64 prints back as the text, a float64 is the same decimal number as
// the text, a date or timestamp is the one the generator wrote. Where both
// read a column with comparable types, every value must agree; where they
// differ, Quarry is the more faithful one (it keeps text DuckDB turns into
// numbers: "00501", "+1", 20-digit integers, long decimals) or parses a
// layout DuckDB leaves as text; those cases are counted and logged.
//
// QUARRY_INGEST_CSVS sets how many files (default 2000; make fuzz-ingest
// runs 100000) and QUARRY_INGEST_SEED the seed.
func TestIngestAgainstDuckDB(t *testing.T) {
	n := envInt(t, "QUARRY_INGEST_CSVS", 2000)
	seed := envInt(t, "QUARRY_INGEST_SEED", 1)
	const batch = 2000
	known := map[string]*knownCase{}
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		ingestBatch(t, rand.New(rand.NewPCG(uint64(seed), uint64(start))), start, m, known)
		if t.Failed() {
			return
		}
	}
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\n  %6d: %s; e.g. %s", known[k].n, k, known[k].example)
	}
	t.Logf("%d CSV files; columns where Quarry and DuckDB chose different types:%s", n, sb.String())
}

// knownCase counts one kind of difference between Quarry and DuckDB.
type knownCase struct {
	n       int
	example string
}

func countCase(known map[string]*knownCase, what, example string) {
	k := known[what]
	if k == nil {
		k = &knownCase{example: example}
		known[what] = k
	}
	k.n++
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// genCell is one generated cell: its text and, for dates and timestamps,
// the instant the generator meant (UTC wall clock).
type genCell struct {
	raw  string
	when *time.Time
}

// genTable is one generated CSV file.
type genTable struct {
	name  string
	cols  []string
	cells [][]genCell // [row][col]
}

func ingestBatch(t *testing.T, r *rand.Rand, first, n int, known map[string]*knownCase) {
	dir := t.TempDir()
	tables := make(map[string]*genTable, n)
	var list strings.Builder
	for i := range n {
		tb := genCSV(r, fmt.Sprintf("t%06d", first+i))
		tables[tb.name] = tb
		p := filepath.Join(dir, tb.name+".csv")
		if err := os.WriteFile(p, []byte(tb.csv()), 0o644); err != nil {
			t.Fatal(err)
		}
		list.WriteString(p + "\n")
	}
	listFile := filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(listFile, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	duck := duckdbCSV(t, listFile)

	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Diagnostics(); len(d) != 0 {
		t.Fatalf("Quarry rejected generated files: %v", d)
	}
	if got := len(c.Datasets()); got != n {
		t.Fatalf("%d datasets for %d files", got, n)
	}
	for _, ds := range c.Datasets() {
		tb := tables[ds.ID]
		d, ok := duck[filepath.Join(dir, ds.ID+".csv")]
		if !ok {
			t.Fatalf("%s: no DuckDB result", ds.ID)
		}
		if d.Error != "" { // Quarry's values are still checked against the file
			countCase(known, "files DuckDB fails to read (its sniffer errs)", ds.ID+": "+strings.SplitN(d.Error, "\n", 2)[0])
			d.Columns = make([]struct {
				Name string `json:"name"`
				Type string `json:"type"`
			}, len(tb.cols))
			d.Rows = make([][]*string, len(tb.cells))
			for i := range d.Rows {
				d.Rows[i] = make([]*string, len(tb.cols))
			}
		}
		cols := scanText(t, ds)
		for ci, f := range ds.Schema.Fields() {
			where := fmt.Sprintf("%s column %s (Quarry %s, DuckDB %s)", ds.ID, f.Name, f.Type, d.Columns[ci].Type)
			if d.Error != "" {
				where += " (DuckDB: " + d.Error + ")"
			}
			compareColumn(t, where, tb, ci, f.Type, cols[ci], d.Columns[ci].Type, d.Rows, ds.ColumnNotes[f.Name], known)
			if t.Failed() {
				t.Fatalf("file:\n%s", tb.csv())
			}
		}
	}
}

func (tb *genTable) csv() string {
	var sb strings.Builder
	sb.WriteString(strings.Join(tb.cols, ",") + "\n")
	for _, row := range tb.cells {
		for j, c := range row {
			if j > 0 {
				sb.WriteByte(',')
			}
			v := c.raw
			if strings.ContainsAny(v, ",\"\n") {
				v = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
			sb.WriteString(v)
		}
		if len(row) == 1 && row[0].raw == "" {
			sb.WriteString(`""`) // a lone empty cell would be a blank line
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

var monthNamesEN = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// genCSV makes a table of 1 to 6 columns, each of one family, with about
// 8% empty cells and 3% stray values.
func genCSV(r *rand.Rand, name string) *genTable {
	ncols, nrows := 1+r.IntN(6), 1+r.IntN(25)
	tb := &genTable{name: name}
	fams := make([]int, ncols)
	for c := range ncols {
		fams[c] = r.IntN(15)
		tb.cols = append(tb.cols, fmt.Sprintf("c%d", c))
	}
	stray := []string{"N/A", "007", "+1", "-0", "1e3", "00", "0", "1.50", "99999999999999999999", "12345678901234567", "0.1000000000000000055511",
		"x", "TRUE", "01/02/2015", "13/01/2015", " 5", "1,000", "$3", "2015-02-30", "Jan 32 2000"}
	for range nrows {
		row := make([]genCell, ncols)
		for c, fam := range fams {
			switch k := r.IntN(100); {
			case k < 8:
			case k < 11:
				row[c] = genCell{raw: stray[r.IntN(len(stray))]}
			default:
				row[c] = genValue(r, fam)
			}
		}
		tb.cells = append(tb.cells, row)
	}
	return tb
}

func genValue(r *rand.Rand, fam int) genCell {
	day := func() time.Time {
		return time.Date(1950+r.IntN(80), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC)
	}
	at := func(tm time.Time, raw string) genCell { return genCell{raw: raw, when: &tm} }
	switch fam {
	case 0: // integers of every size
		return genCell{raw: strconv.FormatInt(r.Int64N(math.MaxInt64)>>r.IntN(63)*int64(1-2*r.IntN(2)), 10)}
	case 1: // fixed-width codes
		return genCell{raw: fmt.Sprintf("%0*d", 3+r.IntN(4), r.IntN(10000))}
	case 2: // decimals
		return genCell{raw: strconv.FormatFloat(r.NormFloat64()*math.Pow(10, float64(r.IntN(12)-4)), 'f', r.IntN(7), 64)}
	case 3: // floats of many shapes
		v := r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30))
		return genCell{raw: []string{strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(v, 'e', r.IntN(18), 64),
			fmt.Sprintf("%.20f", v), fmt.Sprintf("%.*g", 1+r.IntN(22), v), ".5", "-0.0", "5.", "NaN", "inf"}[r.IntN(9)]}
	case 4: // beyond float64 or int64
		return genCell{raw: []string{"9223372036854775808", "-9223372036854775809", fmt.Sprint(r.Uint64()), fmt.Sprintf("%d%09d", r.Int64(), r.IntN(1e9))}[r.IntN(4)]}
	case 5:
		d := day()
		return at(d, d.Format("2006-01-02"))
	case 6:
		d := day()
		return at(d, []string{d.Format("2006/01/02"), d.Format("2006/1/2")}[r.IntN(2)])
	case 7:
		d := day()
		return at(d, d.Format("01/02/2006"))
	case 8:
		d := day()
		return at(d, d.Format("02/01/2006"))
	case 9:
		d := day()
		m := monthNamesEN[d.Month()-1]
		if r.IntN(2) == 0 {
			m = m[:3]
		}
		layout := []string{"%[1]s %[2]d %[3]d", "%[2]d %[1]s %[3]d", "%[3]d-%[1]s-%02[2]d", "%02[2]d-%[1]s-%[3]d", "%[1]s %[2]d, %[3]d"}[r.IntN(5)]
		return at(d, fmt.Sprintf(layout, m, d.Day(), d.Year()))
	case 10:
		tm := day().Add(time.Duration(r.IntN(86400)) * time.Second)
		return at(tm, tm.Format("2006-01-02 15:04:05"))
	case 11:
		tm := day().Add(time.Duration(r.IntN(86400)) * time.Second)
		return at(tm, tm.Format("2006/01/02 15:04:05"))
	case 12:
		return genCell{raw: []string{"true", "false", "True", "FALSE"}[r.IntN(4)]}
	case 13:
		return genCell{raw: []string{"north", "say \"hi\"", "a, b", "line\nbreak", "Երևան", "+", "-", "."}[r.IntN(8)]}
	}
	return genCell{raw: fmt.Sprintf("%+d", r.IntN(1000))}
}

// duckdbResult is one line of csvcheck.js.
type duckdbResult struct {
	File    string `json:"file"`
	Error   string `json:"error"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	Rows [][]*string `json:"rows"`
}

func duckdbCSV(t *testing.T, list string) map[string]duckdbResult {
	t.Helper()
	out := duckdbScript(t, "csvcheck.js", list)
	res := map[string]duckdbResult{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r duckdbResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("csvcheck.js output: %v\n%.300s", err, line)
		}
		res[r.File] = r
	}
	return res
}

// quarryCell is one scanned value: null, or its Go value.
type quarryCell struct {
	null bool
	s    string
	i    int64
	f    float64
	b    bool
	tm   time.Time
}

func scanText(t *testing.T, ds *catalog.Dataset) [][]quarryCell {
	t.Helper()
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	cols := make([][]quarryCell, ds.Schema.NumFields())
	for rr.Next() {
		rec := rr.RecordBatch()
		for c := range cols {
			a := rec.Column(c)
			for i := range a.Len() {
				var q quarryCell
				if a.IsNull(i) {
					q.null = true
				} else {
					switch v := a.(type) {
					case *array.String:
						q.s = v.Value(i)
					case *array.Int64:
						q.i = v.Value(i)
					case *array.Float64:
						q.f = v.Value(i)
					case *array.Boolean:
						q.b = v.Value(i)
					case *array.Date32:
						q.tm = v.Value(i).ToTime()
					case *array.Timestamp:
						q.tm = time.UnixMilli(int64(v.Value(i))).UTC()
					default:
						t.Fatalf("%s: column %d is %T", ds.ID, c, a)
					}
				}
				cols[c] = append(cols[c], q)
			}
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return cols
}

// sameDecimal reports whether two decimal texts are the same number.
func sameDecimal(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// printsFloat reports whether the file's text is a printing of f: its
// shortest form, or (for long decimals, as numpy's %.18e writes them) f's
// exact binary value rounded to as many significant digits as were written.
func printsFloat(f float64, shortest, raw string) bool {
	if sameDecimal(shortest, raw) {
		return true
	}
	x, ok := new(big.Rat).SetString(raw)
	if !ok || x.Sign() == 0 {
		return false
	}
	mant := strings.TrimLeft(strings.TrimLeft(raw, "+-"), "0.")
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	mant = strings.TrimRight(strings.ReplaceAll(mant, ".", ""), "0")
	if len(mant) <= 17 || !strings.ContainsAny(raw, ".eE") {
		return false
	}
	return sameDecimal(strconv.FormatFloat(f, 'e', len(mant)-1, 64), raw)
}

func compareColumn(t *testing.T, where string, tb *genTable, ci int, qt arrow.DataType, q []quarryCell, dt string,
	drows [][]*string, note catalog.ColumnNote, known map[string]*knownCase) {
	t.Helper()
	if len(q) != len(tb.cells) || len(drows) != len(tb.cells) {
		t.Errorf("%s: Quarry %d rows, DuckDB %d, file %d", where, len(q), len(drows), len(tb.cells))
		return
	}
	agree := true    // DuckDB's values are comparable and equal
	duckText := true // DuckDB's text of every value is the file's
	for ri, row := range tb.cells {
		cell, qc, dc := row[ci], q[ri], drows[ri][ci]
		if cell.raw == "" {
			if !qc.null {
				t.Errorf("%s row %d: empty cell is not null", where, ri+1)
			}
			continue
		}
		if qc.null {
			t.Errorf("%s row %d: %q read as null", where, ri+1, cell.raw)
			continue
		}
		// Quarry never changes a value.
		var qtext string
		switch qt.ID() {
		case arrow.STRING:
			qtext = qc.s
			if qc.s != cell.raw {
				t.Errorf("%s row %d: text %q, file %q", where, ri+1, qc.s, cell.raw)
			}
		case arrow.INT64:
			qtext = strconv.FormatInt(qc.i, 10)
			if qtext != cell.raw {
				t.Errorf("%s row %d: int64 %d, file %q", where, ri+1, qc.i, cell.raw)
			}
		case arrow.FLOAT64:
			qtext = strconv.FormatFloat(qc.f, 'g', -1, 64)
			special := math.IsNaN(qc.f) || math.IsInf(qc.f, 0)
			if special && !strings.ContainsAny(cell.raw, "nNiI") || !special && !printsFloat(qc.f, qtext, cell.raw) {
				t.Errorf("%s row %d: float64 %s, file %q", where, ri+1, qtext, cell.raw)
			}
		case arrow.BOOL:
			qtext = strconv.FormatBool(qc.b)
			if !strings.EqualFold(qtext, cell.raw) {
				t.Errorf("%s row %d: bool %v, file %q", where, ri+1, qc.b, cell.raw)
			}
		case arrow.DATE32, arrow.TIMESTAMP:
			// A day/month date means what the column's order says: a stray
			// "13/01/2015" makes a column of "03/12/2007" day-first.
			if layout, ok := map[string]string{"MM/DD/YYYY": "01/02/2006", "DD/MM/YYYY": "02/01/2006"}[note.Format]; ok {
				if tm, err := time.Parse(layout, cell.raw); err == nil {
					cell.when = &tm
				}
			}
			if cell.when == nil || !qc.tm.Equal(*cell.when) {
				t.Errorf("%s row %d: %s %v, file %q (format %q)", where, ri+1, qt, qc.tm, cell.raw, note.Format)
			}
			qtext = qc.tm.Format("2006-01-02 15:04:05")
		}
		// DuckDB agrees where it chose a comparable type.
		duckText = duckText && dc != nil && *dc == cell.raw
		if dc == nil {
			agree = false
			continue
		}
		switch {
		case qt.ID() == arrow.STRING && dt == "VARCHAR", qt.ID() == arrow.INT64 && dt == "BIGINT", qt.ID() == arrow.BOOL && dt == "BOOLEAN":
			agree = agree && strings.EqualFold(*dc, qtext)
		case qt.ID() == arrow.FLOAT64 && dt == "DOUBLE":
			f, err := strconv.ParseFloat(*dc, 64)
			agree = agree && err == nil && (f == qc.f || math.IsNaN(f) && math.IsNaN(qc.f))
		case (qt.ID() == arrow.DATE32 || qt.ID() == arrow.TIMESTAMP) && duckTime(dt):
			tm, err := time.Parse("2006-01-02 15:04:05", (*dc + " 00:00:00")[:19])
			agree = agree && err == nil && tm.Equal(qc.tm)
		default:
			agree = false
		}
	}
	if t.Failed() {
		return
	}
	comparable := qt.ID() == arrow.STRING && dt == "VARCHAR" || qt.ID() == arrow.INT64 && dt == "BIGINT" || qt.ID() == arrow.BOOL && dt == "BOOLEAN" ||
		qt.ID() == arrow.FLOAT64 && dt == "DOUBLE" || (qt.ID() == arrow.DATE32 || qt.ID() == arrow.TIMESTAMP) && duckTime(dt)
	if comparable && !agree {
		t.Errorf("%s: DuckDB reads other values", where)
		return
	}
	if !comparable && dt != "" {
		why := "columns Quarry keeps as text and DuckDB converts, changing values"
		if qt.ID() == arrow.STRING && duckText {
			why = "columns Quarry keeps as text and DuckDB converts without changing their text"
		}
		if qt.ID() != arrow.STRING {
			why = "columns Quarry types and DuckDB keeps as text"
			if dt != "VARCHAR" {
				why = "columns of other types"
			}
		}
		var ex []string
		for _, row := range tb.cells {
			if len(ex) < 6 && row[ci].raw != "" {
				ex = append(ex, row[ci].raw)
			}
		}
		countCase(known, fmt.Sprintf("%s (Quarry %s, DuckDB %s)", why, qt, dt), fmt.Sprintf("%q", ex))
	}
}

// duckTime reports whether a DuckDB type is a date or timestamp (the
// session zone is UTC, so TIMESTAMPTZ prints the UTC wall clock).
func duckTime(dt string) bool {
	return dt == "DATE" || dt == "TIMESTAMP" || dt == "TIMESTAMP WITH TIME ZONE"
}
