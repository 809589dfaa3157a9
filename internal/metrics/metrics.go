// Package metrics is Quarry's Prometheus instrumentation: tool calls by
// tool and outcome with latency histograms, rows and bytes delivered by
// method, HTTP requests rejected by reason, and gauges read at scrape time
// (column cache, result handles, artifacts, the server memory budget, spill
// bytes), plus the Go runtime and process collectors. `quarry serve --transport http`
// serves it at /metrics (docs/OPERATIONS.md).
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/mcpapi"
	"github.com/quarrydb/quarry/mcpapi/transport"
)

// Metrics holds the collectors of one server. Safe for concurrent use.
type Metrics struct {
	reg         *prometheus.Registry
	calls       *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rows, bytes *prometheus.CounterVec
	rejected    *prometheus.CounterVec
}

// New returns Metrics with the counters registered; AddGauges adds the
// scrape-time gauges once the server is wired.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, an error code, error, protocol_error)."}, []string{"tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "quarry_tool_call_duration_seconds",
			Help: "Tool call wall time by tool.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"tool"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_delivered_rows_total",
			Help: "Result rows delivered by delivery method (direct, handle, file, ...)."}, []string{"method"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_delivered_bytes_total",
			Help: "Result bytes delivered (inline JSON plus files) by delivery method."}, []string{"method"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_http_rejected_total",
			Help: "HTTP requests rejected by a guard, by reason (auth, origin, rate, size) and code."}, []string{"reason", "code"}),
	}
	m.reg.MustRegister(m.calls, m.latency, m.rows, m.bytes, m.rejected,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ToolCall records one finished tool call (mcpapi.Options.OnToolCall).
func (m *Metrics) ToolCall(c mcpapi.ToolCall) {
	m.calls.WithLabelValues(c.Tool, c.Outcome).Inc()
	m.latency.WithLabelValues(c.Tool).Observe(c.Duration.Seconds())
	if c.Method != "" {
		m.rows.WithLabelValues(c.Method).Add(float64(c.Rows))
		m.bytes.WithLabelValues(c.Method).Add(float64(c.Bytes))
	}
}

// Rejected records an HTTP request a guard rejected with code
// (transport.HTTPOptions.OnReject).
func (m *Metrics) Rejected(code string) {
	reason := transport.RejectReason(code)
	if reason == "" {
		reason = "other"
	}
	m.rejected.WithLabelValues(reason, code).Inc()
}

// Sources are read at scrape time; nil fields are left out.
type Sources struct {
	// Cache returns the column cache's counters.
	Cache func() colcache.Stats
	// Handles returns the live result handles.
	Handles func() int
	// Artifacts returns the live result files and their bytes.
	Artifacts func() (count int, bytes int64)
	// Memory returns the bytes running queries hold of the server memory
	// budget and its limit.
	Memory func() (used, limit int64)
	// Spill returns the bytes of spill files written since start by joins
	// over their memory budget and by results collected to disk.
	Spill func() (join, result int64)
}

// AddGauges registers the gauges read from src at scrape time.
func (m *Metrics) AddGauges(src Sources) {
	gauge := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	counter := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
	}
	if src.Cache != nil {
		gauge("quarry_cache_bytes", "Bytes of parsed columns held by the column cache.", func() float64 { return float64(src.Cache().Used) })
		gauge("quarry_cache_budget_bytes", "The column cache's byte budget.", func() float64 { return float64(src.Cache().Budget) })
		counter("quarry_cache_hits_total", "Column cache lookups served from memory.", func() float64 { return float64(src.Cache().Hits) })
		counter("quarry_cache_misses_total", "Column cache lookups that read the file.", func() float64 { return float64(src.Cache().Misses) })
		gauge("quarry_cache_hit_ratio", "Column cache hits / (hits + misses) since start (0 before any lookup).", func() float64 {
			s := src.Cache()
			if s.Hits+s.Misses == 0 {
				return 0
			}
			return float64(s.Hits) / float64(s.Hits+s.Misses)
		})
	}
	if src.Handles != nil {
		gauge("quarry_handles_live", "Live result handles.", func() float64 { return float64(src.Handles()) })
	}
	if src.Artifacts != nil {
		gauge("quarry_artifacts_live", "Result files in the artifact store (spill files included).", func() float64 { n, _ := src.Artifacts(); return float64(n) })
		gauge("quarry_artifact_bytes", "Bytes of result files in the artifact store (spill files included).", func() float64 { _, b := src.Artifacts(); return float64(b) })
	}
	if src.Memory != nil {
		gauge("quarry_memory_used_bytes", "Bytes running queries hold of the server memory budget.", func() float64 { u, _ := src.Memory(); return float64(u) })
		gauge("quarry_memory_limit_bytes", "The server memory budget (0: none).", func() float64 { _, l := src.Memory(); return float64(l) })
	}
	if src.Spill != nil {
		// One family, kind="join" (partition files of joins over the query
		// memory budget) and kind="result" (results collected to disk).
		for _, kind := range []string{"join", "result"} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "quarry_spill_bytes_total",
				Help: "Bytes of spill files written, by kind (join: join partitions, result: results collected to disk).", ConstLabels: prometheus.Labels{"kind": kind}},
				func() float64 {
					join, result := src.Spill()
					if kind == "join" {
						return float64(join)
					}
					return float64(result)
				}))
		}
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
