package console

import (
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// Prefix is the path under which the console's assets are served; the
// home page is `/`.
const Prefix = "/console/"

// CSP is the Content-Security-Policy of every console response: scripts,
// styles and connections from the server's own origin only, images also
// as data: URLs (charts), no inline script or style, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
	"font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ClientConfig is one copy-paste client configuration shown on the home
// page and the instruction page.
type ClientConfig struct {
	// Client names the client ("Claude Desktop", "VS Code", ...).
	Client string `json:"client"`
	// Where says where the text goes (a file, or a shell).
	Where string `json:"where"`
	// Text is what to paste.
	Text string `json:"text"`
}

// Options configure the console.
type Options struct {
	// Version is Quarry's version, shown on the pages.
	Version string
	// Clients are the client configurations (the ones `quarry serve`
	// prints at start-up).
	Clients []ClientConfig
	// OutputSchemas are the tools' output schemas by tool name, which
	// tools/list leaves out; the Tools page shows them.
	OutputSchemas map[string]json.RawMessage
}

// Handler serves the console pages and assets.
type Handler struct {
	opts   Options
	assets http.Handler
	index  []byte
	config []byte
}

// New returns the console handler.
func New(opts Options) (*Handler, error) {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		return nil, err
	}
	if opts.Clients == nil {
		opts.Clients = []ClientConfig{}
	}
	if opts.OutputSchemas == nil {
		opts.OutputSchemas = map[string]json.RawMessage{}
	}
	config, err := json.Marshal(map[string]any{"version": opts.Version, "clients": opts.Clients, "output_schemas": opts.OutputSchemas})
	if err != nil {
		return nil, err
	}
	return &Handler{opts: opts, assets: http.StripPrefix(Prefix, http.FileServerFS(sub)), index: index, config: config}, nil
}

// Owns reports whether the console serves path (the home page and the
// assets under Prefix).
func Owns(p string) bool {
	return p == "/" || p == "/index.html" || p == "/favicon.ico" || strings.HasPrefix(p, Prefix)
}

// WantsHTML reports whether r is a browser's navigation to the MCP
// endpoint: a GET that accepts text/html and is not an MCP stream.
func WantsHTML(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "text/html") && !strings.Contains(accept, "text/event-stream")
}

func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
}

// ServeHTTP implements http.Handler for the paths Owns reports.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch p := path.Clean(r.URL.Path); {
	case p == "/" || p == "/index.html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(h.index)
	case p == "/favicon.ico":
		http.Redirect(w, r, Prefix+"favicon.svg", http.StatusMovedPermanently)
	case r.URL.Path == Prefix+"config.json":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(h.config)
	case strings.HasPrefix(r.URL.Path, Prefix):
		h.assets.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

var instructions = template.Must(template.New("instructions").Parse(instructionsHTML))

// Instructions writes the instruction page a browser gets for GET /mcp:
// what the endpoint is, how to connect each client, and a link to the
// console.
func (h *Handler) Instructions(w http.ResponseWriter, r *http.Request) {
	secure(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	_ = instructions.Execute(w, map[string]any{
		"Version":  h.opts.Version,
		"Endpoint": scheme + "://" + r.Host + r.URL.Path,
		"Clients":  h.opts.Clients,
	})
}

const instructionsHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quarry MCP endpoint</title>
<link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/app.css">
</head>
<body>
<main class="page">
<h1>Quarry MCP endpoint</h1>
<p>This is the Model Context Protocol endpoint of Quarry {{.Version}} (Streamable HTTP). It is meant for MCP clients,
not browsers: point an LLM client at <code>{{.Endpoint}}</code>, or start Quarry over stdio as below.</p>
<p><a href="/">Open the Quarry console</a> to browse the catalog, run queries and try every tool, resource and prompt.</p>
<h2>Connect a client</h2>
{{range .Clients}}<section class="card"><h3>{{.Client}}</h3><p class="muted">{{.Where}}</p><pre>{{.Text}}</pre></section>
{{end}}
<h2>Protocol</h2>
<p>JSON-RPC 2.0 over HTTP POST to this path (<a href="https://modelcontextprotocol.io/specification">MCP specification</a>),
revisions 2025-11-25 and 2026-07-28; a bearer token in <code>Authorization</code> when the server requires one.</p>
</main>
</body>
</html>
`
