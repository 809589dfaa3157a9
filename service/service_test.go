package service

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// slowFormat serves "<n>.slow" files as a table of n rows (columns x int64
// and g string), produced in batches of slowBatch rows with a pause before
// each: a scan long enough to cancel or time out. It allocates with the
// scan's allocator, so a checked allocator sees every buffer.
type slowFormat struct{ pause time.Duration }

const slowBatch = 1000

var slowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "g", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func (slowFormat) Kind() catalog.Kind     { return catalog.Kind("slow") }
func (slowFormat) Match(name string) bool { return strings.HasSuffix(name, ".slow") }
func (f slowFormat) Open(_ context.Context, fi catalog.FileInfo) ([]*catalog.Dataset, error) {
	n, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(fi.RelPath), ".slow"), 10, 64)
	if err != nil {
		return nil, err
	}
	return []*catalog.Dataset{{ID: fi.BaseID, Kind: "slow", Path: fi.RelPath, AbsPath: fi.AbsPath, Schema: slowSchema,
		RowCount: n, RowCountExact: true, SizeBytes: fi.Size, ModTime: fi.ModTime, Source: &slowSource{rows: n, pause: f.pause}}}, nil
}

type slowSource struct {
	rows  int64
	pause time.Duration
}

func (s *slowSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	alloc := opts.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	cols := opts.Columns
	if len(cols) == 0 {
		cols = []string{"x", "g"}
	}
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, slowSchema.Field(slowSchema.FieldIndices(c)[0]))
	}
	return &slowReader{ctx: ctx, alloc: alloc, schema: arrow.NewSchema(fields, nil), left: s.rows, pause: s.pause}, nil
}

type slowReader struct {
	ctx    context.Context
	alloc  memory.Allocator
	schema *arrow.Schema
	left   int64
	next   int64
	pause  time.Duration
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
}

func (r *slowReader) Retain()                        { r.refs.Add(1) }
func (r *slowReader) Release()                       { r.release() }
func (r *slowReader) Schema() *arrow.Schema          { return r.schema }
func (r *slowReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *slowReader) Record() arrow.RecordBatch      { return r.cur }
func (r *slowReader) Err() error                     { return r.err }

