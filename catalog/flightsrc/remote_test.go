package flightsrc_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/example"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/flightsrc"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/mcpapi/transport"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/service"
)

// liteServer is arrow-go's example SQLite Flight SQL server, recording
// the statements it is sent and optionally slow to answer them.
type liteServer struct {
	*example.SQLiteFlightSQLServer
	db      *sql.DB
	addr    string
	mu      sync.Mutex
	queries []string
	delay   atomic.Int64 // ns GetFlightInfoStatement waits
}

func (s *liteServer) GetFlightInfoStatement(ctx context.Context, cmd fsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	s.mu.Lock()
	s.queries = append(s.queries, cmd.GetQuery())
	s.mu.Unlock()
	if d := time.Duration(s.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.SQLiteFlightSQLServer.GetFlightInfoStatement(ctx, cmd, desc)
}

// sent returns the statements received since the last call.
func (s *liteServer) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queries
	s.queries = nil
	return q
}

var dbSeq atomic.Int64

// row is one generated sales row (nil fields are nulls).
type row struct {
	ID     int64   `json:"id"`
	Region *string `json:"region"`
	Qty    int64   `json:"qty"`
	Price  float64 `json:"price"`
	Note   string  `json:"note"`
}

func genRows(n int) []row {
	regions := []string{"north", "south", "east", "west"}
	out := make([]row, n)
	for i := range out {
		r := row{ID: int64(i), Qty: int64(i*7) % 50, Price: float64(i%100)/4 + 0.25, Note: fmt.Sprintf("n%05d", i)}
		if i%17 != 0 {
			r.Region = &regions[i%4]
		}
		out[i] = r
	}
	return out
}

