// Package app wires a complete Quarry from its configuration: the catalog
// over the data root, the artifact store, the handle registry, the
// materializer, the service and the MCP server. The CLI and the tests that
// need a real server in-process use it, so there is one wiring.
package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/flightsrc"
	"github.com/quarrydb/quarry/catalog/hdf5"
	"github.com/quarrydb/quarry/demodata"
	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/mcpapi"
	"github.com/quarrydb/quarry/service"
	"github.com/quarrydb/quarry/sqlfront"
)

// Config is every setting of a Quarry server. The zero value of a field
// means its default (given in RegisterFlags and below).
type Config struct {
	// Data is the data root; "" serves the bundled demo data.
	Data string
	// ArtifactDir is where result files are written; "" => <user cache dir>/quarry/artifacts.
	ArtifactDir string
	// ArtifactTTL is how long result files are kept; 0 => 1 h.
	ArtifactTTL time.Duration
	// ArtifactQuota is the disk budget of result files in bytes; 0 => 2 GiB.
	ArtifactQuota int64
	// MaxRows, MaxBytes and MaxCells are the hard inline caps; 0 => 200 rows, 64 KiB, 10,000 cells.
	MaxRows, MaxBytes, MaxCells int64
	// PageRows is the rows per handle page; 0 => 200.
	PageRows int64
	// HandleTTL is the idle lifetime of a result handle; 0 => 15 min.
	HandleTTL time.Duration
	// MaxHandles bounds the live result handles; 0 => 256.
	MaxHandles int
	// MaxCellChars is the most characters of one cell value in inline JSON
	// (longer values are shortened with a marker; files keep them whole);
	// 0 => 2,000.
	MaxCellChars int64
	// ParquetCodec compresses Parquet artifacts: "snappy" (the default,
	// also for ""), "zstd" (smaller files, more CPU) or "none".
	ParquetCodec string
	// EnableArrowIPC allows output_format=arrow (Arrow IPC files); false =>
	// arrow is refused with a hint naming --enable-arrow-ipc.
	EnableArrowIPC bool
	// NoSQL leaves out the advanced_query tool (flag --sql=false).
	NoSQL bool
	// ExposeFilePaths adds file_path (the artifact's absolute path) to file
	// results; false => paths are never shown.
	ExposeFilePaths bool
	// HandleMemory bounds the bytes of in-memory results held by result
	// handles (least recently used evicted first); 0 => 512 MiB, negative
	// => unlimited. Spilled results do not count (they are on disk).
	HandleMemory int64
	// SpillRows: a result of more rows is spilled to a Parquet file in the
	// artifact store and paged from disk; 0 => 1,000,000, negative => never.
	SpillRows int64
	// SpillBytes: a result holding more bytes of Arrow memory is spilled
	// likewise; 0 => 256 MiB, negative => never.
	SpillBytes int64
	// QueryMemory is the Arrow memory budget of one query in bytes; 0 => 1 GiB.
	QueryMemory int64
	// ServerMemory is the memory budget shared by all running queries (each
	// reserves from it as it grows; a query that cannot get memory waits
	// briefly, then fails with resource_exhausted); 0 => half the
	// machine's memory (at least QueryMemory), negative => no cap.
	ServerMemory int64
	// CacheMemory is the byte budget of the column cache (parsed columns
	// kept in memory across queries, filled when a CSV file is cataloged);
	// 0 => 25% of the machine's memory, negative => no cache.
	CacheMemory int64
	// QueryTimeout bounds one query; 0 => 60 s.
	QueryTimeout time.Duration
	// ConfirmRows: query_data and aggregate ask the user before running a
	// query whose estimated result has more rows; 0 => 1,000,000, negative
	// => never ask.
	ConfirmRows int64
	// ConfirmBytes: they also ask when the estimated result is bigger (as
	// JSON bytes); 0 => 256 MiB, negative => never ask.
	ConfirmBytes int64
	// BackgroundScan makes Open return without waiting for the catalog's
	// first scan (serve: the server answers at once, get_catalog reports
	// the scan, lookups wait for it). False scans before Open returns.
	BackgroundScan bool
	// ExportDir is where the export tool writes files; "" => export is
	// not listed (and the service refuses it). Never inside the data root.
	ExportDir string
	// MaxMessageBytes bounds one JSON-RPC message Quarry sends (resource
	// reads, read_result pages); 0 => 8 MiB.
	MaxMessageBytes int64
	// InputLimits bound what reading one CSV file may cost (compression
	// ratio, decompressed size, record length, columns, name length); zero
	// fields => catalog.DefaultLimits.
	InputLimits catalog.Limits
	// RedisURL, when set, shares result handles, page tokens and artifact
	// owners with other replicas through this Redis server (flag
	// --redis-url; needs SharedKeyFile and a shared ArtifactDir).
	RedisURL string
	// ArtifactStore, when set, keeps artifacts in an S3-compatible object
	// store, s3://bucket/prefix, shared by replicas (ArtifactDir is then
	// the local staging area and cache); ArtifactStoreEndpoint and
	// ArtifactStoreRegion locate it (see artifactstore.go).
	ArtifactStore, ArtifactStoreEndpoint, ArtifactStoreRegion string
	// SharedKeyFile holds the secret (at least 32 bytes) that signs page
	// tokens, filter tokens and download URLs, the same on every replica.
	SharedKeyFile string
	// ConformanceFixtures adds the fixtures the official MCP conformance
	// suite calls (test_simple_text, test://static-text, ...) to the MCP
	// server; for testing only (flag --conformance-fixtures).
	ConformanceFixtures bool
	// FlightSQL are the Arrow Flight SQL remotes whose tables the catalog
	// lists as remote/<name>/<table> (the config file's [[flightsql]]
	// tables; catalog/flightsrc).
	FlightSQL []flightsrc.Config
	// Version is announced to clients; "" => "dev".
	Version string
	// Logger receives all logs (stderr); nil => slog.Default().
	Logger *slog.Logger
	// OnToolCall, when set, is told of every finished tool call (metrics).
	OnToolCall func(mcpapi.ToolCall)
}

