package flightsql_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/quarrydb/quarry/flightsql"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/testutil/syncbuf"
	"github.com/quarrydb/quarry/mcpapi/transport"
)

// facade is a Flight SQL facade over a copy of demo datasets, with a
// checked allocator for its own batches.
type facade struct {
	app   *app.App
	srv   *flightsql.Server
	alloc *memory.CheckedAllocator
	logs  *syncbuf.Buffer
	addr  string
}

// demoRoot copies demo CSVs (dataset ids) into a fresh data root.
func demoRoot(t testing.TB, ids ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join("..", "demodata", "files", id+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, id+".csv")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func startFacade(t testing.TB, root string, tokens []transport.Token) *facade {
	t.Helper()
	return startFacadeWith(t, app.Config{Data: root}, tokens)
}

// startFacadeWith is startFacade over an app opened with cfg (its data
// root and limits; the artifact directory and logger are the test's);
// each of more adjusts the facade's options.
func startFacadeWith(t testing.TB, cfg app.Config, tokens []transport.Token, more ...func(*flightsql.Options)) *facade {
	t.Helper()
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	cfg.ArtifactDir, cfg.Logger = t.TempDir(), log
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts := flightsql.Options{Addr: "127.0.0.1:0", Service: a.Service, Tokens: tokens, Logger: log, Alloc: alloc}
	for _, m := range more {
		m(&opts)
	}
	srv, err := flightsql.New(opts)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	f := &facade{app: a, srv: srv, alloc: alloc, logs: logs, addr: srv.Addr().String()}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		a.Close()
		alloc.AssertSize(t, 0)
	})
	return f
}

// client connects arrow-go's Flight SQL client with a checked allocator
// (asserted empty at cleanup); token "" sends none.
func (f *facade) client(t testing.TB, token string, dial ...grpc.DialOption) *fsql.Client {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	c, err := fsql.NewClient(f.addr, nil, nil, append(opts, dial...)...)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	c.Alloc = mem
	t.Cleanup(func() {
		_ = c.Close()
		mem.AssertSize(t, 0)
	})
	return c
}

