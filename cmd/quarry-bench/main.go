// Command quarry-bench runs the peer benchmark's queries (see
// ../shared/bench/README.md, "Runner protocol") through Quarry's own
// catalog, planner, engine, column cache and Parquet writer, and prints one
// RESULT line per query and rep.
//
//	quarry-bench --mode cold|warm --queries Q1,Q2,... --reps R --csv PATH --h5 PATH --outdir DIR
//
// cold: every query (the harness starts one process per query and rep)
// opens a fresh catalog over the CSV (type inference and row count) and runs
// the query; the timing covers both. warm: one process builds the catalog
// and fills the column cache with every column once (reported as LOAD),
// then runs every query reps times from the cache.
//
// Queries are planner.Specs built here, the same JSON an MCP client would
// send; nothing in the engine knows about them. A query whose knobs the
// planner or engine does not support yet reports "error" in its RESULT
// line.
//
// The HDF5 queries H1-H8 (see h5.go) read the file given by --h5 through
// hdf5.Format.ReadSlice, the read path of the read_dataset_slice tool: the
// timing runs from issuing the read to the selection materialized as an
// Arrow array. cold: each rep opens the file inside the timing (a fresh
// Format, closed before the clock stops), as h5py's cold runner does;
// warm: one Format opens the file once (LOAD) and keeps it open. rows is
// the length of the first dimension read and the first rows follow
// runners/h5py_runner.py (H2, H3 and H6 lead with the total sum). A run
// with only H queries needs no --csv.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/service"
)

var version = "dev"

// firstRows is how many rows a RESULT line carries (the checksum's).
const firstRows = 100

type options struct {
	mode, queries, csv, h5, outdir string
	tpch, tpchQueries              string
	sqlFormat                      string // --tpch: advanced_query's output_format
	parquetCodec                   string // --tpch: quarry serve --parquet-codec
	sqlConfirm                     bool   // --tpch: advanced_query's confirm
	sqlAnalyze                     bool   // --tpch: EXPLAIN ANALYZE, the operators to stderr
	queryTimeout                   time.Duration
	reps                           int
	cpuprofile, trace              string
	cacheMemory                    int64
	coldKeep                       bool
	h2oSQL                         bool
	queryMemory                    int64
}

