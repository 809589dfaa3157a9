package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// The TPC-H-style queries (bench/tpch/README.md) through advanced_query's
// path: one in-process app.App (the wiring of quarry serve) over the
// generator's directory as data root, each statement run by
// service.Service.SQL with the serve defaults (confirmation preflight,
// caps, delivery as JSON or a result handle), so the timing covers what the
// tool does from the SQL text to the delivered first page.
//
//	quarry-bench --tpch DIR [--tpch-queries bench/tpch/queries] --queries all|Q1,Q6 --reps R
//
// Warm only: opening the app catalogs the eight CSVs and fills the column
// cache (reported as LOAD, comparable with DuckDB's CREATE TABLE ... AS
// read_csv_auto); then each query runs once as a warm-up (RESULT rep 0,
// the first run after the load) and R timed times (reps 1..R). Rep 0 also
// carries the answer: total rows, column names and the first 100 rows
// (further pages read through the result handle, untimed). A statement
// Quarry refuses reports its error and stable code ("code") and is not
// repeated.

// tpchQueries lists the query names (Q1..Q22) of the q*.sql files in dir.
func tpchQueries(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "q[0-9][0-9].sql"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no q*.sql files in %s", dir)
	}
	sort.Strings(files)
	out := make([]string, len(files))
	for i, f := range files {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "q"), ".sql"))
		out[i] = fmt.Sprintf("Q%d", n)
	}
	return out, nil
}

// tpchSQL is query q's statement (qNN.sql without its final semicolon).
func tpchSQL(dir, q string) (string, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(q, "Q"))
	if err != nil || !strings.HasPrefix(q, "Q") {
		return "", fmt.Errorf("unknown TPC-H query %q (want Q1..Q22)", q)
	}
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("q%02d.sql", n)))
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSpace(string(b)), ";"), nil
}

// runTPCH runs the TPC-H queries warm over the generator's directory.
func runTPCH(o options, queries []string) {
	ctx := context.Background()
	artifactDir, err := os.MkdirTemp("", "quarry-bench-artifacts-")
	if err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(artifactDir)
	t0 := time.Now()
	a, err := app.Open(ctx, app.Config{Data: o.tpch, ArtifactDir: artifactDir, CacheMemory: o.cacheMemory,
		QueryMemory: o.queryMemory, QueryTimeout: o.queryTimeout, ParquetCodec: o.parquetCodec, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fail("opening the data root: " + err.Error())
	}
	defer a.Close()
	rows := int64(0) // the largest table's (lineitem; x for the H2O join questions)
	for _, d := range a.Catalog.Datasets() {
		rows = max(rows, d.RowCount)
	}
	st := a.Service.Config().Cache.Stats()
	emit("LOAD", map[string]any{"peer": "ours", "mode": "warm", "secs": time.Since(t0).Seconds(), "rows": rows,
		"datasets": len(a.Catalog.Datasets()), "cache_bytes": st.Used, "cached_columns": st.Columns, "peak_rss_bytes": peakRSS()})
	for _, q := range queries {
		sql, err := tpchSQL(o.tpchQueries, q)
		if o.sqlAnalyze {
			sql = "EXPLAIN ANALYZE " + sql
		}
		for rep := 0; rep <= o.reps; rep++ {
			rec := map[string]any{"query": q, "rep": rep, "mode": "warm"}
			if err == nil {
				err = runSQL(ctx, a.Service, service.SQLRequest{SQL: sql, DeliveryOptions: service.DeliveryOptions{OutputFormat: o.sqlFormat, Confirm: o.sqlConfirm}}, rec, rep == 0)
			}
			if err != nil {
				rec["error"], rec["code"] = errText(err), qerr.Code(err)
			}
			rec["peak_rss_bytes"] = peakRSS()
			emit("RESULT", rec)
			if err != nil {
				break // refused or failed: the same again would say the same
			}
			runtime.GC()
		}
	}
}

// runSQL times one advanced_query call and fills rec (with the answer when
// answer is set).
func runSQL(ctx context.Context, svc *service.Service, req service.SQLRequest, rec map[string]any, answer bool) error {
	t0, c0 := time.Now(), cpuSecs()
	resp, err := svc.SQL(ctx, req)
	if err != nil {
		return err
	}
	rec["secs"] = time.Since(t0).Seconds()
	rec["cpu_secs"] = cpuSecs() - c0 // every thread of the process (USER_HZ resolution)
	res := resp.Result
	if res == nil {
		return fmt.Errorf("not run: %s (%s)", resp.Status, resp.Hint)
	}
	rec["rows"] = res.TotalRows
	rec["method"] = res.Method
	if an := resp.Analyze; an != nil {
		fmt.Fprintf(os.Stderr, "%s: %.1f ms\n", req.SQL[:min(len(req.SQL), 60)], an.TimeMs)
		for _, op := range an.Operators {
			fmt.Fprintf(os.Stderr, "%s%s: rows_in=%d rows_out=%d time=%.1fms  %s\n", strings.Repeat("  ", op.Depth), op.Op, op.RowsIn, op.RowsOut, op.TimeMs, op.Node)
		}
	}
	if !answer {
		return nil
	}
	cols, first, err := firstRecords(res.Data, firstRows)
	for err == nil && len(first) < firstRows && res.PageInfo != nil && res.PageInfo.HasMore {
		if res, err = svc.NextPage(ctx, service.NextPageRequest{ResultHandle: resp.Result.ResultHandle, PageToken: res.PageInfo.PageToken}); err == nil {
			var more [][]json.RawMessage
			_, more, err = firstRecords(res.Data, firstRows-len(first))
			first = append(first, more...)
		}
	}
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	rec["cols"], rec["first_rows"] = cols, first
	return nil
}

// firstRecords decodes up to n records of a materialize.Result's JSON data
// (an array of objects whose keys are in schema order) as rows, with the
// column names of the first record.
func firstRecords(data json.RawMessage, n int) ([]string, [][]json.RawMessage, error) {
	cols, rows := []string{}, [][]json.RawMessage{}
	if len(data) == 0 {
		return cols, rows, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, nil, fmt.Errorf("result data is not a JSON array of records")
	}
	for dec.More() && len(rows) < n {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil, nil, fmt.Errorf("result data is not a JSON array of records")
		}
		var row []json.RawMessage
		for i := 0; dec.More(); i++ {
			k, err := dec.Token()
			if err != nil {
				return nil, nil, err
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, nil, err
			}
			if len(rows) == 0 {
				cols = append(cols, fmt.Sprint(k))
			}
			row = append(row, v)
		}
		if _, err := dec.Token(); err != nil && err != io.EOF {
			return nil, nil, err
		}
		rows = append(rows, row)
	}
	return cols, rows, nil
}
