package mcpapi

// AppendMessage exposes appendMessage to the external benchmarks.
var AppendMessage = appendMessage