func main() {
	var o options
	fs := flag.NewFlagSet("quarry-bench", flag.ExitOnError)
	fs.StringVar(&o.mode, "mode", "cold", "cold or warm")
	fs.StringVar(&o.queries, "queries", "all", "comma-separated queries (Q1-Q8, H1-H8) or all (H1-H8 only with --h5)")
	fs.StringVar(&o.queries, "query", "all", "alias of --queries")
	fs.IntVar(&o.reps, "reps", 1, "repetitions of each query")
	fs.StringVar(&o.csv, "csv", "", "the sales CSV (required for Q1-Q8)")
	fs.StringVar(&o.h5, "h5", "", "the sales HDF5 file (required for H1-H8)")
	fs.StringVar(&o.outdir, "outdir", os.TempDir(), "where Q6 writes its Parquet file")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&o.trace, "trace", "", "write an execution trace of the whole run to this file")
	fs.Int64Var(&o.cacheMemory, "cache-memory", colcache.DefaultBudget(), "column cache budget in bytes (warm mode); 0 disables it")
	fs.Int64Var(&o.queryMemory, "query-memory", 1<<30, "Arrow memory budget of one query, bytes (as quarry serve)")
	fs.StringVar(&o.tpch, "tpch", "", "run the TPC-H-style queries (bench/tpch) over this generator output directory through advanced_query's path, warm (see tpch.go)")
	fs.StringVar(&o.tpchQueries, "tpch-queries", "bench/tpch/queries", "the directory of the TPC-H q01.sql..q22.sql files")
	fs.StringVar(&o.parquetCodec, "parquet-codec", "", "--tpch: compression of Parquet results (quarry serve --parquet-codec; default as serve)")
	fs.StringVar(&o.sqlFormat, "sql-format", "", "--tpch: advanced_query's output_format (parquet: the result as a file; default inline JSON or pages)")
	fs.BoolVar(&o.sqlConfirm, "sql-confirm", false, "--tpch: confirm large results (advanced_query's confirm) instead of stopping at needs_confirmation")
	fs.BoolVar(&o.sqlAnalyze, "sql-analyze", false, "--tpch: run each statement as EXPLAIN ANALYZE and print its operators (rows, time) to stderr")
	fs.DurationVar(&o.queryTimeout, "query-timeout", service.DefaultQueryTimeout, "--tpch: time limit of one query (quarry serve --query-timeout)")
	fs.BoolVar(&o.coldKeep, "cold-keep", true, "cold: open the catalog with the cache as column keeper, as quarry serve does (one pass parses every column); false: type-check only, then the query reads its columns from the file")
	fs.BoolVar(&o.h2oSQL, "h2o-sql", false, "run the H2O questions G1-G10 from their SQL text (advanced_query's compiler, h2o_sql.go) instead of their knob specs")
	_ = fs.Parse(os.Args[1:])
	if o.mode != "cold" && o.mode != "warm" {
		fail("--mode must be cold or warm")
	}
	queries := strings.Split(o.queries, ",")
	if o.tpch != "" {
		if o.mode != "warm" {
			fail("--tpch runs warm only (--mode warm); its LOAD line is the cold part")
		}
		if o.queries == "all" {
			var err error
			if queries, err = tpchQueries(o.tpchQueries); err != nil {
				fail(err.Error())
			}
		}
	} else if o.queries == "all" {
		queries = []string{"Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8"}
		if o.h5 != "" {
			queries = append(queries, h5QueryNames...)
		}
	}
	var csvQueries, hQueries []string
	for _, q := range queries {
		if o.tpch != "" {
			continue // runTPCH's
		} else if isH5Query(q) {
			hQueries = append(hQueries, q)
		} else {
			csvQueries = append(csvQueries, q)
		}
	}
	if o.csv == "" && len(csvQueries) > 0 {
		fail("--csv PATH is required")
	}
	if o.h5 == "" && len(hQueries) > 0 {
		fail("--h5 PATH is required for H1-H8")
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			fail(err.Error())
		}
		_ = pprof.StartCPUProfile(f)
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if o.trace != "" {
		f, err := os.Create(o.trace)
		if err != nil {
			fail(err.Error())
		}
		_ = trace.Start(f)
		defer func() {
			trace.Stop()
			f.Close()
		}()
	}
	emit("INFO", map[string]any{"peer": "ours", "version": version, "go": runtime.Version(), "gomaxprocs": runtime.GOMAXPROCS(0)})
	if err := os.MkdirAll(o.outdir, 0o755); err != nil {
		fail(err.Error())
	}
	if o.tpch != "" {
		runTPCH(o, queries)
	}
	if len(csvQueries) > 0 {
		root, id, cleanup, err := dataRoot(o.csv)
		if err != nil {
			fail(err.Error())
		}
		defer cleanup()
		r := &runner{o: o, root: root, id: id}
		if o.mode == "warm" {
			r.warm(csvQueries)
		} else {
			r.cold(csvQueries)
		}
	}
	if len(hQueries) > 0 {
		runH5(o, hQueries)
	}
	emit("MEM", map[string]any{"peak_rss_bytes": peakRSS(), "csv_bytes": fileSize(o.csv)})
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "quarry-bench:", msg)
	os.Exit(2)
}

func emit(tag string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": err.Error()})
	}
	fmt.Printf("%s %s\n", tag, b)
}

// dataRoot returns a data root holding only the CSV (a hard link in a
// temporary directory, so the catalog does not scan its neighbours), or
// the CSV's own directory when linking is impossible; and the dataset id.
func dataRoot(csv string) (root, id string, cleanup func(), err error) {
	abs, err := filepath.Abs(csv)
	if err != nil {
		return "", "", nil, err
	}
	base := filepath.Base(abs)
	id = strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), filepath.Ext(strings.TrimSuffix(base, ".gz")))
	dir, err := os.MkdirTemp("", "quarry-bench-")
	if err == nil {
		if err = os.Link(abs, filepath.Join(dir, base)); err == nil {
			return dir, id, func() { os.RemoveAll(dir) }, nil
		}
		os.RemoveAll(dir)
	}
	return filepath.Dir(abs), id, func() {}, nil
}

