package flightsrc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/planner/sqlgen"
)

// Remote is one configured Flight SQL remote: a catalog.Remote whose
// datasets are its allowed tables. Safe for concurrent use.
type Remote struct {
	cfg     Config
	dialect sqlgen.Dialect
	allow   *regexp.Regexp
	md      []string // gRPC metadata pairs sent on every call
	client  *fsql.Client
	log     *slog.Logger
	stale   atomic.Bool // a table changed under a query: list again
	// byID names the table of each dataset of the last listing (the
	// tables a pushed join reads besides its first).
	byID atomic.Pointer[map[string]sqlgen.Table]
}

var _ catalog.Remote = (*Remote)(nil)

// Open validates cfg, reads its secrets and TLS files and returns the
// remote (connections are made on first use). getenv reads token_env and
// password_env (nil: os.Getenv).
func Open(cfg Config, log *slog.Logger, getenv func(string) string) (*Remote, error) {
	if err := Validate([]Config{cfg}); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	addr, useTLS, _ := cfg.target()
	creds := insecure.NewCredentials()
	if useTLS {
		tc, err := tlsConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("[[%s]] %s: %w", ConfigKey, cfg.Name, err)
		}
		creds = credentials.NewTLS(tc)
	}
	md, err := cfg.metadata(getenv)
	if err != nil {
		return nil, fmt.Errorf("[[%s]] %s: %w", ConfigKey, cfg.Name, err)
	}
	d, _ := sqlgen.DialectNamed(cfg.Dialect)
	allow, _ := allowRE(cfg.Allow)
	cl, err := fsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("[[%s]] %s: %w", ConfigKey, cfg.Name, err)
	}
	return &Remote{cfg: cfg, dialect: d, allow: allow, md: md, client: cl, log: log.With("remote", cfg.Name)}, nil
}

// Name implements catalog.Remote.
func (r *Remote) Name() string { return r.cfg.Name }

// Stale reports (and clears) that a query found a table changed since
// the last listing: the catalog lists the remote again at once.
func (r *Remote) Stale() bool { return r.stale.Swap(false) }

// Close closes the connection.
func (r *Remote) Close() error { return r.client.Close() }

// secret reads a secret from a file or an environment variable.
func secret(file, env string, getenv func(string) string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", fmt.Errorf("%s is empty", file)
		}
		return s, nil
	}
	s := strings.TrimSpace(getenv(env))
	if s == "" {
		return "", fmt.Errorf("environment variable %s is empty or unset", env)
	}
	return s, nil
}

// metadata is the gRPC metadata of every call: headers and credentials.
func (c Config) metadata(getenv func(string) string) ([]string, error) {
	var md []string
	for k, v := range c.Headers {
		md = append(md, strings.ToLower(k), v)
	}
	switch {
	case c.TokenFile != "" || c.TokenEnv != "":
		tok, err := secret(c.TokenFile, c.TokenEnv, getenv)
		if err != nil {
			return nil, fmt.Errorf("token: %w", err)
		}
		md = append(md, "authorization", "Bearer "+tok)
	case c.User != "":
		pw, err := secret(c.PasswordFile, c.PasswordEnv, getenv)
		if err != nil {
			return nil, fmt.Errorf("password: %w", err)
		}
		md = append(md, "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.User+":"+pw)))
	}
	return md, nil
}

// tlsConfig builds the client TLS settings of a grpc+tls remote.
func tlsConfig(c Config) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s: no PEM certificate", c.CAFile)
		}
		tc.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("cert_file/key_file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// outgoing adds the remote's metadata to ctx.
func (r *Remote) outgoing(ctx context.Context) context.Context {
	if len(r.md) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, r.md...)
}

// table is one row of GetTables.
type table struct {
	schema, name, typ string
	sc                *arrow.Schema
}

// qualified is the table's name in dataset ids and allow globs.
func (t table) qualified() string {
	if t.schema == "" {
		return t.name
	}
	return t.schema + "." + t.name
}

// maxCounts bounds the count(*) queries a listing runs at once.
const maxCounts = 4

// Datasets implements catalog.Remote: the allowed tables and views, with
// their schemas from GetTables(include_schema) and, with count_rows,
// exact row counts.
func (r *Remote) Datasets(ctx context.Context) ([]*catalog.Dataset, error) {
	start := time.Now()
	tables, err := r.tables(ctx)
	if err != nil {
		r.log.Warn("flightsql remote: listing failed", "err", err)
		return nil, err
	}
	out := make([]*catalog.Dataset, 0, len(tables))
	byID := make(map[string]sqlgen.Table, len(tables))
	for _, t := range tables {
		d := r.dataset(t, start)
		out = append(out, d)
		byID[d.ID] = d.Source.(*source).table
	}
	r.byID.Store(&byID)
	if r.cfg.countRows() {
		var wg sync.WaitGroup
		sem := make(chan struct{}, maxCounts)
		for _, d := range out {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				n, err := r.count(ctx, d.Source.(*source))
				if err != nil {
					r.log.Warn("flightsql remote: cannot count rows", "dataset", d.ID, "err", err)
					return
				}
				d.RowCount, d.RowCountExact = n, true
			}()
		}
		wg.Wait()
	}
	r.log.Info("flightsql remote listed", "tables", len(out), "duration", time.Since(start))
	return out, nil
}