// RegisterFlags binds c's fields to flags on fs, with their defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Data, "data", "", "data root to serve (default: the bundled demo data)")
	fs.StringVar(&c.ArtifactDir, "artifact-dir", "", "where result files are written (default: <user cache dir>/quarry/artifacts; never inside --data)")
	fs.DurationVar(&c.ArtifactTTL, "artifact-ttl", artifacts.DefaultTTL, "how long result files are kept")
	fs.Int64Var(&c.ArtifactQuota, "artifact-quota", artifacts.DefaultQuota, "bytes of result files kept on disk; oldest evicted first")
	fs.Int64Var(&c.MaxRows, "max-rows", materialize.DefaultMaxRows, "hard cap: rows returned inline (per-call max_rows may only lower it)")
	fs.Int64Var(&c.MaxBytes, "max-bytes", materialize.DefaultMaxBytes, "hard cap: bytes of inline JSON data (per-call max_bytes may only lower it)")
	fs.Int64Var(&c.MaxCells, "max-cells", materialize.DefaultMaxCells, "hard cap: rows x columns returned inline")
	fs.Int64Var(&c.PageRows, "page-rows", materialize.DefaultPageRows, "rows per result-handle page")
	fs.DurationVar(&c.HandleTTL, "handle-ttl", handles.DefaultTTL, "idle lifetime of a result handle")
	fs.IntVar(&c.MaxHandles, "max-handles", handles.DefaultMaxEntries, "result handles kept at once (least recently used evicted)")
	fs.Int64Var(&c.MaxCellChars, "max-cell-chars", materialize.DefaultMaxCellChars, "characters of one cell value in inline JSON; longer values are shortened with a marker (files keep them whole)")
	fs.StringVar(&c.ParquetCodec, "parquet-codec", "snappy", "compression of Parquet artifacts: snappy, zstd (smaller files, more CPU to write) or none")
	fs.Var(negBool{&c.NoSQL}, "sql", "offer the advanced_query tool (read-only SQL over catalog datasets); --sql=false serves knobs only")
	fs.StringVar(&c.RedisURL, "redis-url", "", "share result handles and artifacts with other replicas through this Redis (redis://host:port/db; needs --shared-key-file and a shared --artifact-dir or --artifact-store)")
	fs.StringVar(&c.ArtifactStore, "artifact-store", "", "keep result files in an S3-compatible object store shared by replicas, s3://bucket/prefix (--artifact-dir is then a local cache); "+
		"credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, ~/.aws/credentials (AWS_PROFILE) or the instance role")
	fs.StringVar(&c.ArtifactStoreEndpoint, "artifact-store-endpoint", "", "endpoint of --artifact-store, e.g. http://127.0.0.1:9000 (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS S3)")
	fs.StringVar(&c.ArtifactStoreRegion, "artifact-store-region", "", "region of --artifact-store's bucket (default: $AWS_REGION, $AWS_DEFAULT_REGION, else asked from the store)")
	fs.StringVar(&c.SharedKeyFile, "shared-key-file", "", "file holding the secret (>= 32 bytes) that signs page tokens, filter tokens and download URLs, the same on every replica")
	fs.BoolVar(&c.ConformanceFixtures, "conformance-fixtures", false, "also serve the fixture tools, resources and prompts of the official MCP conformance suite (testing only)")
	fs.BoolVar(&c.EnableArrowIPC, "enable-arrow-ipc", false, "allow output_format=arrow (Arrow IPC files)")
	fs.BoolVar(&c.ExposeFilePaths, "expose-file-paths", false, "include file_path (absolute artifact path) in file results, for clients on this machine")
	fs.Int64Var(&c.HandleMemory, "handle-memory", DefaultHandleMemory, "bytes of in-memory results kept behind result handles (least recently used evicted; negative: unlimited)")
	fs.Int64Var(&c.SpillRows, "spill-rows", materialize.DefaultSpillRows, "results with more rows are spilled to a Parquet file and paged from disk (negative: never)")
	fs.Int64Var(&c.SpillBytes, "spill-bytes", materialize.DefaultSpillBytes, "results holding more bytes of Arrow memory are spilled to disk (negative: never)")
	fs.Int64Var(&c.QueryMemory, "query-memory", service.DefaultQueryMemory, "Arrow memory budget of one query, bytes")
	fs.Int64Var(&c.ServerMemory, "server-memory", 0, "memory budget shared by all running queries, bytes; a query that cannot get memory waits up to 2 s, then fails with resource_exhausted (default 0: half of RAM, at least --query-memory; negative: no cap)")
	fs.Func("cache-memory", fmt.Sprintf("bytes of parsed columns kept in memory across queries; 0 disables the cache (default 25%% of RAM: %d)", colcache.DefaultBudget()),
		func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("want a number of bytes >= 0")
			}
			c.CacheMemory = n
			if n == 0 {
				c.CacheMemory = -1
			}
			return nil
		})
	fs.DurationVar(&c.QueryTimeout, "query-timeout", service.DefaultQueryTimeout, "time limit of one query")
	fs.Int64Var(&c.ConfirmRows, "confirm-rows", service.DefaultConfirmRows, "ask the user before query_data/aggregate return more rows than this (estimated; negative: never ask)")
	fs.Int64Var(&c.ConfirmBytes, "confirm-bytes", service.DefaultConfirmBytes, "ask the user before query_data/aggregate return more JSON bytes than this (estimated; negative: never ask)")
	fs.StringVar(&c.ExportDir, "export-dir", "", "directory the export tool writes result files into (default: none: the export tool is not listed; never inside --data)")
	fs.Int64Var(&c.MaxMessageBytes, "max-message-bytes", service.DefaultMaxMessageBytes, "largest JSON-RPC message sent, bytes: bigger artifacts are read in ranges, with read_result or over HTTP by download URL")
	lim := catalog.DefaultLimits()
	fs.IntVar(&c.InputLimits.MaxColumns, "max-csv-columns", lim.MaxColumns, "CSV files with more columns are not cataloged (a diagnostic)")
	fs.IntVar(&c.InputLimits.MaxRecordBytes, "max-csv-record-bytes", lim.MaxRecordBytes, "CSV files with a longer record (line) are not cataloged; a query meeting one fails with resource_exhausted")
	fs.Int64Var(&c.InputLimits.MaxDecompressedBytes, "max-gz-bytes", lim.MaxDecompressedBytes, "bytes a compressed (.gz, .zst, .bz2) text file may decompress to")
	fs.Float64Var(&c.InputLimits.MaxCompressionRatio, "max-gz-ratio", lim.MaxCompressionRatio, "how many times its compressed size a compressed text file may decompress to (checked after 32 MiB; stops compression bombs)")
}

