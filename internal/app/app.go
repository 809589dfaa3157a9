// Package app wires a complete Quarry from its configuration: the catalog
// over the data root, the artifact store, the handle registry, the
// materializer, the service and the MCP server. The CLI and the tests that
// need a real server in-process use it, so there is one wiring.
package app

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/hdf5"
	"github.com/quarrydb/quarry/demodata"
	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/service"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/mcpapi"
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
	// QueryMemory is the Arrow memory budget of one query in bytes; 0 => 1 GiB.
	QueryMemory int64
	// QueryTimeout bounds one query; 0 => 60 s.
	QueryTimeout time.Duration
	// Version is announced to clients; "" => "dev".
	Version string
	// Logger receives all logs (stderr); nil => slog.Default().
	Logger *slog.Logger
}

// RegisterFlags binds c's fields to flags on fs, with their defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Data, "data", "", "data root to serve (default: the bundled demo data)")
	fs.StringVar(&c.ArtifactDir, "artifact-dir", "", "where result files are written (default: <user cache dir>/quarry/artifacts; never inside --data)")
	fs.DurationVar(&c.ArtifactTTL, "artifact-ttl", time.Hour, "how long result files are kept")
	fs.Int64Var(&c.ArtifactQuota, "artifact-quota", 2<<30, "bytes of result files kept on disk; oldest evicted first")
	fs.Int64Var(&c.MaxRows, "max-rows", 200, "hard cap: rows returned inline (per-call max_rows may only lower it)")
	fs.Int64Var(&c.MaxBytes, "max-bytes", 64<<10, "hard cap: bytes of inline JSON data (per-call max_bytes may only lower it)")
	fs.Int64Var(&c.MaxCells, "max-cells", 10_000, "hard cap: rows x columns returned inline")
	fs.Int64Var(&c.PageRows, "page-rows", 200, "rows per result-handle page")
	fs.DurationVar(&c.HandleTTL, "handle-ttl", 15*time.Minute, "idle lifetime of a result handle")
	fs.IntVar(&c.MaxHandles, "max-handles", 256, "result handles kept at once (least recently used evicted)")
	fs.Int64Var(&c.QueryMemory, "query-memory", 1<<30, "Arrow memory budget of one query, bytes")
	fs.DurationVar(&c.QueryTimeout, "query-timeout", 60*time.Second, "time limit of one query")
}

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
	// Artifacts is the result-file store.
	Artifacts *artifacts.Store

	handles *handles.Registry[*materialize.Table]
	h5      *hdf5.Format
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
	h5 := hdf5.NewFormat(hdf5.WithRoot(root))
	formats := []catalog.Format{catalog.NewCSVFormat(), h5}
	cat, err := catalog.New(ctx, catalog.Options{Root: root, Formats: formats, Logger: cfg.Logger})
	if err != nil {
		_ = h5.Close()
		return nil, err
	}
	store, err := artifacts.Open(artifacts.Options{Dir: cfg.ArtifactDir, TTL: cfg.ArtifactTTL, Quota: cfg.ArtifactQuota, DataRoot: cat.Root()})
	if err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	reg := handles.New[*materialize.Table](handles.Options{TTL: cfg.HandleTTL, MaxEntries: cfg.MaxHandles})
	mat := materialize.New(materialize.Config{
		Hard:      materialize.Caps{MaxRows: cfg.MaxRows, MaxBytes: cfg.MaxBytes, MaxCells: cfg.MaxCells, PageRows: cfg.PageRows},
		Artifacts: store,
		Handles:   reg,
	})
	svc, err := service.New(service.Config{
		HDF5:    h5,
		Catalog: cat, Materializer: mat, Artifacts: store,
		QueryMemory: cfg.QueryMemory, QueryTimeout: cfg.QueryTimeout,
	})
	if err != nil {
		reg.Close()
		_ = store.Close()
		return nil, err
	}
	a := &App{Config: cfg, Root: cat.Root(), Demo: demo, Catalog: cat, Service: svc, Artifacts: store, handles: reg, h5: h5}
	a.MCP = mcpapi.NewServer(svc, mcpapi.Options{Name: "quarry", Version: cfg.Version, Logger: cfg.Logger})
	return a, nil
}

// Close releases the handle registry and stops the artifact sweeper.
func (a *App) Close() {
	a.handles.Close()
	_ = a.h5.Close()
	_ = a.Artifacts.Close()
}
