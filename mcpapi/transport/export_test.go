package transport

// AppendMessage exposes appendMessage to the external benchmarks.
var AppendMessage = appendMessage
