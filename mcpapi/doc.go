// Package mcpapi is Quarry's thin MCP layer on mark3labs/mcp-go: it
// declares tools (one constructor each, schemas generated from the service
// request/response structs), resources and resource templates, and maps
// errors to structured tool errors. Handlers only bind arguments, call the
// service and wrap the answer; no planning, execution or formatting happens
// here. The stdio and Streamable HTTP transports that carry the server it
// builds live in mcpapi/transport.
package mcpapi
