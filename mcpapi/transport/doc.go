// Package transport carries an MCP server (built by mcpapi) over stdio and
// Streamable HTTP: the stdio loop with concurrent tool calls (stdio_calls.go),
// its bounds against a client that stops reading (stdio_bounds.go) and the
// pre-encoded response writer (encode.go); the HTTP handler with its
// guards: bearer-token auth (http_auth.go), Origin/CORS and Host (DNS
// rebinding) checks, per-principal rate and concurrency limits, body and
// stream/session caps with write deadlines, and the `quarry serve` HTTP
// flags. It also answers a tools/call whose arguments mcp-go cannot decode
// (a number float64 cannot hold) with a structured tool error
// (numbers.go). It knows nothing of Quarry's tools: it takes any
// *server.MCPServer.
package transport