type runner struct {
	o     options
	root  string
	id    string
	cache *colcache.Cache
	cpu0  float64 // warm: cpuSecs when the running query started
}

// open builds a catalog over the root and returns the dataset. With a
// cache, opening the CSV also parses its columns into the cache.
func (r *runner) open(ctx context.Context) (*catalog.Dataset, error) {
	var keeper catalog.ColumnKeeper
	if r.cache.Enabled() {
		keeper = r.cache
	}
	cat, err := catalog.New(ctx, catalog.Options{Root: r.root, Formats: []catalog.Format{csv.NewFormatWith(csv.Options{Keeper: keeper}), catalog.NewParquetFormat(catalog.Limits{}),
		catalog.NewArrowFormat(catalog.Limits{}), catalog.NewJSONFormatWith(catalog.JSONOptions{Keeper: keeper})},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	return cat.Lookup(r.id)
}

func (r *runner) cold(queries []string) {
	ctx := context.Background()
	for _, q := range queries {
		for rep := 1; rep <= r.o.reps; rep++ {
			rec := map[string]any{"query": q, "rep": rep}
			t0 := time.Now()
			budget := r.o.cacheMemory
			if !r.o.coldKeep {
				budget = 0
			}
			r.cache = colcache.New(colcache.Options{Budget: budget})
			ds, err := r.open(ctx)
			if err == nil {
				err = r.run(ctx, q, rep, ds, r.cache.Wrap(ds), rec, t0)
			}
			r.cache.Purge()
			if err != nil {
				rec["error"] = errText(err)
			}
			emit("RESULT", rec)
		}
	}
}

func (r *runner) warm(queries []string) {
	ctx := context.Background()
	r.cache = colcache.New(colcache.Options{Budget: r.o.cacheMemory})
	t0 := time.Now()
	ds, err := r.open(ctx)
	if err == nil {
		err = r.fill(ctx, ds)
	}
	load := time.Since(t0).Seconds()
	if err != nil {
		for _, q := range queries {
			for rep := 1; rep <= r.o.reps; rep++ {
				emit("RESULT", map[string]any{"query": q, "rep": rep, "error": "load failed: " + errText(err)})
			}
		}
		return
	}
	runtime.GC()
	debug.FreeOSMemory()
	st := r.cache.Stats()
	emit("LOAD", map[string]any{"peer": "ours", "mode": "warm", "secs": load, "rows": ds.RowCount,
		"cache_bytes": st.Used, "cached_columns": st.Columns, "peak_rss_bytes": peakRSS(), "rss": rssBreakdown()})
	src := r.cache.Wrap(ds)
	for _, q := range queries {
		for rep := 1; rep <= r.o.reps; rep++ {
			rec := map[string]any{"query": q, "rep": rep}
			r.cpu0 = cpuSecs()
			if err := r.run(ctx, q, rep, ds, src, rec, time.Now()); err != nil {
				rec["error"] = errText(err)
			}
			rec["peak_rss_bytes"] = peakRSS()
			emit("RESULT", rec)
		}
	}
}

// fill reads every column once through the cache.
func (r *runner) fill(ctx context.Context, ds *catalog.Dataset) error {
	rr, err := r.cache.Wrap(ds).Scan(ctx, catalog.ScanOptions{})
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
	}
	if err := rr.Err(); err != nil {
		return err
	}
	if !r.cache.Wrap(ds).(*colcache.Source).Cached(nil) {
		return fmt.Errorf("the columns do not fit in the cache (%d bytes budget)", r.o.cacheMemory)
	}
	return nil
}

func errText(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// specs are the CSV queries as Quarry query specs.
func spec(q string) (planner.Spec, error) {
	i64 := func(v int64) *int64 { return &v }
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	switch q {
	case "Q1":
		return planner.Spec{
			Filters: []planner.FilterSpec{{Col: "region", Op: planner.OpEq, Value: raw(`"north"`)}},
			Aggs:    []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: "n"}},
		}, nil
	case "Q2":
		return planner.Spec{
			GroupBy: []string{"category"},
			Aggs: []planner.AggSpec{
				{Col: "qty * price", Fn: planner.AggSum, As: "revenue"},
				{Col: "price", Fn: planner.AggAvg, As: "avg_price"},
				{Col: "*", Fn: planner.AggCount, As: "n"},
			},
			OrderBy: []planner.OrderSpec{{Col: "category"}},
		}, nil
	case "Q3":
		return planner.Spec{
			GroupBy: []string{"region", "category"},
			Aggs: []planner.AggSpec{
				{Col: "product", Fn: planner.AggCountDistinct, As: "n_products"},
				{Col: "price", Fn: planner.AggMedian, As: "median_price"},
			},
			OrderBy: []planner.OrderSpec{{Col: "region"}, {Col: "category"}},
		}, nil
	case "Q4":
		return planner.Spec{
			GroupBy: []string{"product"},
			Aggs:    []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: "n"}},
			OrderBy: []planner.OrderSpec{{Col: "n", Desc: true}, {Col: "product"}},
			Limit:   i64(20),
		}, nil
	case "Q5":
		return planner.Spec{
			Columns: []string{"id", "price"},
			Filters: []planner.FilterSpec{
				{Col: "price", Op: planner.OpRange, Value: raw(`{"min": 10, "max": 20}`)},
				{Col: "note", Op: planner.OpContains, Value: raw(`"a"`)},
			},
			OrderBy: []planner.OrderSpec{{Col: "price", Desc: true}, {Col: "id"}},
			Limit:   i64(100),
		}, nil
	case "Q6":
		return planner.Spec{Columns: []string{"id", "region", "price"}}, nil
	case "Q7":
		return planner.Spec{Offset: i64(2_000_000), Limit: i64(1000)}, nil
	case "Q8":
		return planner.Spec{
			Filters: []planner.FilterSpec{{Col: "discount", Op: planner.OpIsNull}},
			Aggs:    []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: "n"}},
		}, nil
	}
	return h2oSpec(q)
}

