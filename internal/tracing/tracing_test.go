package tracing

import "testing"

// TestTracesURL: a collector's base URL gets /v1/traces like
// OTEL_EXPORTER_OTLP_ENDPOINT; a full traces URL is kept; anything but an
// http(s) URL with a host is refused.
func TestTracesURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"},
		{"http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"},
		{"https://otel.example/otlp", "https://otel.example/otlp/v1/traces"},
		{"https://otel.example/v1/traces", "https://otel.example/v1/traces"},
		{"collector:4318", ""},
		{"ftp://collector", ""},
		{"http://", ""},
		{"://x", ""},
	} {
		got, err := TracesURL(tc.in)
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
