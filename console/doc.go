// Package console is Quarry's web console: the pages `quarry serve
// --transport http` serves at `/` (home with client configurations and a
// health line, catalog, dataset, query with estimate, paging, downloads and
// charts, and the tools, resources and prompts each with a form that calls
// it), and the instruction page a browser gets for GET /mcp.
//
// The console has no query path of its own: its script speaks MCP to the
// same /mcp endpoint (Streamable HTTP, JSON-RPC) as any client, with the
// bearer token the user types, kept in memory only. The package serves
// static assets embedded with go:embed (plain ES modules, no build step)
// under a Content-Security-Policy without inline script or style, and
// renders every value with DOM text nodes, never as HTML.
package console
