package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/console"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/metrics"
	"github.com/quarrydb/quarry/internal/tracing"
	"github.com/quarrydb/quarry/mcpapi"
	mcptransport "github.com/quarrydb/quarry/mcpapi/transport"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `Quarry: an Arrow-native query engine for CSV and HDF5 files, served over MCP.

Usage:
  quarry serve   [--data DIR] [--transport stdio|http] [--addr 127.0.0.1:8765] [flags]
  quarry tools   [--data DIR]                  list tools, resources, templates and prompts as JSON
  quarry call    TOOL --args '{json}' [--data DIR]   run one tool and print its JSON result
  quarry read    URI [--data DIR] [--out FILE]  read one resource (binary ones need --out)
  quarry catalog [--data DIR]                   print the datasets as a table
  quarry schema-card init DATASET [--out FILE] | check   starter schema card / validate cards
  quarry --version

Run 'quarry VERB --help' for the flags of a verb. Without --data, the bundled demo data is served.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a graceful shutdown; after it, signals get
	// their default action again, so a second Ctrl-C stops at once.
	go func() { <-ctx.Done(); stop() }()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one CLI invocation and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	verb, rest := args[0], args[1:]
	var err error
	switch verb {
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, "quarry", version)
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "serve":
		err = cmdServe(ctx, rest, stdin, stdout, stderr)
	case "tools":
		err = cmdTools(ctx, rest, stdout, stderr)
	case "call":
		err = cmdCall(ctx, rest, stdout, stderr)
	case "read":
		err = cmdRead(ctx, rest, stdout, stderr)
	case "catalog":
		err = cmdCatalog(ctx, rest, stdout, stderr)
	case "schema-card":
		err = cmdSchemaCard(ctx, rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "quarry: unknown verb %q\n\n%s", verb, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	var te *toolError
	if errors.As(err, &te) {
		fmt.Fprintln(stdout, te.body)
		return 1
	}
	fmt.Fprintf(stderr, "quarry %s: %v\n", verb, oneLine(err))
	return 1
}

var errUsage = errors.New("usage")

// toolError carries a tool's structured error JSON to print on stdout.
type toolError struct{ body string }

func (e *toolError) Error() string { return e.body }

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

// parse parses fs over args, allowing one positional argument before or
// among the flags. It returns the positionals.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: quarry %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("serve", "serve [--data DIR] [--transport stdio|http] [--addr HOST:PORT] [flags]", stderr)
	cfg.register(fs)
	transport := fs.String("transport", "stdio", "MCP transport: stdio or http (Streamable HTTP at /mcp)")
	addr := fs.String("addr", "127.0.0.1:8765", "listen address for --transport http (not loopback: bearer tokens required)")
	consoleOn := fs.Bool("console", true, "with --transport http, serve the web console at / and an instruction page for browsers at /mcp")
	otelEndpoint := fs.String("otel-endpoint", "", "OTLP/HTTP collector to send OpenTelemetry traces to (e.g. http://127.0.0.1:4318; /v1/traces is appended); off when empty")
	var httpFlags mcptransport.HTTPFlags
	httpFlags.Register(fs)
	var flight flightFacade
	flight.flags.Register(fs)
	var tools toolSelection
	tools.register(fs)
	settings := newLayers(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if err := settings.applyOS(); err != nil {
		return err
	}
	if settings.print {
		return settings.printConfig(stdout)
	}
	if *transport != "stdio" && *transport != "http" {
		fmt.Fprintf(stderr, "quarry serve: --transport must be stdio or http, got %q\n", *transport)
		return errUsage
	}
	var httpOpts mcptransport.HTTPOptions
	if *transport == "http" {
		// Validate (tokens, origins, loopback-or-auth) before opening the data.
		var err error
		if httpOpts, err = httpFlags.Options(*addr, os.Getenv); err != nil {
			return err
		}
	}
	if err := flight.check(&httpFlags); err != nil {
		return err
	}
	if *otelEndpoint != "" {
		if _, err := tracing.TracesURL(*otelEndpoint); err != nil {
			fmt.Fprintf(stderr, "quarry serve: %v\n", err)
			return errUsage
		}
	}
	cfg.app.BackgroundScan = true // answer at once; the catalog scan runs behind
	cfg.app.FlightSQL = settings.remotes
	m := metrics.New()
	cfg.app.OnToolCall = m.ToolCall
	a, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	a.ApplyGoMemoryLimit(os.Getenv)
	watchApp(m, a)
	stopTracing, err := tracing.Setup(*otelEndpoint, version, a.Config.Logger)
	if err != nil {
		return err
	}
	defer func() {
		// Flush the spans still batched, within a bound.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(ctx); err != nil {
			a.Config.Logger.Warn("opentelemetry: flushing spans", "error", err)
		}
	}()
	if err := tools.apply(a.MCP); err != nil {
		return err
	}
	stopFlight, err := flight.start(ctx, a)
	if err != nil {
		return err
	}
	defer stopFlight()
	a.Config.Logger.Info("quarry starting", "version", version, "transport", *transport, "data_root", a.Root,
		"artifact_dir", a.Artifacts.Dir(), "artifact_store", a.Artifacts.RemoteLocation(), "catalog", "scanning in the background")
	if *transport == "stdio" {
		return mcptransport.ServeStdioWith(ctx, a.MCP, stdin, stdout,
			mcptransport.StdioOptions{Logger: a.Config.Logger, WriteTimeout: httpFlags.WriteTimeout})
	}
	httpOpts.Logger, httpOpts.Readiness = a.Config.Logger, a.Ready
	httpOpts.Metrics, httpOpts.OnReject = m.Handler(), m.Rejected
	if *consoleOn {
		if httpOpts.Console, err = console.New(console.Options{Version: version, Clients: clientConfigs(a), OutputSchemas: a.OutputSchemas}); err != nil {
			return err
		}
	}
	httpOpts.Download = mcpapi.NewDownloader(a.Service)
	httpOpts.Ready = func(ln net.Addr) { printBanner(stderr, ln.String(), a, *consoleOn) }
	return mcptransport.ServeHTTP(ctx, a.MCP, httpOpts)
}

// clientConfigs are the client configurations that start this server over
// stdio (the banner prints them, the console shows them).
func clientConfigs(a *app.App) []console.ClientConfig {
	exe, err := os.Executable()
	if err != nil {
		exe = "quarry"
	}
	exe, _ = filepath.Abs(exe)
	args := []string{"serve"}
	if !a.Demo {
		args = append(args, "--data", a.Root)
	}
	server := map[string]any{"command": exe, "args": args}
	desktop, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"quarry": server}}, "", "  ")
	vscode, _ := json.MarshalIndent(map[string]any{"servers": map[string]any{"quarry": server}}, "", "  ")
	return []console.ClientConfig{
		{Client: "Claude Desktop", Where: "claude_desktop_config.json (Settings → Developer → Edit Config)", Text: string(desktop)},
		{Client: "Claude Code", Where: "run in a shell", Text: "claude mcp add quarry -- " + exe + " " + strings.Join(args, " ")},
		{Client: "VS Code", Where: ".vscode/mcp.json in the workspace", Text: string(vscode)},
		{Client: "Cursor", Where: "~/.cursor/mcp.json or .cursor/mcp.json in the project", Text: string(desktop)},
	}
}

// printBanner tells a person how to connect, on stderr.
func printBanner(w io.Writer, addr string, a *app.App, consoleOn bool) {
	serving := fmt.Sprintf("%d datasets", len(a.Catalog.Datasets()))
	if a.Catalog.ScanStatus().Scanning {
		serving = "the datasets (scanning in the background)"
	}
	fmt.Fprintf(w, "\nQuarry %s is serving %s from %s\n", version, serving, rootLabel(a))
	fmt.Fprintf(w, "  MCP endpoint (Streamable HTTP): http://%s/mcp\n", addr)
	if consoleOn {
		fmt.Fprintf(w, "  Console (browser):              http://%s/\n", addr)
	}
	fmt.Fprintf(w, "  Health check:                   http://%s/healthz\n\nConnect a client over stdio instead:\n", addr)
	for _, c := range clientConfigs(a) {
		fmt.Fprintf(w, "  %s (%s):\n%s\n", c.Client, c.Where, indent([]byte(c.Text)))
	}
	exe, _ := os.Executable()
	fmt.Fprintf(w, "\nServe your own folder: %s serve --data /path/to/folder   (or: make run DATA=/path/to/folder)\n", exe)
}

func indent(b []byte) string {
	return "    " + strings.ReplaceAll(string(b), "\n", "\n    ")
}

func rootLabel(a *app.App) string {
	if a.Demo {
		return a.Root + " (bundled demo data)"
	}
	return a.Root
}

// inProcess opens the app and connects mcp-go's in-process client to it.
func inProcess(ctx context.Context, cfg config) (*app.App, *client.Client, error) {
	a, err := open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.NewInProcessClient(a.MCP)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	if err := c.Start(ctx); err != nil {
		a.Close()
		return nil, nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "quarry-cli", Version: version}
	if _, err := c.Initialize(ctx, init); err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, c, nil
}

func cmdTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("tools", "tools [--data DIR]", stderr)
	cfg.register(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	a, c, err := inProcess(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	defer c.Close()
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return err
	}
	res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		return err
	}
	tmpl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		return err
	}
	prompts := []mcp.Prompt{}
	if p, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{}); err == nil {
		prompts = p.Prompts
	}
	return writeJSON(stdout, map[string]any{
		"tools": tools.Tools, "resources": res.Resources, "resource_templates": tmpl.ResourceTemplates, "prompts": prompts,
	})
}

func cmdCall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("call", "call TOOL --args '{json}' [--data DIR]", stderr)
	cfg.register(fs)
	argJSON := fs.String("args", "{}", "tool arguments as a JSON object")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "quarry call: name exactly one tool (see 'quarry tools')")
		return errUsage
	}
	var object map[string]json.RawMessage
	if err := json.Unmarshal([]byte(*argJSON), &object); err != nil {
		return fmt.Errorf("--args is not a JSON object: %v", err)
	}
	arguments := json.RawMessage(*argJSON) // sent as written: numbers stay exact
	if err := mcptransport.CheckArgumentNumbers(arguments); err != nil {
		b, _ := json.Marshal(err)
		return &toolError{body: string(b)}
	}
	a, c, err := inProcess(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = pos[0]
	req.Params.Arguments = arguments
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError {
		return &toolError{body: contentText(res)}
	}
	if res.StructuredContent != nil {
		return writeJSON(stdout, res.StructuredContent)
	}
	_, err = fmt.Fprintln(stdout, contentText(res))
	return err
}

func contentText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func cmdRead(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("read", "read URI [--data DIR] [--out FILE]", stderr)
	cfg.register(fs)
	out := fs.String("out", "", "write the resource to FILE (required for binary resources)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "quarry read: name exactly one resource URI")
		return errUsage
	}
	a, c, err := inProcess(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	defer c.Close()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = pos[0]
	res, err := c.ReadResource(ctx, req)
	if err != nil {
		return err
	}
	for _, rc := range res.Contents {
		var data []byte
		switch x := rc.(type) {
		case mcp.TextResourceContents:
			data = []byte(x.Text)
		case mcp.BlobResourceContents:
			if data, err = base64.StdEncoding.DecodeString(x.Blob); err != nil {
				return err
			}
			if *out == "" {
				return fmt.Errorf("%s is binary (%s, %d bytes): pass --out FILE", x.URI, x.MIMEType, len(data))
			}
		}
		if *out != "" {
			return os.WriteFile(*out, data, 0o644)
		}
		if _, err := stdout.Write(data); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

func cmdCatalog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("catalog", "catalog [--data DIR]", stderr)
	cfg.register(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	a, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tROWS\tCOLUMNS\tSIZE\tPATH")
	for _, d := range a.Catalog.Datasets() {
		rows := fmt.Sprint(d.RowCount)
		if !d.RowCountExact {
			rows = "~" + rows
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.Kind, rows, d.Schema.NumFields(), humanBytes(d.SizeBytes), d.Path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	diags := a.Catalog.Diagnostics()
	sort.Slice(diags, func(i, j int) bool { return diags[i].Path < diags[j].Path })
	for _, d := range diags {
		fmt.Fprintf(stdout, "skipped %s: %s\n", d.Path, d.Reason)
	}
	return nil
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
