// Package tracing is Quarry's optional OpenTelemetry tracing: one span per
// tool call (mcpapi) with child spans for planning, execution and
// materialization (service, materialize). Spans go through the global
// tracer provider, a no-op until Setup installs an OTLP/HTTP exporter
// (`quarry serve --otel-endpoint`, docs/OPERATIONS.md "Traces"); off by
// default.
package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of Quarry's spans.
const scope = "github.com/quarrydb/quarry"

// Start starts a span named name as a child of ctx's span.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return otel.Tracer(scope).Start(ctx, name, trace.WithAttributes(attrs...))
}

// Fail marks span as failed with outcome (an error code or message).
func Fail(span trace.Span, outcome string) {
	span.SetStatus(codes.Error, outcome)
}

// TracesURL is the OTLP/HTTP traces URL for endpoint: like
// OTEL_EXPORTER_OTLP_ENDPOINT, a base URL (http://collector:4318) gets
// /v1/traces appended; a URL already ending in /v1/traces is kept.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otel-endpoint %q: want an http:// or https:// URL of an OTLP/HTTP collector (e.g. http://127.0.0.1:4318)", endpoint)
	}
	path := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(path, "/v1/traces") {
		path += "/v1/traces"
	}
	u.Path = path
	return u.String(), nil
}

// Setup exports spans to the OTLP/HTTP collector at endpoint (see
// TracesURL; headers, timeout and compression follow the standard
// OTEL_EXPORTER_OTLP_* variables, batching OTEL_BSP_*) as service "quarry"
// of version, and returns the function that flushes and stops it. An empty
// endpoint leaves tracing off: the returned function does nothing.
// Export errors are logged to log.
func Setup(endpoint, version string, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	if endpoint == "" {
		return func(context.Context) error { return nil }, nil
	}
	u, err := TracesURL(endpoint)
	if err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(u))
	if err != nil {
		return nil, fmt.Errorf("--otel-endpoint: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", "quarry"), attribute.String("service.version", version)))
	if err != nil {
		return nil, fmt.Errorf("--otel-endpoint: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("opentelemetry", "error", err) }))
	otel.SetTracerProvider(tp)
	log.Info("tracing to OTLP/HTTP", "url", u)
	return tp.Shutdown, nil
}
