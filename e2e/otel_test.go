package e2e

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a minimal OTLP/HTTP traces endpoint: it decodes every
// export request (protobuf) and keeps the spans with their resource's
// service.name.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service map[string]bool
	paths   map[string]bool
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var msg coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &msg)
	}
	if err != nil || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths[req.URL.Path] = true
	for _, rs := range msg.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				r.service[kv.Value.GetStringValue()] = true
			}
		}
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// find returns the received span named name, or nil.
func (r *otlpReceiver) find(name string) *tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// children are the received spans whose parent is parent, by name.
func (r *otlpReceiver) children(parent *tracepb.Span) map[string]*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*tracepb.Span{}
	for _, s := range r.spans {
		if bytes.Equal(s.ParentSpanId, parent.SpanId) {
			out[s.Name] = s
		}
	}
	return out
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestServeOtelEndpoint: with --otel-endpoint, serve exports one span per
// tool call to the OTLP/HTTP collector (at <endpoint>/v1/traces), with the
// plan, execute and materialize spans as its children in the same trace and
// failed calls marked as errors; a malformed endpoint stops serve. Without
// the flag nothing is exported (every other test runs that way).
func TestServeOtelEndpoint(t *testing.T) {
	bad := exec.Command(binary, "serve", "--otel-endpoint", "collector:4318")
	bad.Env = env()
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "--otel-endpoint") {
		t.Fatalf("serve with a malformed --otel-endpoint: %v\n%s", err, out)
	}

	recv := &otlpReceiver{service: map[string]bool{}, paths: map[string]bool{}}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	// A short batch delay (the SDK's standard variable) so spans arrive
	// while the server runs.
	c := startStdioWith(t, binary, append(env(), "OTEL_BSP_SCHEDULE_DELAY=100"), "--otel-endpoint", collector.URL)
	defer c.Close() // before the collector closes
	call(t, c, "query_data", map[string]any{"dataset": "weather/stations", "limit": 3}, nil)
	callErr(t, c, "get_schema", map[string]any{"dataset": "no/such"})

	var tool, failed *tracepb.Span
	deadline := time.Now().Add(30 * time.Second)
	for tool == nil || failed == nil || len(recv.children(tool)) < 3 {
		if time.Now().After(deadline) {
			recv.mu.Lock()
			n := len(recv.spans)
			recv.mu.Unlock()
			t.Fatalf("after 30 s the collector has %d spans; tool span %v, failed span %v", n, tool != nil, failed != nil)
		}
		time.Sleep(100 * time.Millisecond)
		tool, failed = recv.find("tools/call query_data"), recv.find("tools/call get_schema")
	}
	if !recv.paths["/v1/traces"] || !recv.service["quarry"] {
		t.Errorf("exports to %v from services %v, want /v1/traces from quarry", recv.paths, recv.service)
	}
	if spanAttr(tool, "gen_ai.tool.name") != "query_data" || spanAttr(tool, "quarry.outcome") != "ok" ||
		spanAttr(tool, "quarry.dataset") != "weather/stations" || tool.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("tool span attributes %v status %v", tool.Attributes, tool.Status)
	}
	if len(tool.ParentSpanId) != 0 {
		t.Errorf("the tool span has parent %s, want a root span", hex.EncodeToString(tool.ParentSpanId))
	}
	kids := recv.children(tool)
	for _, name := range []string{"plan", "execute", "materialize"} {
		k, ok := kids[name]
		if !ok {
			t.Errorf("no %q child of the tool span (children %v)", name, kids)
			continue
		}
		if !bytes.Equal(k.TraceId, tool.TraceId) || k.StartTimeUnixNano < tool.StartTimeUnixNano || k.EndTimeUnixNano > tool.EndTimeUnixNano {
			t.Errorf("%s span outside the tool span's trace or time", name)
		}
	}
	if spanAttr(failed, "quarry.outcome") != "dataset_not_found" || failed.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("failed call's span: outcome %q status %v", spanAttr(failed, "quarry.outcome"), failed.Status)
	}
}
