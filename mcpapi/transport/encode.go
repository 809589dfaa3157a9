package transport

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// appendMessage appends the JSON encoding of a JSON-RPC message to dst, as
// one line without the trailing newline. The result is the same JSON value
// json.Marshal(msg) produces (byte for byte when no string holds '<', '>'
// or '&', which json.Marshal escapes).
//
// Tool results are the fast path: their structured content is JSON that
// this package encoded itself (structuredResult), often hundreds of
// kilobytes of rows or slice values. json.Marshal re-validates and
// compacts that payload twice (once as the json.RawMessage inside
// mcp-go's CallToolResult.MarshalJSON, again as that method's output),
// which costs more than encoding it did; appendMessage copies it as is.
// Everything else, and any tool result with fields this fast path does not
// know (_meta, multi round-trip requests), goes through json.Marshal.
func appendMessage(dst []byte, msg mcp.JSONRPCMessage) ([]byte, error) {
	if out, ok, err := appendToolResponse(dst, msg); ok || err != nil {
		return out, err
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendToolResponse writes a tools/call response the way json.Marshal
// would: the envelope's fields in struct order and the result's keys in
// the sorted order of the map CallToolResult.MarshalJSON builds. ok is
// false when msg is not such a response or has a field only json.Marshal
// handles.
func appendToolResponse(dst []byte, msg mcp.JSONRPCMessage) (out []byte, ok bool, err error) {
	var resp mcp.JSONRPCResponse
	switch m := msg.(type) {
	case mcp.JSONRPCResponse:
		resp = m
	case *mcp.JSONRPCResponse:
		if m == nil {
			return dst, false, nil
		}
		resp = *m
	default:
		return dst, false, nil
	}
	var r *mcp.CallToolResult
	switch x := resp.Result.(type) {
	case *mcp.CallToolResult:
		r = x
	case mcp.CallToolResult:
		r = &x
	}
	if r == nil || r.Meta != nil || len(r.InputRequests) > 0 || r.RequestState != "" {
		return dst, false, nil
	}
	var structured []byte
	switch {
	case len(r.RawStructuredContent) > 0:
		structured = r.RawStructuredContent
	case r.StructuredContent == nil:
	default:
		raw, isRaw := r.StructuredContent.(json.RawMessage)
		if !isRaw || len(raw) == 0 {
			return dst, false, nil
		}
		structured = raw
	}
	// Pre-encoded JSON is compact; indented JSON would break the one
	// message per line framing of stdio, so it takes the slow path.
	if bytes.IndexByte(structured, '\n') >= 0 || bytes.IndexByte(structured, '\r') >= 0 {
		return dst, false, nil
	}
	id, err := json.Marshal(resp.ID)
	if err != nil {
		return dst, true, err
	}
	content := []byte("[]")
	if len(r.Content) > 0 {
		if content, err = json.Marshal(r.Content); err != nil {
			return dst, true, err
		}
	}
	dst = append(dst, `{"jsonrpc":`...)
	dst = appendJSONString(dst, resp.JSONRPC)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":{"content":`...)
	dst = append(dst, content...)
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if r.ResultType != "" {
		dst = append(dst, `,"resultType":`...)
		dst = appendJSONString(dst, string(r.ResultType))
	}
	if structured != nil {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, structured...)
	}
	return append(dst, "}}"...), true, nil
}

// appendJSONString appends s as a JSON string (json.Marshal's escaping).
func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}