func withToken(ctx context.Context, token string) context.Context {
	if token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// readAll runs the endpoints of info and returns the rows as text
// (arrow's ValueStr), with the stream's schema.
func readAll(t testing.TB, ctx context.Context, c *fsql.Client, info *flight.FlightInfo) (*arrow.Schema, [][]string) {
	t.Helper()
	var rows [][]string
	var sc *arrow.Schema
	for _, ep := range info.Endpoint {
		rdr, err := c.DoGet(ctx, ep.GetTicket())
		if err != nil {
			t.Fatal(err)
		}
		sc = rdr.Schema()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				row := make([]string, rec.NumCols())
				for k, col := range rec.Columns() {
					row[k] = col.ValueStr(i)
				}
				rows = append(rows, row)
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
	}
	return sc, rows
}

func codeOf(err error) codes.Code { return status.Code(err) }

func TestStatementsAndMetadata(t *testing.T) {
	f := startFacade(t, demoRoot(t, "weather/stations", "sales/orders"), nil)
	c := f.client(t, "")
	ctx := context.Background()

	info, err := c.Execute(ctx, `SELECT station_id, name FROM "weather/stations" WHERE elevation_m > 1500 ORDER BY station_id`)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := flight.DeserializeSchema(info.Schema, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	sc, rows := readAll(t, ctx, c, info)
	if !planned.Equal(sc) {
		t.Errorf("FlightInfo schema %s, stream schema %s", planned, sc)
	}
	if len(rows) == 0 || sc.NumFields() != 2 || sc.Field(1).Name != "name" {
		t.Fatalf("schema %s, %d rows", sc, len(rows))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i-1][0] > rows[i][0] {
			t.Fatalf("rows not ordered: %v", rows)
		}
	}
	// A second DoGet of the ticket (the plan handed over by GetFlightInfo
	// is used once) plans again from the stateless ticket.
	if _, again := readAll(t, ctx, c, info); !reflect.DeepEqual(again, rows) {
		t.Errorf("second DoGet: %v, first %v", again, rows)
	}

	// Prepared statement with parameters: $1 bound from the parameter batch.
	ps, err := c.Prepare(ctx, `SELECT count(*) AS n FROM "sales/orders" WHERE region = $1 AND qty >= $2`)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	count := func(region string, qty int64) string {
		b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "p1", Type: arrow.BinaryTypes.String}, {Name: "p2", Type: arrow.PrimitiveTypes.Int64}}, nil))
		defer b.Release()
		b.Field(0).(*array.StringBuilder).Append(region)
		b.Field(1).(*array.Int64Builder).Append(qty)
		rec := b.NewRecordBatch()
		defer rec.Release()
		ps.SetParameters(rec)
		info, err := ps.Execute(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, rows := readAll(t, ctx, c, info)
		if len(rows) != 1 {
			t.Fatalf("count: %v", rows)
		}
		return rows[0][0]
	}
	all, some := count("Lori", 0), count("Lori", 5)
	_, direct := readAll(t, ctx, c, mustExecute(t, c, `SELECT count(*) FROM "sales/orders" WHERE region = 'Lori' AND qty >= 5`))
	if all == "0" || some != direct[0][0] || all == some {
		t.Errorf("prepared counts: all %s, qty>=5 %s, literal %s", all, some, direct[0][0])
	}
	if err := ps.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)

	// Catalog metadata.
	tables, err := c.GetTables(ctx, &fsql.GetTablesOpts{IncludeSchema: true, TableNameFilterPattern: ptr("weather/%")})
	if err != nil {
		t.Fatal(err)
	}
	_, trows := readAll(t, ctx, c, tables)
	if len(trows) != 1 || trows[0][2] != "weather/stations" || trows[0][3] != "TABLE" {
		t.Fatalf("GetTables: %v", trows)
	}
	cats, err := c.GetCatalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, r := readAll(t, ctx, c, cats); len(r) != 0 {
		t.Errorf("catalogs: %v", r)
	}
	schemas, err := c.GetDBSchemas(ctx, &fsql.GetDBSchemasOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if _, r := readAll(t, ctx, c, schemas); len(r) != 0 {
		t.Errorf("schemas: %v", r)
	}
	si, err := c.GetSqlInfo(ctx, []fsql.SqlInfo{fsql.SqlInfoFlightSqlServerName, fsql.SqlInfoFlightSqlServerReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	if _, r := readAll(t, ctx, c, si); len(r) != 2 || !strings.Contains(r[0][1]+r[1][1], "Quarry") || !strings.Contains(r[0][1]+r[1][1], "true") {
		t.Errorf("sql info: %v", r)
	}

	// Errors carry the Quarry code and hint.
	_, err = c.Execute(ctx, `SELECT nope FROM "weather/stations"`)
	if codeOf(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "invalid_column") {
		t.Errorf("bad column: %v", err)
	}
	if !strings.Contains(f.logs.String(), "request_id=r_") {
		t.Errorf("no request ids in the logs:\n%s", f.logs.String())
	}
}

func ptr[T any](v T) *T { return &v }

func mustExecute(t testing.TB, c *fsql.Client, sql string) *flight.FlightInfo {
	t.Helper()
	info, err := c.Execute(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestReadOnly(t *testing.T) {
	f := startFacade(t, demoRoot(t, "weather/stations"), nil)
	c := f.client(t, "")
	ctx := context.Background()
	if _, err := c.ExecuteUpdate(ctx, `DELETE FROM "weather/stations"`); codeOf(err) != codes.PermissionDenied {
		t.Errorf("ExecuteUpdate: %v", err)
	}
	if _, err := c.Execute(ctx, `INSERT INTO "weather/stations" VALUES (1)`); codeOf(err) != codes.PermissionDenied {
		t.Errorf("INSERT through Execute: %v", err)
	}
	if _, err := c.BeginTransaction(ctx); codeOf(err) != codes.PermissionDenied {
		t.Errorf("BeginTransaction: %v", err)
	}
	if _, err := c.Prepare(ctx, `UPDATE "weather/stations" SET name = 'x'`); codeOf(err) != codes.PermissionDenied {
		t.Errorf("Prepare UPDATE: %v", err)
	}
	if _, err := c.ExecuteSubstrait(ctx, fsql.SubstraitPlan{Plan: []byte{1}, Version: "0.1"}); codeOf(err) != codes.Unimplemented {
		t.Errorf("Substrait: %v", err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rr := oneRowReader(mem)
	if _, err := c.ExecuteIngest(ctx, rr, &fsql.ExecuteIngestOpts{TableDefinitionOptions: &fsql.TableDefinitionOptions{}, Table: "x"}); codeOf(err) != codes.PermissionDenied {
		t.Errorf("ExecuteIngest: %v", err)
	}
	rr.Release()
	mem.AssertSize(t, 0)
}

func oneRowReader(mem memory.Allocator) array.RecordReader {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	rec := b.NewRecordBatch()
	defer rec.Release()
	rr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	return rr
}

func TestAuth(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	f := startFacade(t, demoRoot(t, "weather/stations"), []transport.Token{{Principal: "alice", Secret: secret}})
	c := f.client(t, "")
	ctx := context.Background()
	const q = `SELECT count(*) FROM "weather/stations"`
	if _, err := c.Execute(ctx, q); codeOf(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "missing bearer token") {
		t.Errorf("no token: %v", err)
	}
	if _, err := c.Execute(withToken(ctx, "wrong-token-wrong-token"), q); codeOf(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "invalid bearer token") {
		t.Errorf("wrong token: %v", err)
	}
	info, err := c.Execute(withToken(ctx, secret), q)
	if err != nil {
		t.Fatal(err)
	}
	// The ticket alone is not enough: DoGet checks the token too.
	if rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket); err == nil {
		rdr.Next()
		err = rdr.Err()
		rdr.Release()
		if codeOf(err) != codes.Unauthenticated {
			t.Errorf("DoGet without token: %v", err)
		}
	} else if codeOf(err) != codes.Unauthenticated {
		t.Errorf("DoGet without token: %v", err)
	}
	if _, rows := readAll(t, withToken(ctx, secret), c, info); len(rows) != 1 || rows[0][0] != "40" {
		t.Errorf("rows: %v", rows)
	}
	if !strings.Contains(f.logs.String(), "principal=alice") {
		t.Errorf("logs lack the principal:\n%s", f.logs.String())
	}
	// Off loopback, tokens are required.
	if _, err := flightsql.New(flightsql.Options{Addr: "0.0.0.0:0", Service: f.app.Service}); err == nil || !strings.Contains(err.Error(), "without authentication") {
		t.Errorf("non-loopback without tokens: %v", err)
	}
}

// TestCancel: cancelling the client's context stops the query on the
// server (its log line says Canceled) long before it could finish.
func TestCancel(t *testing.T) {
	f := startFacade(t, demoRoot(t, "weather/daily"), nil)
	c := f.client(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// 3680^3 rows: hours of work if nothing stopped it.
	info, err := c.Execute(ctx, `SELECT a.tmax_c, b.tmin_c, d.precip_mm FROM "weather/daily" a CROSS JOIN "weather/daily" b CROSS JOIN "weather/daily" d`)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	cancel()
	for rdr.Next() {
	}
	rdr.Release()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(f.logs.String(), `msg="flightsql query"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the query did not stop:\n%s", f.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(f.logs.String(), "code=Canceled") {
		t.Errorf("query end not logged as cancelled:\n%s", f.logs.String())
	}
}

// TestLimits: the service's query timeout and memory budget apply to
// streamed results, with their gRPC codes.
func TestLimits(t *testing.T) {
	root := demoRoot(t, "weather/daily")
	const cross = `SELECT a.tmax_c, b.tmin_c FROM "weather/daily" a CROSS JOIN "weather/daily" b`
	drain := func(f *facade, sql string) error {
		c := f.client(t, "")
		ctx := context.Background()
		info, err := c.Execute(ctx, sql)
		if err != nil {
			return err
		}
		rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			return err
		}
		defer rdr.Release()
		for rdr.Next() {
		}
		return rdr.Err()
	}
	slow := startFacadeWith(t, app.Config{Data: root, QueryTimeout: 300 * time.Millisecond}, nil)
	if err := drain(slow, cross+` CROSS JOIN "weather/daily" d`); codeOf(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("query timeout: %v", err)
	}
	small := startFacadeWith(t, app.Config{Data: root, QueryMemory: 4 << 20, SpillRows: -1, SpillBytes: -1}, nil)
	if err := drain(small, cross+` ORDER BY 1, 2`); codeOf(err) != codes.ResourceExhausted {
		t.Errorf("memory budget: %v", err)
	}
}