// startLite serves a fresh in-memory SQLite database holding table sales
// (rows), and what the statements extra make, through arrow-go's example
// server.
func startLite(t testing.TB, rows []row, extra ...string) *liteServer {
	t.Helper()
	db, err := sql.Open("sqlite", fmt.Sprintf("file:quarry-flightsrc-%d?mode=memory&cache=shared", dbSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE sales (id integer, region varchar(20), qty int, price double, note text)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO sales VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var region any
		if r.Region != nil {
			region = *r.Region
		}
		if _, err := st.Exec(r.ID, region, r.Qty, r.Price, r.Note); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, q := range extra {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ex, err := example.NewSQLiteFlightSQLServer(db)
	if err != nil {
		t.Fatal(err)
	}
	s := &liteServer{SQLiteFlightSQLServer: ex, db: db}
	srv := flight.NewServerWithMiddleware(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.InitListener(ln)
	srv.RegisterFlightService(fsql.NewFlightServer(s))
	go func() { _ = srv.Serve() }()
	t.Cleanup(srv.Shutdown)
	s.addr = ln.Addr().String()
	return s
}

// writeJSONL writes rows as root/sales.jsonl: the same data as a local dataset.
func writeJSONL(t testing.TB, root string, rows []row) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "sales.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openApp opens a Quarry over root with remotes.
func openApp(t testing.TB, root string, remotes ...flightsrc.Config) *app.App {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{Data: root, ArtifactDir: t.TempDir(), FlightSQL: remotes,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// rowsOf runs sql through the service (the advanced_query path) and
// returns its rows as text.
func rowsOf(t testing.TB, a *app.App, sql string) [][]string {
	t.Helper()
	ctx := context.Background()
	st, err := a.Service.PrepareSQLStatement(ctx, sql, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out [][]string
	err = st.Stream(ctx, func(_ context.Context, rr array.RecordReader) error {
		for rr.Next() {
			b := rr.RecordBatch()
			for i := range int(b.NumRows()) {
				r := make([]string, b.NumCols())
				for j := range r {
					r[j] = b.Column(j).ValueStr(i)
				}
				out = append(out, r)
			}
		}
		return rr.Err()
	})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// queries run on a remote table ({T}) and on the same local data: the
// rows must be the same.
var queries = []string{
	`SELECT id, region, qty, price, note FROM {T} ORDER BY id`,
	`SELECT id, note FROM {T} WHERE qty >= 40 AND region = 'north' ORDER BY id`,
	`SELECT id FROM {T} WHERE region IN ('east', 'west') AND price < 3 AND qty <> 7 ORDER BY id`,
	`SELECT id, region FROM {T} WHERE region IS NULL OR qty = 0 ORDER BY id`,
	`SELECT id, qty FROM {T} WHERE id BETWEEN 100 AND 120 AND note LIKE 'n001%' ORDER BY id`,
	`SELECT region, count(*) AS n, sum(qty) AS q, avg(price) AS p, min(note) AS lo FROM {T} WHERE id > 50 GROUP BY region ORDER BY region`,
	`SELECT id, note FROM {T} WHERE qty > 45 LIMIT 7`,
	`SELECT region, count(*) AS n, sum(qty) AS q, min(note) AS lo, max(id) AS hi, count(region) AS c FROM {T} WHERE id > 50 GROUP BY region ORDER BY region`,
	`SELECT count(*) AS n, sum(id) AS s FROM {T} WHERE qty < 10`,
	`SELECT qty, count(*) AS n FROM {T} GROUP BY qty ORDER BY n DESC, qty LIMIT 5`,
	`SELECT id FROM {T} LIMIT 5 OFFSET 30`,
	`SELECT upper(region) AS r, qty * 2 AS q2 FROM {T} WHERE id < 40 ORDER BY id DESC LIMIT 4`,
	`SELECT region, avg(qty) AS a, sum(price) AS s, avg(price) AS ap FROM {T} WHERE qty > 3 GROUP BY region ORDER BY region`,
	`SELECT qty, count(*) AS n, max(id) AS hi FROM {T} GROUP BY qty HAVING count(*) > 20 AND max(id) < 2975 ORDER BY qty`,
	`SELECT id, qty FROM {T} WHERE qty > 10 ORDER BY id DESC LIMIT 6`,
	`SELECT note, id FROM {T} ORDER BY note DESC LIMIT 4 OFFSET 2`,
	`SELECT region, count(*) AS n FROM {T} GROUP BY region ORDER BY region NULLS FIRST LIMIT 3`,
	`SELECT qty FROM {T} GROUP BY qty ORDER BY count(*) DESC, qty LIMIT 4`,
	`SELECT region, count(DISTINCT qty) AS d FROM {T} WHERE id > 7 GROUP BY region ORDER BY region`,
}

func sameRows(t testing.TB, q string, remote, local [][]string) {
	t.Helper()
	if len(remote) != len(local) {
		t.Fatalf("%s: %d rows remote, %d local", q, len(remote), len(local))
	}
	if len(remote) == 0 {
		t.Fatalf("%s: no rows (the test would prove nothing)", q)
	}
	for i := range remote {
		if strings.Join(remote[i], "|") != strings.Join(local[i], "|") {
			t.Fatalf("%s: row %d remote %v, local %v", q, i, remote[i], local[i])
		}
	}
}

func TestSQLiteRemote(t *testing.T) {
	rows := genRows(3000)
	lite := startLite(t, rows)
	root := t.TempDir()
	writeJSONL(t, root, rows)
	a := openApp(t, root, flightsrc.Config{Name: "lite", URI: "grpc://" + lite.addr, FloatSums: true})

	d, err := a.Catalog.Lookup("remote/lite/sales")
	if err != nil {
		t.Fatalf("%v (datasets: %v, diagnostics: %v)", err, ids(a.Catalog.Datasets()), a.Catalog.Diagnostics())
	}
	if d.Kind != catalog.KindFlightSQL || d.RowCount != int64(len(rows)) || !d.RowCountExact {
		t.Errorf("dataset %+v", d)
	}
	want := "id: int64, region: utf8, qty: int64, price: float64, note: utf8"
	if got := schemaText(d.Schema); got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	for _, q := range queries {
		lite.sent()
		remote := rowsOf(t, a, strings.ReplaceAll(q, "{T}", `"remote/lite/sales"`))
		sent := lite.sent()
		local := rowsOf(t, a, strings.ReplaceAll(q, "{T}", "sales"))
		sameRows(t, q, remote, local)
		if len(sent) != 1 {
			t.Errorf("%s: %d statements sent: %q", q, len(sent), sent)
		}
		t.Logf("%s\n  -> %s", q, sent)
	}
	// What was pushed.
	for q, want := range map[string]string{
		`SELECT id, note FROM "remote/lite/sales" WHERE qty > 45 LIMIT 7`:                                              `SELECT "id", "qty", "note" FROM "sales" WHERE "qty" > 45 LIMIT 7`,
		`SELECT id FROM "remote/lite/sales" LIMIT 5 OFFSET 30`:                                                         `SELECT "id" FROM "sales" LIMIT 5 OFFSET 30`,
		`SELECT note FROM "remote/lite/sales" WHERE note LIKE 'n1%' LIMIT 2`:                                           `SELECT "note" FROM "sales"`,
		`SELECT count(*) FROM "remote/lite/sales" WHERE region = 'east'`:                                               `SELECT count(*) AS "count_all" FROM "sales" WHERE "region" = 'east'`,
		`SELECT id, qty FROM "remote/lite/sales" WHERE qty > 10 ORDER BY id DESC LIMIT 6`:                              `SELECT "id", "qty" FROM "sales" WHERE "qty" > 10 ORDER BY "id" DESC NULLS LAST LIMIT 6`,
		`SELECT region, avg(qty) AS a, sum(price) AS s FROM "remote/lite/sales" GROUP BY region`:                       `SELECT "region", CAST(sum("qty") AS DOUBLE PRECISION) / count("qty") AS "a", sum("price") AS "s" FROM "sales" GROUP BY "region"`,
		`SELECT qty, count(*) AS n FROM "remote/lite/sales" GROUP BY qty HAVING count(*) > 20 ORDER BY n DESC LIMIT 5`: `SELECT "qty", count(*) AS "n" FROM "sales" GROUP BY "qty" HAVING count(*) > 20 ORDER BY "n" DESC NULLS LAST LIMIT 5`,
		`SELECT qty FROM "remote/lite/sales" GROUP BY qty ORDER BY count(*) DESC, qty LIMIT 4`:                         `SELECT "qty" FROM "sales" GROUP BY "qty" ORDER BY count(*) DESC NULLS LAST, "qty" NULLS LAST LIMIT 4`,
		`SELECT region, count(*) AS n FROM "remote/lite/sales" GROUP BY region ORDER BY region NULLS FIRST LIMIT 3`:    `SELECT "region", count(*) AS "n" FROM "sales" GROUP BY "region" ORDER BY "region" NULLS FIRST LIMIT 3`,
		// Stay local: a float sort key (NaN placement), a sort without a limit.
		`SELECT id FROM "remote/lite/sales" ORDER BY price DESC, id LIMIT 3`:               `SELECT "id", "price" FROM "sales"`,
		`SELECT region, sum(qty) AS q FROM "remote/lite/sales" GROUP BY region ORDER BY q`: `SELECT "region", sum("qty") AS "q" FROM "sales" GROUP BY "region"`,
	} {
		lite.sent()
		rowsOf(t, a, q)
		if got := lite.sent(); len(got) != 1 || got[0] != want {
			t.Errorf("%s: sent %q, want %q", q, got, want)
		}
	}
}

// TestExplainShowsSQL: estimate_query's physical plan shows the
// statement sent to the remote.
func TestExplainShowsSQL(t *testing.T) {
	lite := startLite(t, genRows(100))
	a := openApp(t, t.TempDir(), flightsrc.Config{Name: "lite", URI: "grpc://" + lite.addr})
	est, err := a.Service.EstimateQuery(context.Background(), service.EstimateQueryRequest{SQL: `SELECT id FROM "remote/lite/sales" WHERE qty < 3 LIMIT 4`})
	if err != nil {
		t.Fatal(err)
	}
	if want := `remote lite: SELECT "id", "qty" FROM "sales" WHERE "qty" < 3 LIMIT 4`; !strings.Contains(est.PhysicalPlan, want) {
		t.Errorf("physical plan:\n%s\nwant %s", est.PhysicalPlan, want)
	}
}

func ids(ds []*catalog.Dataset) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func schemaText(sc *arrow.Schema) string {
	parts := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		parts[i] = f.Name + ": " + f.Type.String()
	}
	return strings.Join(parts, ", ")
}

// TestQuarryRemote: Quarry serving Quarry. B's Flight SQL facade (with a
// token) over a data root; A lists it as remote q and answers as B's
// local dataset does. A wrong token is refused with remote_auth_failed.
func TestQuarryRemote(t *testing.T) {
	rows := genRows(1500)
	rootB := t.TempDir()
	writeJSONL(t, rootB, rows)
	b := openApp(t, rootB)
	addr := serveQuarry(t, b, transport.Token{Principal: "a", Secret: "s3cret-token"})
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	os.WriteFile(good, []byte("s3cret-token\n"), 0o600)
	os.WriteFile(bad, []byte("wrong"), 0o600)
	uri := "grpc://" + addr

	rootA := t.TempDir()
	writeJSONL(t, rootA, rows)
	a := openApp(t, rootA, flightsrc.Config{Name: "q", URI: uri, TokenFile: good}, flightsrc.Config{Name: "nope", URI: uri, TokenFile: bad})
	d, err := a.Catalog.Lookup("remote/q/sales")
	if err != nil {
		t.Fatalf("%v (diagnostics %v)", err, a.Catalog.Diagnostics())
	}
	if d.RowCount != int64(len(rows)) || !d.RowCountExact {
		t.Errorf("row count %d exact %v", d.RowCount, d.RowCountExact)
	}
	for _, q := range queries {
		remote := rowsOf(t, a, strings.ReplaceAll(q, "{T}", `"remote/q/sales"`))
		local := rowsOf(t, a, strings.ReplaceAll(q, "{T}", "sales"))
		sameRows(t, q, remote, local)
	}
	// Without float_sums, float sums and averages stay local (exact on
	// decimal data), the rest of the aggregate with them.
	est, err := a.Service.EstimateQuery(context.Background(), service.EstimateQueryRequest{SQL: `SELECT region, sum(price) AS s, avg(qty) AS a FROM "remote/q/sales" GROUP BY region`})
	if err != nil {
		t.Fatal(err)
	}
	if want := `remote q: SELECT "region", "qty", "price" FROM "sales"`; !strings.Contains(est.PhysicalPlan, want) {
		t.Errorf("physical plan:\n%s\nwant %s", est.PhysicalPlan, want)
	}
	var diag string
	for _, dg := range a.Catalog.Diagnostics() {
		if dg.Path == "remote/nope" {
			diag = dg.Reason
		}
	}
	if !strings.Contains(diag, "refused the credentials") {
		t.Errorf("diagnostic of the refused remote: %q", diag)
	}
	r, err := flightsrc.Open(flightsrc.Config{Name: "nope", URI: uri, TokenFile: bad}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Datasets(context.Background()); qerr.Code(err) != qerr.CodeRemoteAuthFailed || !errors.Is(err, qerr.ErrPermission) {
		t.Errorf("wrong token: %v", err)
	}
}

// remoteSource opens remote cfg and returns the source of its dataset id.
func remoteSource(t *testing.T, cfg flightsrc.Config, id string) (*flightsrc.Remote, *catalog.Dataset) {
	t.Helper()
	r, err := flightsrc.Open(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ds, err := r.Datasets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return r, d
		}
	}
	t.Fatalf("no %s in %v", id, ids(ds))
	return nil, nil
}

// drain reads rr to the end and returns its rows and error.
func drain(rr array.RecordReader) (int64, error) {
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	return n, rr.Err()
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		r, err := flightsrc.Open(flightsrc.Config{Name: "gone", URI: "grpc://" + addr, Timeout: flightsrc.Duration(2 * time.Second)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, err = r.Datasets(ctx)
		if qerr.Code(err) != qerr.CodeRemoteUnavailable {
			t.Fatalf("got %v", err)
		}
		// The catalog keeps serving files and reports the remote.
		root := t.TempDir()
		writeJSONL(t, root, genRows(10))
		a := openApp(t, root, flightsrc.Config{Name: "gone", URI: "grpc://" + addr, Timeout: flightsrc.Duration(2 * time.Second)})
		if _, err := a.Catalog.Lookup("sales"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Catalog.Lookup("remote/gone/sales"); qerr.Code(err) != qerr.CodeDatasetNotFound {
			t.Fatalf("lookup: %v", err)
		}
		if dg := a.Catalog.Diagnostics(); len(dg) != 1 || dg[0].Path != "remote/gone" || !strings.Contains(dg[0].Reason, "cannot be reached") {
			t.Errorf("diagnostics %v", dg)
		}
	})
	lite := startLite(t, genRows(5000))
	cfg := flightsrc.Config{Name: "lite", URI: "grpc://" + lite.addr, Timeout: flightsrc.Duration(300 * time.Millisecond)}
	r, d := remoteSource(t, cfg, "remote/lite/sales")
	t.Run("timeout", func(t *testing.T) {
		lite.delay.Store(int64(5 * time.Second))
		defer lite.delay.Store(0)
		start := time.Now()
		_, err := d.Source.Scan(ctx, catalog.ScanOptions{})
		if qerr.Code(err) != qerr.CodeTimeout || !strings.Contains(err.Error(), `"lite"`) {
			t.Fatalf("got %v", err)
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("took %s", el)
		}
	})
	t.Run("query timeout", func(t *testing.T) {
		lite.delay.Store(int64(5 * time.Second))
		defer lite.delay.Store(0)
		qctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := d.Source.Scan(qctx, catalog.ScanOptions{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		cctx, cancel := context.WithCancel(ctx)
		rr, err := d.Source.Scan(cctx, catalog.ScanOptions{Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
		cancel()
		n, err := drain(rr)
		if !errors.Is(err, context.Canceled) || n != 0 {
			t.Errorf("after cancel: %d rows, %v", n, err)
		}
		rr.Release()
	})
	t.Run("early release", func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		rr, err := d.Source.Scan(ctx, catalog.ScanOptions{Alloc: mem, Columns: []string{"note", "id"}})
		if err != nil {
			t.Fatal(err)
		}
		if !rr.Next() || schemaText(rr.Schema()) != "note: utf8, id: int64" {
			t.Fatal(rr.Err(), rr.Schema())
		}
		rr.Release()
	})
	t.Run("full read", func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		f := planner.Predicate{Col: "qty", Op: planner.OpLt, Value: &planner.Literal{Type: arrow.PrimitiveTypes.Int64, Value: int64(10)}}
		if !d.Source.(planner.FilterPushdowner).HandlesFilter(f) {
			t.Fatal("qty < 10 not taken")
		}
		rr, err := d.Source.Scan(ctx, catalog.ScanOptions{Alloc: mem, Columns: []string{"qty"}, Filters: []planner.Predicate{f}, Limit: 700})
		if err != nil {
			t.Fatal(err)
		}
		n, err := drain(rr)
		rr.Release()
		if err != nil || n != 700 {
			t.Errorf("%d rows, %v", n, err)
		}
	})
	t.Run("remote error", func(t *testing.T) {
		if _, err := lite.db.Exec(`ALTER TABLE sales RENAME TO sales_old`); err != nil {
			t.Fatal(err)
		}
		defer lite.db.Exec(`ALTER TABLE sales_old RENAME TO sales`)
		_, err := d.Source.Scan(ctx, catalog.ScanOptions{})
		if qerr.Code(err) != qerr.CodeRemoteError || qerr.As(err).Diagnostics["remote_sql"] == nil {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("schema changed", func(t *testing.T) {
		if _, err := lite.db.Exec(`ALTER TABLE sales RENAME TO sales_old2; CREATE TABLE sales (id integer, region varchar(20), qty int, price text, note text); INSERT INTO sales VALUES (1, 'x', 2, 'cheap', 'n')`); err != nil {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		_, err := d.Source.Scan(ctx, catalog.ScanOptions{Alloc: mem})
		if qerr.Code(err) != qerr.CodeRemoteSchemaChanged || !errors.Is(err, qerr.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
		if !r.Stale() {
			t.Error("the remote is not marked for listing again")
		}
		// The columns still there are read fine.
		rr, err := d.Source.Scan(ctx, catalog.ScanOptions{Alloc: mem, Columns: []string{"id", "note"}})
		if err != nil {
			t.Fatal(err)
		}
		n, err := drain(rr)
		rr.Release()
		if n != 1 || err != nil {
			t.Errorf("%d rows, %v", n, err)
		}
	})
}

// TestMemoryBudget: the remote's batches count against the query's
// memory budget.
func TestMemoryBudget(t *testing.T) {
	rows := genRows(40000)
	lite := startLite(t, rows)
	a, err := app.Open(context.Background(), app.Config{Data: t.TempDir(), ArtifactDir: t.TempDir(), QueryMemory: 256 << 10,
		FlightSQL: []flightsrc.Config{{Name: "lite", URI: "grpc://" + lite.addr}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.Service.PrepareSQLStatement(context.Background(), `SELECT * FROM "remote/lite/sales" ORDER BY note DESC`, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Stream(context.Background(), func(_ context.Context, rr array.RecordReader) error {
		_, err := drain(rr)
		return err
	})
	if qerr.Code(err) != qerr.CodeResourceExhausted {
		t.Fatalf("got %v", err)
	}
}

// TestConfig: the [[flightsql]] tables of a config file.
func TestConfig(t *testing.T) {
	good := `
max-rows = 10
[[flightsql]]
name = "doris"
uri = "grpc+tls://doris-fe:9090"
token_file = "/run/secrets/doris"
ca_file = "/etc/ssl/ca.pem"
timeout = "60s"
allow = ["sales.*", "ops.events"]
dialect = "mysql"

[[flightsql]]
name = "lite"
uri = "grpc://127.0.0.1:1"
count_rows = false
float_sums = true
headers = { database = "main" }
`
	list, err := flightsrc.ParseConfig("q.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "doris" || time.Duration(list[0].Timeout) != time.Minute || list[0].Dialect != "mysql" ||
		len(list[0].Allow) != 2 || list[1].CountRows == nil || *list[1].CountRows || !list[1].FloatSums || list[0].FloatSums || list[1].Headers["database"] != "main" {
		t.Errorf("%+v", list)
	}
	if list, err := flightsrc.ParseConfig("q.toml", []byte("max-rows = 3\n")); err != nil || list != nil {
		t.Errorf("no remotes: %v %v", list, err)
	}
	for _, c := range []struct{ toml, want string }{
		{`flightsql = "x"`, "array of tables"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\ntokn_file = \"x\"", "unknown key"},
		{"[[flightsql]]\nname = \"a b\"\nuri = \"grpc://h:1\"", "name"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"http://h:1\"", "scheme"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h\"", "host:port"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\nca_file = \"x\"", "grpc+tls"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\ntoken_file = \"x\"\nuser = \"u\"\npassword_env = \"P\"", "one of"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\nuser = \"u\"", "password"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\nheaders = { Authorization = \"Bearer x\" }", "not inline"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\ntimeout = \"soon\"", "soon"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\ndialect = \"oracle\"", "dialect"},
		{"[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\n[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:2\"", "twice"},
	} {
		_, err := flightsrc.ParseConfig("q.toml", []byte(c.toml))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "q.toml") {
			t.Errorf("%q: got %v, want an error with %q", c.toml, err, c.want)
		}
	}
	// Secrets: a missing token file or environment variable fails Open.
	if _, err := flightsrc.Open(flightsrc.Config{Name: "a", URI: "grpc://h:1", TokenEnv: "QUARRY_TEST_UNSET_TOKEN"}, nil, func(string) string { return "" }); err == nil {
		t.Error("empty token env accepted")
	}
	if _, err := flightsrc.Open(flightsrc.Config{Name: "a", URI: "grpc://h:1", TokenFile: filepath.Join(t.TempDir(), "none")}, nil, nil); err == nil {
		t.Error("missing token file accepted")
	}
}
