// Package mcpapi is Quarry's thin MCP layer on mark3labs/mcp-go: it
// declares tools (one constructor each, schemas generated from the service
// request/response structs), resources and resource templates, maps errors
// to structured tool errors, and runs the stdio and Streamable HTTP
// transports. Handlers only bind arguments, call the service and wrap the
// answer; no planning, execution or formatting happens here.
package mcpapi
