package flightsrc_test

import (
	"context"
	"fmt"
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/quarrydb/quarry/catalog/flightsrc"
	"github.com/quarrydb/quarry/flightsql"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/mcpapi/transport"
	"github.com/quarrydb/quarry/service"
)

// wireProxy forwards TCP connections to a target address and counts the
// bytes that cross it in both directions: what a remote query costs on
// the wire, whatever the client and server do inside.
type wireProxy struct {
	ln     net.Listener
	target string
	bytes  atomic.Int64
	wg     sync.WaitGroup
}

func startProxy(tb testing.TB, target string) *wireProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &wireProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *wireProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.wg.Add(2)
		go p.pipe(out, in)
		go p.pipe(in, out)
	}
}

// pipe copies src to dst, counting as it goes, and closes both when src
// ends (the count is live: a query's bytes are in it when the query ends).
func (p *wireProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		p.bytes.Add(int64(n))
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *wireProxy) addr() string { return p.ln.Addr().String() }

// serveQuarry serves a's catalog through Quarry's Flight SQL facade on a
// loopback port (tokens: the accepted bearer tokens, none => no auth) and
// returns its address.
func serveQuarry(tb testing.TB, a *app.App, tokens ...transport.Token) string {
	tb.Helper()
	srv, err := flightsql.New(flightsql.Options{Addr: "127.0.0.1:0", Service: a.Service, Tokens: tokens,
		Logger: slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
	return srv.Addr().String()
}

// writeWideParquet writes rows rows of (id int64, category string of 16
// values, qty int64 0..99, value float64 with quarter steps) as
// root/big.parquet, in 1M-row row groups.
func writeWideParquet(tb testing.TB, root string, rows int) {
	tb.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "category", Type: arrow.BinaryTypes.String},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int64},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	f, err := os.Create(filepath.Join(root, "big.parquet"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1<<20)), pqarrow.DefaultWriterProps())
	if err != nil {
		tb.Fatal(err)
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	ids, cats := bld.Field(0).(*array.Int64Builder), bld.Field(1).(*array.StringBuilder)
	qtys, vals := bld.Field(2).(*array.Int64Builder), bld.Field(3).(*array.Float64Builder)
	for start := 0; start < rows; start += 1 << 16 {
		for i := start; i < min(start+1<<16, rows); i++ {
			ids.Append(int64(i))
			cats.Append(fmt.Sprintf("category-%02d", (i*7)%16))
			qtys.Append(int64(i % 100))
			vals.Append(float64(i%1000) / 4)
		}
		rec := bld.NewRecordBatch()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// wireSetup is Quarry B serving big.parquet (rows rows) through its
// Flight SQL facade, and Quarry A with B as the [[flightsql]] remote q,
// reached through a byte-counting proxy.
type wireSetup struct {
	a, b  *app.App
	proxy *wireProxy
	rows  int
}

func setupWire(tb testing.TB, rows int) *wireSetup {
	tb.Helper()
	rootB := tb.TempDir()
	writeWideParquet(tb, rootB, rows)
	writeFamilies(tb, rootB)
	b := openApp(tb, rootB)
	proxy := startProxy(tb, serveQuarry(tb, b))
	no := false
	a := openApp(tb, tb.TempDir(), flightsrc.Config{Name: "q", URI: "grpc://" + proxy.addr(), CountRows: &no})
	if _, err := a.Catalog.Lookup("remote/q/big"); err != nil {
		tb.Fatalf("%v (diagnostics %v)", err, a.Catalog.Diagnostics())
	}
	return &wireSetup{a: a, b: b, proxy: proxy, rows: rows}
}

// run runs sql on A (over remote/q/big) and returns its rows and the
// bytes that crossed the wire to and from the remote while it ran (both
// directions: the statement, the FlightInfo, the Arrow stream).
func (w *wireSetup) run(tb testing.TB, sql string) ([][]string, int64) {
	tb.Helper()
	before := w.proxy.bytes.Load()
	rows := rowsOf(tb, w.a, sql)
	return rows, w.proxy.bytes.Load() - before
}

// writeFamilies writes root/families.csv: the 16 categories of big, each
// in one of 4 families (a dimension table to join big with).
func writeFamilies(tb testing.TB, root string) {
	tb.Helper()
	var b strings.Builder
	b.WriteString("category,family\n")
	for i := range 16 {
		fmt.Fprintf(&b, "category-%02d,family-%d\n", i, i%4)
	}
	if err := os.WriteFile(filepath.Join(root, "families.csv"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// The grouped aggregate of the benchmark, one the remote cannot run
// (median), which makes Quarry read the two columns of every row, and a
// join of big with its dimension table (families, {F}) grouped by a
// column of the dimension, which the remote runs whole.
const (
	wireAgg   = `SELECT category, count(*) AS n, sum(qty) AS q, min(id) AS lo, max(id) AS hi FROM {T} GROUP BY category ORDER BY category`
	wireLocal = `SELECT category, median(qty) AS m FROM {T} GROUP BY category ORDER BY category`
	wireJoin  = `SELECT f.family, count(*) AS n, sum(b.qty) AS q, max(b.id) AS hi FROM {T} b JOIN {F} f ON b.category = f.category GROUP BY f.family ORDER BY f.family`
)

// remoteWire and localWire name the benchmark's tables on A and on B.
var (
	remoteWire = strings.NewReplacer("{T}", `"remote/q/big"`, "{F}", `"remote/q/families"`)
	localWire  = strings.NewReplacer("{T}", "big", "{F}", "families")
)

// wireGroupsMax bounds the bytes a pushed aggregate over big may cost on
// the wire: its 16 groups (~0.7 KB of values) plus the statement, the
// FlightInfo with its schema and ticket, and gRPC framing — independent
// of the table's row count.
const wireGroupsMax = 32 << 10

// checkWire runs the benchmark's two queries on w, checks their answers
// against B's own (local) execution and the generated statement, and
// returns the wire bytes of the pushed aggregate and of the query that
// is not pushed. It fails tb when the pushed aggregate costs more than
// wireGroupsMax, or the other one less than the qty column's 8 bytes a
// row (which would mean the measure is broken).
func checkWire(tb testing.TB, w *wireSetup) (pushed, local int64) {
	tb.Helper()
	remote := remoteWire.Replace(wireAgg)
	got, pushed := w.run(tb, remote)
	want := rowsOf(tb, w.b, localWire.Replace(wireAgg))
	sameRows(tb, wireAgg, got, want)
	if len(got) != 16 {
		tb.Fatalf("%d groups", len(got))
	}
	est, err := w.a.Service.EstimateQuery(context.Background(), service.EstimateQueryRequest{SQL: remote})
	if err != nil {
		tb.Fatal(err)
	}
	if sent := `GROUP BY "category"`; !strings.Contains(est.PhysicalPlan, sent) {
		tb.Fatalf("the aggregate is not pushed:\n%s", est.PhysicalPlan)
	}
	if pushed > wireGroupsMax {
		tb.Errorf("the pushed aggregate over %d rows moved %d bytes on the wire (want <= %d: only the groups)", w.rows, pushed, wireGroupsMax)
	}
	got, local = w.run(tb, remoteWire.Replace(wireLocal))
	sameRows(tb, wireLocal, got, rowsOf(tb, w.b, localWire.Replace(wireLocal)))
	if local < int64(w.rows)*8 {
		tb.Errorf("reading qty and category of %d rows moved only %d bytes: the count is broken", w.rows, local)
	}
	return pushed, local
}

// checkWireJoin runs the join of the benchmark on w, checks its answer
// against B's own execution and that the statement sent holds the join,
// and returns its wire bytes; it fails tb when they exceed
// wireGroupsMax: only the 4 groups may cross, not big's rows.
func checkWireJoin(tb testing.TB, w *wireSetup) int64 {
	tb.Helper()
	remote := remoteWire.Replace(wireJoin)
	got, n := w.run(tb, remote)
	sameRows(tb, wireJoin, got, rowsOf(tb, w.b, localWire.Replace(wireJoin)))
	if len(got) != 4 {
		tb.Fatalf("%d groups", len(got))
	}
	est, err := w.a.Service.EstimateQuery(context.Background(), service.EstimateQueryRequest{SQL: remote})
	if err != nil {
		tb.Fatal(err)
	}
	if sent := `INNER JOIN (SELECT "category", "family" FROM "families") AS "r"`; !strings.Contains(est.PhysicalPlan, sent) {
		tb.Fatalf("the join is not pushed:\n%s", est.PhysicalPlan)
	}
	if n > wireGroupsMax {
		tb.Errorf("the pushed join and aggregate over %d rows moved %d bytes on the wire (want <= %d: only the groups)", w.rows, n, wireGroupsMax)
	}
	return n
}

// TestPushdownWire: a grouped aggregate over a 200k-row table of another
// Quarry, and its join with a dimension table of that Quarry, move only
// their groups over the wire (bytes counted by a proxy between the two),
// and answer as the remote's local execution does.
// BenchmarkPushdownWire5M is the same at 5M rows.
func TestPushdownWire(t *testing.T) {
	w := setupWire(t, 200_000)
	pushed, local := checkWire(t, w)
	join := checkWireJoin(t, w)
	t.Logf("%d rows: pushed aggregate %d bytes on the wire, pushed join and aggregate %d bytes, not pushed (median) %d bytes", w.rows, pushed, join, local)
}

// BenchmarkPushdownWire5M: the pushdown benchmark of issue #19 — the
// aggregate over a 5M-row remote table (Quarry serving Quarry over
// loopback Flight SQL), and its join with a dimension table of the same
// remote grouped by the dimension, move only the groups; the bytes are
// counted on the wire and asserted (checkWire, checkWireJoin). Reports wire bytes per query for the
// pushed aggregate and for an aggregate that is not pushed (median: every
// row's qty and category cross), and the process CPU per query.
func BenchmarkPushdownWire5M(b *testing.B) {
	w := setupWire(b, 5_000_000)
	for _, c := range []struct{ name, sql string }{{"pushed", wireAgg}, {"pushed_join", wireJoin}, {"not_pushed", wireLocal}} {
		b.Run(c.name, func(b *testing.B) {
			sql := remoteWire.Replace(c.sql)
			var wire int64
			cpu := cpuclock.Process()
			for b.Loop() {
				_, n := w.run(b, sql)
				wire += n
			}
			b.ReportMetric(float64(wire)/float64(b.N), "wire-B/op")
			b.ReportMetric((cpuclock.Process()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
	pushed, local := checkWire(b, w)
	join := checkWireJoin(b, w)
	b.Logf("%d rows: pushed %d bytes, pushed join %d bytes, not pushed %d bytes on the wire", w.rows, pushed, join, local)
}
