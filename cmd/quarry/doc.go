// Command quarry is Quarry's CLI: serve the MCP server (stdio or
// Streamable HTTP), list its capabilities, call one tool or read one
// resource in-process, and print the catalog.
//
//	quarry serve   [--data DIR] [--transport stdio|http] [--addr 127.0.0.1:8765]
//	quarry tools   [--data DIR]
//	quarry call    TOOL --args '{json}' [--data DIR]
//	quarry read    URI [--data DIR] [--out FILE]
//	quarry catalog [--data DIR]
//	quarry --version
//
// Without --data, Quarry serves the bundled demo data (extracted to the
// user cache directory). Logs go to stderr; stdout carries only results
// (and the stdio transport).
package main
