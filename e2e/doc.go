// Package e2e holds Quarry's end-to-end tests: they build bin/quarry, start
// it as a real MCP server (stdio and Streamable HTTP) over the bundled demo
// data, and drive it with mcp-go's client exactly as an LLM client would.
package e2e