// DefaultHandleMemory is the bytes of in-memory results kept behind result
// handles when Config.HandleMemory is 0 (--handle-memory).
const DefaultHandleMemory int64 = 512 << 20

// App is a fully wired Quarry.
type App struct {
	// Config is the configuration the app was opened with.
	Config Config
	// Root is the resolved data root.
	Root string
	// Demo reports whether Root is the bundled demo data.
	Demo bool
	// Catalog, Service and MCP are the wired components.
	Catalog *catalog.Catalog
	Service *service.Service
	MCP     *server.MCPServer
	// OutputSchemas are the tools' output schemas by name (the console
	// shows them; tools/list leaves them out).
	OutputSchemas map[string]json.RawMessage
	// Artifacts is the result-file store.
	Artifacts *artifacts.Store

	handles *handles.Registry[*materialize.Table]
	goLimit *goLimit // the Go runtime's soft memory limit (memlimit.go)
	h5      *hdf5.Format
	shared  replicaState
}

// Open wires an App from cfg. The data root must exist and be a directory.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	root, demo := cfg.Data, false
	if root == "" {
		dir, err := demodata.Extract(demodata.DefaultDir())
		if err != nil {
			return nil, fmt.Errorf("extracting the bundled demo data: %w", err)
		}
		root, demo = dir, true
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("data directory %q: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("data directory %q is not a directory", root)
	}
	codec, err := materialize.ParseParquetCodec(cfg.ParquetCodec)
	if err != nil {
		return nil, fmt.Errorf("--parquet-codec: %w", err)
	}
	h5 := hdf5.NewFormat(hdf5.WithRoot(root))
	cache := colcache.New(colcache.Options{Budget: cacheBudget(cfg.CacheMemory)})
	var keeper catalog.ColumnKeeper // cataloging a CSV or NDJSON file fills the cache
	if cache.Enabled() {
		keeper = cache
	}
	formats := []catalog.Format{csv.NewFormatWith(csv.Options{Keeper: keeper, Limits: cfg.InputLimits}),
		catalog.NewParquetFormat(cfg.InputLimits), catalog.NewJSONFormatWith(catalog.JSONOptions{Keeper: keeper, Limits: cfg.InputLimits}), catalog.NewArrowFormat(cfg.InputLimits), catalog.NewXLSXFormat(cfg.InputLimits), h5}
	remotes, err := openRemotes(cfg)
	if err != nil {
		_ = h5.Close()
		return nil, err
	}
	cat, err := catalog.New(ctx, catalog.Options{Root: root, Formats: formats, Logger: cfg.Logger, Background: cfg.BackgroundScan,
		Remotes: remotes})
	if err != nil {
		closeRemotes(remotes)
		_ = h5.Close()
		return nil, err
	}
	rs, err := openReplicaState(ctx, cfg)
	if err != nil {
		cat.Close()
		_ = h5.Close()
		return nil, err
	}
	store, err := openArtifacts(cfg, cat.Root(), rs.kv)
	if err != nil {
		cat.Close()
		_ = h5.Close()
		rs.close()
		return nil, err
	}
	gl := &goLimit{cfg: cfg}
	reg := handles.New[*materialize.Table](handles.Options{TTL: cfg.HandleTTL, MaxEntries: cfg.MaxHandles, MaxBytes: handleMemory(cfg),
		Key: rs.subkey("page-tokens"), OnBytes: gl.update})
	gl.handles = reg.Bytes
	if rs.kv != nil {
		reg.SetRemote(materialize.SharedHandles(rs.kv, store, cfg.Logger))
	}
	mat := materialize.New(materialize.Config{
		Hard: materialize.Caps{MaxRows: cfg.MaxRows, MaxBytes: cfg.MaxBytes, MaxCells: cfg.MaxCells, PageRows: cfg.PageRows,
			MaxCellChars: cfg.MaxCellChars},
		Artifacts:      store,
		Handles:        reg,
		EnableArrowIPC: cfg.EnableArrowIPC, ExposeFilePaths: cfg.ExposeFilePaths,
		SpillRows: cfg.SpillRows, SpillBytes: cfg.SpillBytes, ParquetCodec: codec,
		ShareHandles: rs.kv != nil,
	})
	exportDir, err := service.PrepareExportDir(cfg.ExportDir, cat.Root())
	if err != nil {
		cat.Close()
		reg.Close()
		_ = h5.Close()
		_ = store.Close()
		rs.close()
		return nil, fmt.Errorf("--export-dir: %w", err)
	}
	svc, err := service.New(service.Config{
		SigningKey: rs.subkey("tokens"),
		ExportDir:  exportDir, MaxMessageBytes: cfg.MaxMessageBytes,
		HDF5:    h5,
		Catalog: cat, Materializer: mat, Artifacts: store,
		QueryMemory: cfg.QueryMemory, ServerMemory: serverMemory(cfg), QueryTimeout: cfg.QueryTimeout, Cache: cache,
		ConfirmRows: cfg.ConfirmRows, ConfirmBytes: cfg.ConfirmBytes, Demo: demo,
		HandleTTL: cfg.HandleTTL, MaxHandles: cfg.MaxHandles, ArtifactTTL: cfg.ArtifactTTL, ArtifactQuota: cfg.ArtifactQuota,
	})
	if err != nil {
		cat.Close()
		reg.Close()
		_ = h5.Close()
		_ = store.Close()
		rs.close()
		return nil, err
	}
	a := &App{Config: cfg, Root: cat.Root(), Demo: demo, Catalog: cat, Service: svc, Artifacts: store, handles: reg, goLimit: gl, h5: h5, shared: rs}
	a.MCP, a.OutputSchemas = mcpapi.NewServerWithSchemas(svc, mcpapi.Options{Name: "quarry", Version: cfg.Version, Logger: cfg.Logger, NoSQL: cfg.NoSQL || !sqlfront.Available,
		ConformanceFixtures: cfg.ConformanceFixtures, OnToolCall: cfg.OnToolCall})
	return a, nil
}