// run executes query q over src and fills rec; t0 is when the timing started.
func (r *runner) run(ctx context.Context, q string, rep int, ds *catalog.Dataset, src catalog.Source, rec map[string]any, t0 time.Time) error {
	plan, err := r.queryPlan(ctx, q, ds, src, false)
	if err != nil {
		return err
	}
	schema, batches, rows, err := r.executePlan(ctx, plan, src)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if err != nil {
		return err
	}
	if q == "Q6" {
		out := filepath.Join(r.o.outdir, "ours_"+r.o.mode+"_Q6.parquet")
		if err := writeParquet(ctx, out, schema, batches); err != nil {
			return err
		}
		rec["secs"] = time.Since(t0).Seconds()
		n, err := describeParquet(out, rec, rep == 1)
		if err != nil {
			return err
		}
		rec["rows"] = n
		rec["compression"] = "snappy"
		return nil
	}
	rec["secs"] = time.Since(t0).Seconds()
	if r.cpu0 > 0 { // warm: the CPU time of the timed part, every thread
		rec["cpu_secs"] = cpuSecs() - r.cpu0
	}
	rec["rows"] = rows
	if rep == 1 && isH2OQuery(q) {
		return r.describeH2O(ctx, q, ds, src, rec)
	}
	if rep == 1 {
		describe(schema, batches, rec)
	}
	return nil
}

// datasetInput is the planner input of ds read through src (the column
// cache's plan schema when src is the cache).
func datasetInput(ds *catalog.Dataset, src catalog.Source) planner.Input {
	return planner.Input{Dataset: ds.ID, Schema: colcache.PlanSchema(src, ds), RowCount: ds.RowCount, RowCountExact: ds.RowCountExact}
}

// specPlan builds and optimizes sp over in.
func specPlan(sp planner.Spec, in planner.Input) (planner.Node, error) {
	return specPlanWith(sp, in, planner.OptimizeOptions{})
}

// specPlanWith is specPlan with the optimizer's options.
func specPlanWith(sp planner.Spec, in planner.Input, opts planner.OptimizeOptions) (planner.Node, error) {
	plan, err := planner.Build(sp, in)
	if err != nil {
		return nil, err
	}
	return planner.Optimize(plan, opts)
}