func (r *slowReader) release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *slowReader) Next() bool {
	r.release()
	if r.left <= 0 || r.err != nil {
		return false
	}
	select {
	case <-r.ctx.Done():
		r.err = r.ctx.Err()
		return false
	case <-time.After(r.pause):
	}
	n := min(r.left, slowBatch)
	var cols []arrow.Array
	for _, f := range r.schema.Fields() {
		switch f.Name {
		case "x":
			b := array.NewInt64Builder(r.alloc)
			for i := range n {
				b.Append(r.next + i)
			}
			cols = append(cols, b.NewArray())
			b.Release()
		case "g":
			b := array.NewStringBuilder(r.alloc)
			for i := range n {
				b.Append(fmt.Sprintf("g%d", (r.next+i)%7))
			}
			cols = append(cols, b.NewArray())
			b.Release()
		}
	}
	r.cur = array.NewRecordBatch(r.schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	r.next += n
	r.left -= n
	return true
}

// newTestService builds a Service over root with the slow format and the
// CSV format, a checked allocator, and cfg's overrides applied by mod.
func newTestService(t testing.TB, root string, pause time.Duration, mod func(*Config)) (*Service, *memory.CheckedAllocator) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	cat, err := catalog.New(context.Background(), catalog.Options{Root: root, Logger: log,
		Formats: []catalog.Format{slowFormat{pause: pause}, csv.NewFormat()}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(artifacts.Options{Dir: t.TempDir(), DataRoot: cat.Root()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	reg := handles.New[*materialize.Table](handles.Options{})
	t.Cleanup(reg.Close)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cfg := Config{Catalog: cat, Artifacts: store, Alloc: alloc,
		Materializer: materialize.New(materialize.Config{Artifacts: store, Handles: reg})}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, alloc
}

func slowRoot(t *testing.T, rows ...int64) string {
	t.Helper()
	root := t.TempDir()
	for _, n := range rows {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("%d.slow", n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// waitFreed waits until every byte allocated by queries is released.
func waitFreed(t *testing.T, alloc *memory.CheckedAllocator) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alloc.CurrentAlloc() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	alloc.AssertSize(t, 0)
}

func confirmed(dataset string, spec planner.Spec) QueryRequest {
	return QueryRequest{EstimateRequest: EstimateRequest{Dataset: dataset, Spec: spec}, DeliveryOptions: DeliveryOptions{Confirm: true}}
}

func TestCancelFreesMemory(t *testing.T) {
	s, alloc := newTestService(t, slowRoot(t, 200_000), 5*time.Millisecond, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reports, maxDone, totalRows atomic.Int64
	ctx = WithProgress(ctx, func(done, total int64) {
		if done > maxDone.Load() {
			maxDone.Store(done)
		}
		totalRows.Store(total)
		if done > 0 && reports.Add(1) == 2 {
			cancel() // mid-scan
		}
	})
	_, err := s.Query(ctx, confirmed("200000", planner.Spec{GroupBy: []string{"g"}, Aggs: []planner.AggSpec{{Col: "x", Fn: "sum"}}}))
	if qerr.Code(err) != qerr.CodeCancelled {
		t.Fatalf("got %v, want cancelled", err)
	}
	// The scan stopped early: it never reported reaching the end.
	if maxDone.Load() >= totalRows.Load() {
		t.Fatalf("the scan ran to the end (%d of %d rows) despite the cancellation", maxDone.Load(), totalRows.Load())
	}
	waitFreed(t, alloc)
}

func TestTimeoutFreesMemory(t *testing.T) {
	s, alloc := newTestService(t, slowRoot(t, 200_000), 5*time.Millisecond, func(c *Config) { c.QueryTimeout = 30 * time.Millisecond })
	_, err := s.Query(context.Background(), confirmed("200000", planner.Spec{Columns: []string{"x"}}))
	if qerr.Code(err) != qerr.CodeTimeout {
		t.Fatalf("got %v, want timeout", err)
	}
	e := qerr.As(err)
	if e.Hint == "" || !strings.Contains(e.Hint, "query-timeout") {
		t.Fatalf("hint: %q", e.Hint)
	}
	waitFreed(t, alloc)
	// The other tools are bounded the same way.
	if _, err := s.DistinctValues(context.Background(), DistinctRequest{Dataset: "200000", Column: "g"}); qerr.Code(err) != qerr.CodeTimeout {
		t.Fatalf("distinct_values: %v", err)
	}
	if _, err := s.Summary(context.Background(), "200000"); qerr.Code(err) != qerr.CodeTimeout {
		t.Fatalf("summary: %v", err)
	}
	waitFreed(t, alloc)
}

// TestOneDeadlinePerRequest: the confirmation preflight and the run share
// the request's deadline; the run does not get a fresh QueryTimeout.
func TestOneDeadlinePerRequest(t *testing.T) {
	const timeout = time.Second
	// The preflight scans 80 batches of 10 ms (≥ 800 ms, under the
	// timeout); the run would take 4 s. With a timeout per phase the
	// request failed after ≥ 800 ms + 1 s.
	s, alloc := newTestService(t, slowRoot(t, 400_000), 10*time.Millisecond, func(c *Config) {
		c.QueryTimeout, c.SampleRows = timeout, 80_000
	})
	var preflight atomic.Int64
	ctx := WithProgress(context.Background(), func(done, total int64) {
		if total == 80_000 {
			preflight.Store(done)
		}
	})
	start := time.Now()
	_, err := s.Aggregate(ctx, AggregateRequest{Dataset: "400000", GroupBy: []string{"g"}, Aggs: []planner.AggSpec{{Col: "x", Fn: "sum"}}})
	elapsed := time.Since(start)
	if qerr.Code(err) != qerr.CodeTimeout {
		t.Fatalf("got %v, want timeout", err)
	}
	if preflight.Load() == 0 {
		t.Fatal("the preflight never ran")
	}
	if slack := 500 * time.Millisecond; elapsed > timeout+slack {
		t.Fatalf("the request failed after %v; its deadline was %v (+%v slack)", elapsed, timeout, slack)
	}
	waitFreed(t, alloc)
}

func TestSlowQueryDoesNotBlockOthers(t *testing.T) {
	s, _ := newTestService(t, slowRoot(t, 200_000, 10), 5*time.Millisecond, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var slowDone atomic.Bool
	wg.Go(func() {
		_, _ = s.Query(ctx, confirmed("200000", planner.Spec{Columns: []string{"x"}}))
		slowDone.Store(true)
	})
	time.Sleep(20 * time.Millisecond)
	res, err := s.Query(context.Background(), confirmed("10", planner.Spec{}))
	if err != nil || res.RowCount != 10 {
		t.Fatalf("fast query: %+v %v", res, err)
	}
	// The slow query only ends when cancelled (below) or after its whole
	// scan; had the fast one waited behind it, it would be done by now.
	if slowDone.Load() {
		t.Fatal("the fast query finished only after the slow one")
	}
	cancel()
	wg.Wait()
}

func TestProgressReports(t *testing.T) {
	s, _ := newTestService(t, slowRoot(t, 5_000), 0, nil)
	var mu sync.Mutex
	var got [][2]int64
	ctx := WithProgress(context.Background(), func(done, total int64) {
		mu.Lock()
		got = append(got, [2]int64{done, total})
		mu.Unlock()
	})
	if _, err := s.Query(ctx, confirmed("5000", planner.Spec{Columns: []string{"x"}})); err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got[0] != [2]int64{0, 5000} || got[len(got)-1] != [2]int64{5000, 5000} {
		t.Fatalf("reports: %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i][0] < got[i-1][0] {
			t.Fatalf("progress went down: %v", got)
		}
	}
}

func TestConfirmationPreflight(t *testing.T) {
	s, _ := newTestService(t, slowRoot(t, 50_000, 500), 0, func(c *Config) {
		c.ConfirmRows, c.SampleRows = 1000, 2000
	})
	ctx := context.Background()
	var scanned atomic.Int64
	pctx := WithProgress(ctx, func(done, _ int64) { scanned.Store(max(scanned.Load(), done)) })

	// Big dataset: sized from a sample, not run.
	q := QueryRequest{EstimateRequest: EstimateRequest{Dataset: "50000"}}
	res, err := s.Query(pctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusNeedsConfirmation || res.Result != nil || res.Estimate.EstimateKind != "sampled" ||
		res.Estimate.RowEstimate != 50_000 || res.Estimate.ConfirmRows != 1000 || len(res.Options) != 3 {
		t.Fatalf("needs confirmation: %+v %+v", res, res.Estimate)
	}
	if n := scanned.Load(); n > 2000 {
		t.Fatalf("the preflight scanned %d rows; the sample is 2000", n)
	}
	// A limit keeps it small: no question.
	few := q
	ten := int64(10)
	few.Limit = &ten
	if res, err = s.Query(ctx, few); err != nil || res.Status != "" || res.TotalRows != 10 {
		t.Fatalf("few rows: %+v %v", res, err)
	}
	// Aggregates group first.
	agg, err := s.Aggregate(ctx, AggregateRequest{Dataset: "50000", GroupBy: []string{"g"}, Aggs: []planner.AggSpec{{Col: "*", Fn: "count"}}})
	if err != nil || agg.Status != "" || agg.TotalRows != 7 {
		t.Fatalf("aggregate: %+v %v", agg, err)
	}
	// Small dataset: exact preflight, whose result is delivered as is.
	small := QueryRequest{EstimateRequest: EstimateRequest{Dataset: "500"}}
	if res, err = s.Query(ctx, small); err != nil || res.Status != "" || res.TotalRows != 500 {
		t.Fatalf("small: %+v %v", res, err)
	}
	// confirm skips the check; the first_page option limits the rows.
	opt := res
	if opt, err = s.Query(ctx, q); err != nil {
		t.Fatal(err)
	}
	var first map[string]any
	for _, o := range opt.Options {
		if o.Choice == ChoiceFirstPage {
			first = o.Args
		}
	}
	lim := first["limit"].(int64)
	q2 := q
	q2.Confirm, q2.Limit = true, &lim
	if res, err = s.Query(ctx, q2); err != nil || res.Status != "" || res.TotalRows != lim {
		t.Fatalf("first page: %+v %v", res, err)
	}
	// Thresholds off: never asks.
	off, _ := newTestService(t, slowRoot(t, 50_000), 0, func(c *Config) { c.ConfirmRows, c.ConfirmBytes = -1, -1 })
	if res, err = off.Query(ctx, q); err != nil || res.Status != "" {
		t.Fatalf("thresholds off: %+v %v", res, err)
	}
	if r, b := off.ConfirmThresholds(); r != 0 || b != 0 {
		t.Fatalf("thresholds off: %d %d", r, b)
	}
}

func TestDistinctAndSummaryCache(t *testing.T) {
	s, alloc := newTestService(t, slowRoot(t, 3_000), 0, nil)
	ctx := context.Background()
	one := int64(2)
	d, err := s.DistinctValues(ctx, DistinctRequest{Dataset: "3000", Column: "g", Limit: &one})
	if err != nil {
		t.Fatal(err)
	}
	if d.TotalDistinct != 7 || len(d.Values) != 2 || !d.Truncated || d.Values[0].Count != 429 || string(d.Values[0].Value) != `"g0"` {
		t.Fatalf("distinct: %+v", d)
	}
	if _, err := s.DistinctValues(ctx, DistinctRequest{Dataset: "3000", Column: "g"}); err != nil {
		t.Fatal(err)
	}
	if s.distinct.Len() != 1 {
		t.Fatalf("cache entries: %d (limit must not be part of the key)", s.distinct.Len())
	}
	sum, err := s.Summary(ctx, "3000")
	if err != nil {
		t.Fatal(err)
	}
	if sum.ProfiledRows != 3000 || sum.Sampled || sum.Columns[0].DistinctEstimate != 3000 || len(sum.Columns[0].TopValues) != 0 ||
		string(sum.Columns[0].Min) != "0" || string(sum.Columns[0].Max) != "2999" || sum.Columns[1].DistinctEstimate != 7 {
		t.Fatalf("summary: %+v", sum)
	}
	if _, err := s.Summary(ctx, "3000"); err != nil || s.profiles.Len() != 1 {
		t.Fatalf("summary cache: %d %v", s.profiles.Len(), err)
	}
	waitFreed(t, alloc)
}

func TestSummarySampled(t *testing.T) {
	s, _ := newTestService(t, slowRoot(t, 5_000), 0, func(c *Config) { c.SampleRows = 1000 })
	sum, err := s.Summary(context.Background(), "5000")
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Sampled || sum.ProfiledRows != 1000 || sum.RowCount != 5000 {
		t.Fatalf("sampled summary: %+v", sum)
	}
}

func TestDataRootLabel(t *testing.T) {
	root := t.TempDir()
	s, _ := newTestService(t, root, 0, nil)
	if got := s.DataRootLabel(); got != ".../"+filepath.Base(s.cfg.Catalog.Root()) {
		t.Fatalf("label %q", got)
	}
	s.cfg.Demo = true
	if got := s.DataRootLabel(); got != "bundled demo data" {
		t.Fatalf("demo label %q", got)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	dir, err := os.MkdirTemp(home, ".quarry-label-test-")
	if err != nil {
		t.Skip("home not writable")
	}
	defer os.RemoveAll(dir)
	hs, _ := newTestService(t, dir, 0, nil)
	if got := hs.DataRootLabel(); got != "~/"+filepath.Base(dir) {
		t.Fatalf("home label %q", got)
	}
}

func TestParseDatasetURI(t *testing.T) {
	for _, tc := range []struct {
		uri, id, kind string
		ok            bool
	}{
		{"quarry://datasets/a%2Fb%2Fc/schema", "a/b/c", "schema", true},
		{"quarry://datasets/x/summary", "x", "summary", true},
		{"quarry://datasets/x%20y/catalog", "x y", "catalog", true},
		{"quarry://datasets/x/other", "", "", false},
		{"quarry://datasets//schema", "", "", false},
		{"quarry://datasets/%zz/schema", "", "", false},
	} {
		id, kind, ok := ParseDatasetURI(tc.uri)
		if id != tc.id || kind != tc.kind || ok != tc.ok {
			t.Errorf("%s: %q %q %v", tc.uri, id, kind, ok)
		}
		if tc.ok && DatasetURI(id, kind) != tc.uri && !strings.Contains(tc.uri, "%20") {
			t.Errorf("round trip %s -> %s", tc.uri, DatasetURI(id, kind))
		}
	}
}

func TestCompleteDatasets(t *testing.T) {
	s, _ := newTestService(t, slowRoot(t, 10, 100, 1000), 0, nil)
	got, total := s.CompleteDatasets("10")
	if strings.Join(got, ",") != "10,100,1000" || total != 3 {
		t.Fatalf("%v %d", got, total)
	}
	if got, _ := s.CompleteColumns("1000", "G"); strings.Join(got, ",") != "g" {
		t.Fatalf("columns %v", got)
	}
	if got, _ := s.CompleteColumns("nope", ""); got != nil {
		t.Fatalf("unknown dataset: %v", got)
	}
}

func TestQueryResponseJSON(t *testing.T) {
	for _, q := range []*QueryResponse{
		{Status: StatusNeedsConfirmation, Estimate: &ConfirmEstimate{RowEstimate: 5}, Options: []ConfirmOption{{Choice: ChoiceCancel}}, Hint: "ask"},
		{Result: &materialize.Result{Method: "direct", Data: []byte(`[{"a":1}]`), RowCount: 1, TotalRows: 1, Warnings: []string{}}},
	} {
		fast, err := q.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var a, b map[string]any
		std, _ := json.Marshal(q)
		if json.Unmarshal(fast, &a) != nil || json.Unmarshal(std, &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("AppendJSON %s != json.Marshal %s", fast, std)
		}
	}
}