// dataset is the catalog entry of table t.
func (r *Remote) dataset(t table, now time.Time) *catalog.Dataset {
	q := t.qualified()
	id := catalog.RemotePrefix + r.cfg.Name + "/" + q
	exposed, notes := catalog.ExposedSchema(t.sc)
	src := &source{r: r, id: id, table: sqlgen.Table{Schema: t.schema, Name: t.name}, schema: exposed}
	return &catalog.Dataset{
		ID: id, Kind: catalog.KindFlightSQL, Path: "flightsql:" + r.cfg.Name + "/" + q,
		Schema: exposed, ColumnNotes: notes, ModTime: now,
		Description: fmt.Sprintf("%s %s of the Arrow Flight SQL remote %s", strings.ToLower(t.typ), q, r.cfg.Name),
		Attributes:  map[string]any{"remote": r.cfg.Name, "table": q},
		Source:      src,
	}
}

// tables lists the remote's allowed tables and views.
func (r *Remote) tables(ctx context.Context) ([]table, error) {
	cctx, cancel := context.WithTimeout(r.outgoing(ctx), r.cfg.timeout())
	defer cancel()
	info, err := r.client.GetTables(cctx, &fsql.GetTablesOpts{IncludeSchema: true})
	if err != nil {
		return nil, r.remoteError(ctx, "GetTables", err, "")
	}
	var out []table
	for _, ep := range info.Endpoint {
		rdr, err := r.client.DoGet(cctx, ep.Ticket)
		if err != nil {
			return nil, r.remoteError(ctx, "GetTables", err, "")
		}
		for rdr.Next() {
			out = append(out, r.tableRows(rdr.RecordBatch())...)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return nil, r.remoteError(ctx, "GetTables", err, "")
		}
	}
	return out, nil
}

// tableRows reads the allowed tables of one GetTables batch.
func (r *Remote) tableRows(b arrow.RecordBatch) []table {
	col := func(name string) arrow.Array {
		if ix := b.Schema().FieldIndices(name); len(ix) > 0 {
			return b.Column(ix[0])
		}
		return nil
	}
	str := func(a arrow.Array, i int) string {
		if s, ok := a.(*array.String); ok && s.IsValid(i) {
			return s.Value(i)
		}
		return ""
	}
	schemas, names, types := col("db_schema_name"), col("table_name"), col("table_type")
	scs, _ := col("table_schema").(*array.Binary)
	var out []table
	for i := range int(b.NumRows()) {
		t := table{schema: str(schemas, i), name: str(names, i), typ: str(types, i)}
		switch strings.ToUpper(t.typ) {
		case "TABLE", "VIEW", "BASE TABLE":
		default:
			continue
		}
		q := t.qualified()
		if t.name == "" || strings.HasPrefix(q, catalog.RemotePrefix) { // a Quarry remote's own remotes
			continue
		}
		if r.allow != nil && !r.allow.MatchString(q) {
			continue
		}
		if scs == nil || !scs.IsValid(i) {
			r.log.Warn("flightsql remote: a table without schema is skipped (the server ignores include_schema)", "table", q)
			continue
		}
		sc, err := flight.DeserializeSchema(scs.Value(i), memory.DefaultAllocator)
		if err != nil {
			r.log.Warn("flightsql remote: a table with an unreadable schema is skipped", "table", q, "err", err)
			continue
		}
		t.sc = sc
		out = append(out, t)
	}
	return out
}

// count runs the generated SELECT count(*) of one table.
func (r *Remote) count(ctx context.Context, s *source) (int64, error) {
	out := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	agg := &planner.Aggregate{Input: &planner.Scan{Dataset: s.id, Out: s.schema},
		Aggs: []planner.AggExpr{{Fn: planner.AggCount, Col: "*", Index: -1, ArgIndex: -1, Name: "n", Type: arrow.PrimitiveTypes.Int64}}, Out: out}
	sql, err := sqlgen.Generate(agg, s.table, r.dialect)
	if err != nil {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, r.cfg.timeout())
	defer cancel()
	st, err := r.stream(cctx, ctx, sql, memory.DefaultAllocator, nil)
	if err != nil {
		return 0, err
	}
	defer st.Release()
	if !st.Next() {
		if err := st.Err(); err != nil {
			return 0, err
		}
		return 0, errors.New("count(*) returned no row")
	}
	b := st.RecordBatch()
	if b.NumCols() != 1 || b.NumRows() < 1 || b.Column(0).IsNull(0) {
		return 0, errors.New("count(*) returned no value")
	}
	return strconv.ParseInt(strings.Trim(b.Column(0).ValueStr(0), `"`), 10, 64)
}