// serverMemory turns Config.ServerMemory into the service's: by default
// half the machine's memory (twice colcache's default of a quarter), and
// never less than one query's budget.
func serverMemory(cfg Config) int64 {
	switch n := cfg.ServerMemory; {
	case n < 0:
		return 0
	case n > 0:
		return n
	}
	q := cfg.QueryMemory
	if q <= 0 {
		q = service.DefaultQueryMemory
	}
	return max(2*colcache.DefaultBudget(), q)
}

// handleMemory turns Config.HandleMemory into the handle registry's byte
// bound (0: unlimited).
func handleMemory(cfg Config) int64 {
	switch n := cfg.HandleMemory; {
	case n == 0:
		return DefaultHandleMemory
	case n < 0:
		return 0
	default:
		return n
	}
}

// cacheBudget turns Config.CacheMemory into the cache's budget.
func cacheBudget(n int64) int64 {
	switch {
	case n == 0:
		return colcache.DefaultBudget()
	case n < 0:
		return 0
	}
	return n
}

// Close stops a background catalog scan, releases the handle registry and
// stops the artifact sweeper.
func (a *App) Close() {
	a.Catalog.Close()
	a.handles.Close()
	_ = a.h5.Close()
	_ = a.Artifacts.Close()
	a.shared.close()
}

// Ready reports whether the app can answer queries (the HTTP readiness
// probe): the catalog's first scan has ended (with BackgroundScan it runs
// after Open returns), the data root and the artifact directory are still
// directories, and a file can be written in the artifact directory (not
// full, not read-only).
func (a *App) Ready() error {
	if a.Catalog == nil || a.Artifacts == nil {
		return fmt.Errorf("catalog or artifact store not open")
	}
	if st := a.Catalog.ScanStatus(); st.Scanning {
		return fmt.Errorf("the first catalog scan is running (%d files to go)", st.PendingFiles)
	}
	for _, d := range [...]struct{ what, dir string }{{"data root", a.Root}, {"artifact directory", a.Artifacts.Dir()}} {
		st, err := os.Stat(d.dir)
		if err != nil {
			return fmt.Errorf("%s: %w", d.what, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("%s %s is not a directory", d.what, d.dir)
		}
	}
	return a.Artifacts.Writable()
}
