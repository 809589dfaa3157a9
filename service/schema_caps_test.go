package service

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

// wideCSV writes name.csv with ncols columns c0.. and rows rows; cell
// gives each cell's text.
func wideCSV(t *testing.T, root, name string, ncols, rows int, cell func(r, c int) string) {
	t.Helper()
	var b strings.Builder
	for r := -1; r < rows; r++ {
		for c := range ncols {
			if c > 0 {
				b.WriteByte(',')
			}
			if r < 0 {
				b.WriteString("c" + strconv.Itoa(c))
			} else {
				b.WriteString(cell(r, c))
			}
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(root, name+".csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaAnswerCaps: get_schema lists at most SchemaMaxColumns columns
// per answer (paged with column_offset), samples only the listed columns,
// and keeps the sample rows within SchemaSampleBytes.
func TestSchemaAnswerCaps(t *testing.T) {
	root := t.TempDir()
	wideCSV(t, root, "wide", 2500, 3, func(r, c int) string { return strconv.Itoa(r * c) })
	wideCSV(t, root, "fat", 40, 5, func(r, c int) string { return strings.Repeat("x", 3000) })
	s, _ := newTestService(t, root, 0, nil)
	ctx := context.Background()

	tests := []struct {
		offset, first, n int
		truncated        bool
		next             int
	}{
		{0, 0, 1000, true, 1000},
		{1000, 1000, 1000, true, 2000},
		{2000, 2000, 500, false, 0},
	}
	for _, tc := range tests {
		res, err := s.Schema(ctx, SchemaRequest{Dataset: "wide", ColumnOffset: tc.offset})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Columns) != tc.n || res.Columns[0].Name != "c"+strconv.Itoa(tc.first) ||
			res.ColumnsTruncated != tc.truncated || res.NextColumnOffset != tc.next {
			t.Errorf("offset %d: %d columns from %s, truncated %v, next %d; want %d from c%d, %v, %d", tc.offset,
				len(res.Columns), res.Columns[0].Name, res.ColumnsTruncated, res.NextColumnOffset, tc.n, tc.first, tc.truncated, tc.next)
		}
		if res.Shape[1] != 2500 {
			t.Errorf("shape %v", res.Shape)
		}
		var rows []map[string]any
		if err := json.Unmarshal(res.SampleRows, &rows); err != nil || len(rows) != 3 || len(rows[0]) != tc.n {
			t.Errorf("offset %d: sample rows %d of %d columns (%v), want 3 of %d", tc.offset, len(rows), len(rows[0]), err, tc.n)
		}
		if _, ok := rows[0]["c"+strconv.Itoa(tc.first)]; !ok {
			t.Errorf("offset %d: sample rows lack the first listed column", tc.offset)
		}
	}
	_, err := s.Schema(ctx, SchemaRequest{Dataset: "wide", ColumnOffset: 2501})
	if qerr.Code(err) != qerr.CodeInvalidArgument {
		t.Errorf("offset past the end: %v", err)
	}

	// 40 cells of 2,000 characters (shortened from 3,000): one row is
	// over 64 KiB, so no sample row fits.
	for _, examples := range []bool{false, true} {
		res, err := s.schema(ctx, SchemaRequest{Dataset: "fat"}, examples)
		if err != nil {
			t.Fatal(err)
		}
		if !res.SampleRowsTruncated || string(res.SampleRows) != "[]" {
			t.Errorf("fat sample: truncated %v, %d bytes", res.SampleRowsTruncated, len(res.SampleRows))
		}
		b, _ := json.Marshal(res)
		if len(b) > SchemaMaxBytes+SchemaSampleBytes {
			t.Errorf("answer of %d bytes", len(b))
		}
	}

	// Two concurrent answers over the wide dataset.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := s.Schema(ctx, SchemaRequest{Dataset: "wide"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	// The summary resource profiles the first SchemaMaxColumns columns.
	sum, err := s.Summary(ctx, "wide")
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Columns) != SchemaMaxColumns || !sum.ColumnsTruncated {
		t.Errorf("summary: %d columns, truncated %v", len(sum.Columns), sum.ColumnsTruncated)
	}
}
