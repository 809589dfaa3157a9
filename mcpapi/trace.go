package mcpapi

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/quarrydb/quarry/internal/tracing"
)

// endToolSpan ends a tool call's span (toolMiddleware) with what the call
// recorded: its outcome (the span fails unless "ok"), dataset and delivery.
func endToolSpan(span trace.Span, rec *callRecord, outcome string) {
	span.SetAttributes(attribute.String("quarry.outcome", outcome))
	if rec.dataset != "" {
		span.SetAttributes(attribute.String("quarry.dataset", rec.dataset))
	}
	if rec.method != "" {
		span.SetAttributes(attribute.String("quarry.method", rec.method), attribute.Int64("quarry.rows", rec.rows),
			attribute.Int64("quarry.bytes", rec.bytes))
	}
	if outcome != "ok" {
		tracing.Fail(span, outcome)
	}
	span.End()
}