// executePlan runs an optimized plan over src and materializes the result:
// its schema, its (non-empty) batches and row count.
func (r *runner) executePlan(ctx context.Context, plan planner.Node, src catalog.Source) (*arrow.Schema, []arrow.RecordBatch, int64, error) {
	rr, err := engine.Execute(ctx, plan, src, engine.Options{Alloc: memory.DefaultAllocator, MemoryLimit: r.o.queryMemory})
	if err != nil {
		return nil, nil, 0, err
	}
	batches, rows, err := collect(rr)
	rr.Release()
	return plan.Schema(), batches, rows, err
}

// collect drains rr, keeping its (non-empty) batches: the materialized
// result.
func collect(rr array.RecordReader) ([]arrow.RecordBatch, int64, error) {
	var out []arrow.RecordBatch
	var rows int64
	for rr.Next() {
		b := rr.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		out = append(out, b)
		rows += b.NumRows()
	}
	return out, rows, rr.Err()
}

// writeParquet writes the batches with materialize.WriteParquetWith,
// snappy-compressed like the peers' Q6 files (see the harness README).
func writeParquet(ctx context.Context, path string, schema *arrow.Schema, batches []arrow.RecordBatch) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := materialize.WriteParquetWith(ctx, f, schema, batches, materialize.ParquetOptions{Codec: materialize.ParquetSnappy}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// describe sets cols, kinds and first_rows from batches.
func describe(schema *arrow.Schema, batches []arrow.RecordBatch, rec map[string]any) {
	cols := make([]string, schema.NumFields())
	kinds := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = f.Name
		kinds[i] = kindOf(f.Type)
	}
	rows := [][]any{}
	for _, b := range batches {
		for i := range int(b.NumRows()) {
			if len(rows) == firstRows {
				break
			}
			row := make([]any, b.NumCols())
			for c := range int(b.NumCols()) {
				row[c] = cell(b.Column(c), i)
			}
			rows = append(rows, row)
		}
	}
	rec["cols"], rec["kinds"], rec["first_rows"] = cols, kinds, rows
}

func kindOf(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return "i"
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256:
		return "f"
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64:
		return "t"
	case arrow.BOOL:
		return "b"
	}
	return "s"
}

// cell is one value in the protocol's JSON form: ints as decimal strings,
// floats as numbers (non-finite as strings), timestamps as ISO strings.
func cell(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	case *array.Int32:
		return fmt.Sprint(a.Value(i))
	case *array.Uint64:
		return fmt.Sprint(a.Value(i))
	case *array.Float64:
		return jsonFloat(a.Value(i))
	case *array.Float32:
		return jsonFloat(float64(a.Value(i)))
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return strings.Clone(a.Value(i)) // Value views Arrow memory, which is released before the line is printed
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC().Format("2006-01-02T15:04:05.999999999")
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	case *array.Dictionary:
		return cell(a.Dictionary(), a.GetValueIndex(i))
	}
	return strings.Clone(a.ValueStr(i))
}

func jsonFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprint(f)
	}
	return f
}

// peakRSS is VmHWM from /proc/self/status, in bytes (0 if unknown).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// cpuSecs is the process's user+system CPU time so far (every thread,
// from /proc/self/stat at USER_HZ 100), or 0 where it cannot be read.
func cpuSecs() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	_, rest, ok := strings.Cut(string(b), ") ") // after the command name, which may hold spaces
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime) // fields 14 and 15 of the line
	fmt.Sscan(f[12], &stime)
	return float64(utime+stime) / 100
}

// rssBreakdown is the current resident set by kind (/proc/self/status), bytes.
func rssBreakdown() map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		for _, k := range []string{"VmRSS", "RssAnon", "RssFile"} {
			if rest, ok := strings.CutPrefix(line, k+":"); ok {
				var kb int64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
				out[k] = kb << 10
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out["GoHeapInuse"] = int64(ms.HeapInuse)
	out["GoSys"] = int64(ms.Sys)
	return out
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
