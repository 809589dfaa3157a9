package mcpapi

import "time"

// ToolCall is what Options.OnToolCall learns of one finished tool call
// (the same facts as the "tool call" log line).
type ToolCall struct {
	// Tool is the tool name; Outcome is "ok", an error code, "error" or
	// "protocol_error".
	Tool, Outcome string
	// Duration is the handler's wall time.
	Duration time.Duration
	// Method is the delivery method of a result (direct, handle, file, ...);
	// "" when the call delivered no rows. Rows and Bytes are what it
	// delivered (inline JSON bytes plus file bytes).
	Method      string
	Rows, Bytes int64
}
