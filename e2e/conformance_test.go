package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/testutil/syncbuf"
)

// protocolCase is one JSON-RPC message and what must come back.
type protocolCase struct {
	name string
	msg  string
	// id is the id the response must carry (JSON), "null" for none known.
	id string
	// codes are the acceptable JSON-RPC error codes; empty means a result;
	// noResponse means nothing may come back (a notification).
	codes      []int
	noResponse bool
	// status is the HTTP status required over HTTP (0: any).
	status int
}

// protocolCases are the JSON-RPC edges of seed 004's tables (T2.x, T12.x).
var protocolCases = []protocolCase{
	{name: "ping", msg: `{"jsonrpc":"2.0","id":101,"method":"ping"}`, id: "101", status: 200},
	{name: "string id", msg: `{"jsonrpc":"2.0","id":"abc-102","method":"ping"}`, id: `"abc-102"`, status: 200},
	{name: "parse error", msg: `{"jsonrpc":"2.0","id":103,"method":"ping"`, id: "null", codes: []int{-32700}, status: 400},
	{name: "not json", msg: `hello there`, id: "null", codes: []int{-32700}, status: 400},
	{name: "jsonrpc 1.0", msg: `{"jsonrpc":"1.0","id":104,"method":"ping"}`, id: "104", codes: []int{-32600}},
	{name: "missing method", msg: `{"jsonrpc":"2.0","id":105}`, id: "105", codes: []int{-32600}, status: 400},
	{name: "empty object", msg: `{}`, id: "null", codes: []int{-32600}},
	{name: "method not a string", msg: `{"jsonrpc":"2.0","id":106,"method":42}`, id: "106", codes: []int{-32600}, status: 400},
	{name: "object id", msg: `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, id: "null", codes: []int{-32600}, status: 400},
	{name: "null id", msg: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, id: "null", codes: []int{-32600}, status: 400},
	{name: "batch", msg: `[{"jsonrpc":"2.0","id":107,"method":"ping"}]`, id: "null", codes: []int{-32600}, status: 400},
	{name: "json string", msg: `"ping"`, id: "null", codes: []int{-32600}, status: 400},
	{name: "unknown method", msg: `{"jsonrpc":"2.0","id":108,"method":"tools/destroy"}`, id: "108", codes: []int{-32601}},
	{name: "unknown tool", msg: `{"jsonrpc":"2.0","id":109,"method":"tools/call","params":{"name":"drop_table","arguments":{}}}`, id: "109", codes: []int{-32602}},
	{name: "tool without name", msg: `{"jsonrpc":"2.0","id":110,"method":"tools/call","params":{"arguments":{}}}`, id: "110", codes: []int{-32602}},
	// mcp-go answers params of the wrong JSON type with -32600, not -32602.
	{name: "params not an object", msg: `{"jsonrpc":"2.0","id":111,"method":"tools/call","params":"get_catalog"}`, id: "111", codes: []int{-32602, -32600}},
	{name: "name not a string", msg: `{"jsonrpc":"2.0","id":112,"method":"tools/call","params":{"name":7}}`, id: "112", codes: []int{-32602, -32600}},
	{name: "read without uri", msg: `{"jsonrpc":"2.0","id":113,"method":"resources/read","params":{}}`, id: "113", codes: []int{-32602, -32002}},
	{name: "notification", msg: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, noResponse: true, status: 202},
	{name: "unknown notification", msg: `{"jsonrpc":"2.0","method":"notifications/made_up","params":{"x":1}}`, noResponse: true, status: 202},
	// Ids mcp-go cannot echo exactly (it reads numbers as float64) are
	// refused, echoing the id verbatim; exact ones come back unchanged.
	{name: "id beyond 2^53", msg: `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, id: "9007199254740993", codes: []int{-32600}, status: 400},
	{name: "id beyond int64", msg: `{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/call","params":{"name":"get_catalog","arguments":{}}}`, id: "12345678901234567890123", codes: []int{-32600}, status: 400},
	{name: "id 2^53", msg: `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, id: "9007199254740992", status: 200},
	{name: "null arguments", msg: `{"jsonrpc":"2.0","id":114,"method":"tools/call","params":{"name":"get_catalog","arguments":null}}`, id: "114", status: 200},
}

// checkResponse checks one decoded response against c.
func checkResponse(t *testing.T, c protocolCase, resp map[string]json.RawMessage) {
	t.Helper()
	if got := string(resp["id"]); got != c.id {
		t.Errorf("%s: id %s, want %s", c.name, got, c.id)
	}
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	errRaw, isErr := resp["error"]
	if len(c.codes) == 0 {
		if isErr || resp["result"] == nil {
			t.Errorf("%s: want a result, got %s", c.name, errRaw)
		}
		return
	}
	if !isErr || json.Unmarshal(errRaw, &e) != nil {
		t.Errorf("%s: want an error %v, got %v", c.name, c.codes, resp)
		return
	}
	for _, code := range c.codes {
		if e.Code == code {
			if e.Message == "" {
				t.Errorf("%s: error without a message", c.name)
			}
			return
		}
	}
	t.Errorf("%s: code %d (%s), want one of %v", c.name, e.Code, e.Message, c.codes)
}

// TestConformanceHTTP sends every protocol case in a 2025-11-25 session.
func TestConformanceHTTP(t *testing.T) {
	p := launchHTTP(t, nil, "--rate-limit", "0")
	init := httpDo(t, http.MethodPost, p.base+"/mcp",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`, nil)
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", init.status, init.body)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	for _, c := range protocolCases {
		t.Run(c.name, func(t *testing.T) {
			r := httpDo(t, http.MethodPost, p.base+"/mcp", c.msg, hdr)
			if c.status != 0 && r.status != c.status {
				t.Errorf("HTTP %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.noResponse {
				if strings.TrimSpace(r.body) != "" {
					t.Errorf("a notification got a body: %s", r.body)
				}
				return
			}
			var resp map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.body), &resp); err != nil {
				t.Fatalf("response is not one JSON object (%v): %d %s", err, r.status, r.body)
			}
			checkResponse(t, c, resp)
		})
	}
	// The stateless era maps errors onto HTTP statuses (mcp-go): unknown
	// method is 404, invalid params 400.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/destroy","params":{` + modernMeta + `}}`
	r := httpDo(t, http.MethodPost, p.base+"/mcp", body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/destroy"})
	if code, _, _ := r.rpcError(); r.status != 404 || code != -32601 {
		t.Fatalf("stateless unknown method: %d %s", r.status, r.body)
	}
	// A stateless request whose headers disagree with its body is refused.
	call, h := statelessCall("get_catalog", `{}`)
	r = httpDo(t, http.MethodPost, p.base+"/mcp", call, withHeaders(h, "Mcp-Name", "query_data"))
	if r.status != 400 {
		t.Fatalf("Mcp-Name mismatch: %d %s", r.status, r.body)
	}
	// GET /mcp without an SSE Accept, unknown paths and path tricks.
	for path, want := range map[string]int{"/mcp/": 404, "/nope": 404, "/mcp/../etc/passwd": 0, "/%2e%2e/etc/passwd": 404} {
		r := httpDo(t, http.MethodGet, p.base+path, "", nil)
		if (want != 0 && r.status != want) || strings.Contains(r.body, "root:") {
			t.Errorf("GET %s: %d %q", path, r.status, r.body)
		}
	}
}

// stdioProc is a raw stdio server: lines in, lines out.
type stdioProc struct {
	in    io.WriteCloser
	lines chan string
}

func launchStdio(t *testing.T, extra ...string) *stdioProc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--log-level", "warn"}, extra...)...)
	cmd.Env = env()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &stdioProc{in: in, lines: make(chan string, 256)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("stdio server stderr:\n%s", stderr.String())
		}
	})
	p.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if resp := p.next(t); !strings.Contains(resp, `"id":"init"`) || !strings.Contains(resp, `"result"`) {
		t.Fatalf("initialize: %s", resp)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *stdioProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioProc) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatal("stdio server closed stdout")
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no response within 30 s")
	}
	return ""
}

// TestConformanceStdio sends every protocol case over stdio. Responses may
// come out of order (mcp-go handles requests concurrently), so each case
// is followed by a ping that fences it.
func TestConformanceStdio(t *testing.T) {
	p := launchStdio(t)
	for i, c := range protocolCases {
		t.Run(c.name, func(t *testing.T) {
			fence := fmt.Sprintf(`"fence-%d"`, i)
			p.send(t, c.msg)
			p.send(t, `{"jsonrpc":"2.0","id":`+fence+`,"method":"ping"}`)
			var got []map[string]json.RawMessage
			for {
				line := p.next(t)
				var resp map[string]json.RawMessage
				if err := json.Unmarshal([]byte(line), &resp); err != nil {
					t.Fatalf("not one JSON object per line: %q", line)
				}
				if string(resp["id"]) == fence {
					// The case's own response may still be in flight.
					if !c.noResponse && len(got) == 0 {
						got = append(got, waitLine(t, p))
					}
					break
				}
				got = append(got, resp)
			}
			if c.noResponse {
				if len(got) != 0 {
					t.Fatalf("a notification got a response: %v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d responses: %v", len(got), got)
			}
			checkResponse(t, c, got[0])
		})
	}
}

func waitLine(t *testing.T, p *stdioProc) map[string]json.RawMessage {
	t.Helper()
	var resp map[string]json.RawMessage
	if err := json.Unmarshal([]byte(p.next(t)), &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestArgumentEdgesHTTP(t *testing.T) {
	c, _ := startHTTP(t)
	runArgumentEdges(t, c)
}

func TestArgumentEdgesStdio(t *testing.T) {
	runArgumentEdges(t, startStdio(t))
}

// runArgumentEdges: unicode, nested, array and null arguments (T13.x).
func runArgumentEdges(t *testing.T, c *client.Client) {
	// Unicode in, unicode out.
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{"query": "日本語🚀"}, &cat)
	if cat.Total != 0 {
		t.Fatalf("unicode catalog query matched %d", cat.Total)
	}
	weird := "données/été 🚀 Երևան"
	e := callErr(t, c, "get_schema", map[string]any{"dataset": weird})
	if e.Code != "dataset_not_found" || !strings.Contains(e.Error, weird) {
		t.Fatalf("unicode dataset id: %+v", e)
	}
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "weather/stations", "columns": []string{"station_id", "name"},
		"filters": []map[string]any{{"col": "name", "op": "eq", "value": "Երևան"}}}, &q)
	if q.RowCount != 1 || q.Data[0]["name"] != "Երևան" {
		t.Fatalf("unicode filter: %+v", q)
	}

	// Nested objects and arrays.
	var agg queryResult
	call(t, c, "query_data", map[string]any{
		"dataset":  "sensors/readings",
		"filters":  []map[string]any{{"col": "id", "op": "lte", "value": 1000}, {"col": "sensor", "op": "in", "value": []any{"S-001", "S-002"}}},
		"group_by": []string{"sensor"},
		"aggs":     []map[string]any{{"col": "*", "fn": "count"}, {"col": "value", "fn": "max"}},
		"order_by": []map[string]any{{"col": "sensor", "desc": true}},
	}, &agg)
	if agg.RowCount != 2 || agg.Data[0]["sensor"] != "S-002" {
		t.Fatalf("nested query: %+v", agg)
	}

	// Null for optional arguments means "absent".
	var nulls queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}, "limit": nil,
		"output_format": nil, "filters": []map[string]any{{"col": "id", "op": "lte", "value": 3}}}, &nulls)
	if nulls.RowCount != 3 {
		t.Fatalf("null optionals: %+v", nulls)
	}
	// A null filter value and null where a list belongs: answered, never a protocol error.
	for _, args := range []map[string]any{
		{"dataset": "sensors/readings", "filters": []map[string]any{{"col": "status", "op": "eq", "value": nil}}, "limit": 1},
		{"dataset": "sensors/readings", "columns": []any{nil}},
		{"dataset": nil},
	} {
		res := callRaw(t, c, "query_data", args)
		if res.IsError {
			var te toolErr
			if err := json.Unmarshal([]byte(text(res)), &te); err != nil || te.Code == "" {
				t.Fatalf("%v: unstructured error %s", args, text(res))
			}
		}
	}
	// Wrong shapes get invalid_argument.
	for _, args := range []map[string]any{
		{"dataset": "sensors/readings", "filters": map[string]any{"col": "id"}},
		{"dataset": "sensors/readings", "columns": "id"},
		{"dataset": "sensors/readings", "extra": map[string]any{"a": []any{map[string]any{"b": []any{1, nil, "x"}}}}},
		{"dataset": []any{"sensors/readings"}},
	} {
		if e := callErr(t, c, "query_data", args); e.Code != "invalid_argument" {
			t.Fatalf("%v: %+v", args, e)
		}
	}
}

// TestConcurrentClients runs 50 clients at once over HTTP (half in
// 2025-11-25 sessions, half stateless), each checking its own answers.
func TestConcurrentClients(t *testing.T) {
	p := launchHTTP(t, nil, "--rate-limit", "0", "--max-concurrent", "0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 50
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- oneClient(ctx, p.base, i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func oneClient(ctx context.Context, base string, i int) error {
	tr, err := transport.NewStreamableHTTP(base+"/mcp", transport.WithHTTPTimeout(2*time.Minute))
	if err != nil {
		return err
	}
	var opts []client.ClientOption
	if i%2 == 0 {
		opts = append(opts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	c := client.NewClient(tr, opts...)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("client %d: start: %w", i, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: fmt.Sprintf("c%d", i), Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return fmt.Errorf("client %d: initialize: %w", i, err)
	}
	want := int64(i + 1)
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_data"
	req.Params.Arguments = map[string]any{"dataset": "sensors/readings", "columns": []string{"id"},
		"filters": []map[string]any{{"col": "id", "op": "lte", "value": want}}, "order_by": []map[string]any{{"col": "id", "desc": true}}}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		return fmt.Errorf("client %d: query: %v %v", i, err, res)
	}
	var q queryResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &q); err != nil || q.RowCount != want || q.Data[0]["id"] != float64(want) {
		return fmt.Errorf("client %d: got %d rows (first %v), want %d", i, q.RowCount, q.Data, want)
	}
	req.Params.Name = "get_catalog"
	req.Params.Arguments = map[string]any{}
	if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
		return fmt.Errorf("client %d: catalog: %v", i, err)
	}
	return nil
}

// TestLargeOutputs: big results are capped inline and flagged, or come as
// a file resource that is read whole over HTTP.
func TestLargeOutputs(t *testing.T) {
	c, _ := startHTTP(t)
	res := call(t, c, "query_data", map[string]any{"dataset": "sensors/readings"}, nil)
	var q queryResult
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &q)
	if q.TotalRows != 100_000 || !q.Truncated || q.RowCount > 200 || q.Method != "handle" {
		t.Fatalf("capped result: %+v", q.PageInfo)
	}
	if n := len(text(res)); n > 256<<10 {
		t.Fatalf("inline result of %d bytes exceeds the caps", n)
	}
	var small queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "max_bytes": 1000}, &small)
	if small.RowCount == 0 || small.RowCount >= q.RowCount || !small.Truncated {
		t.Fatalf("max_bytes 1000: %d rows, truncated %v", small.RowCount, small.Truncated)
	}
	var file queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "output_format": "csv"}, &file)
	if file.Method != "file" || file.SizeBytes < 1<<20 {
		t.Fatalf("csv file: %+v", file)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = file.ResourceURI
	rr, err := c.ReadResource(context.Background(), req)
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("read %s: %v", file.ResourceURI, err)
	}
	var data string
	switch x := rr.Contents[0].(type) {
	case mcp.TextResourceContents:
		data = x.Text
	case mcp.BlobResourceContents:
		b, err := base64.StdEncoding.DecodeString(x.Blob)
		if err != nil {
			t.Fatal(err)
		}
		data = string(b)
	}
	if int64(len(data)) != file.SizeBytes || strings.Count(data, "\n") != 100_001 {
		t.Fatalf("artifact: %d bytes (want %d), %d lines", len(data), file.SizeBytes, strings.Count(data, "\n"))
	}
}

// traversalIDs are dataset ids that try to leave the data root.
var traversalIDs = []string{
	"../../../../etc/passwd", "/etc/passwd", "sensors/../../../../etc/passwd", `..\..\..\etc\passwd`,
	"%2e%2e%2f%2e%2e%2fetc%2fpasswd", "file:///etc/passwd", "sensors/readings/../../../../etc/passwd",
	"~/.ssh/id_rsa", "sensors/readings\x00/../../etc/passwd", "//etc/passwd", "./../etc/passwd", "..", "/",
	"evil_link", "evil_dir/passwd",
}

// traversalURIs are resource URIs that try to leave the artifact store or
// the data root.
var traversalURIs = []string{
	"quarry://artifacts/../../etc/passwd", "quarry://artifacts/..%2F..%2Fetc%2Fpasswd", "quarry://artifacts/%2Fetc%2Fpasswd",
	"quarry://artifacts/a_x%2F..%2F..%2F..%2Fetc%2Fpasswd.csv", "quarry://artifacts/..", "quarry://artifacts/",
	"quarry://datasets/..%2F..%2Fetc%2Fpasswd/schema", "quarry://datasets/%2Fetc%2Fpasswd/schema",
	"quarry://datasets/../../etc/passwd/schema", "quarry://datasets/sensors%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd/schema",
	"quarry://datasets/evil_link/schema", "quarry://datasets/%2e%2e%2f%2e%2e%2fetc%2fpasswd/schema",
	"file:///etc/passwd", "quarry://catalog/../../etc/passwd", "quarry://../etc/passwd", "/etc/passwd", "../../etc/passwd",
}

// traversalRoot is a data root with one real dataset and symlinks that
// point outside it.
func traversalRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "ok.csv"), []byte("a,b\n1,x\n2,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"evil_link.csv": "/etc/passwd", "evil_dir": "/etc"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestPathTraversalHTTP(t *testing.T) {
	root := traversalRoot(t)
	c, _ := startHTTP(t, "--data", root)
	runTraversal(t, c)
}

func TestPathTraversalStdio(t *testing.T) {
	root := traversalRoot(t)
	runTraversal(t, startStdio(t, "--data", root))
}

// runTraversal: every dataset-taking tool and resources/read refuse ids
// and URIs outside the root with a structured error, never file contents.
func runTraversal(t *testing.T, c *client.Client) {
	leaked := func(s string) bool { return strings.Contains(s, "root:") || strings.Contains(s, "/bin/") }
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	for _, d := range cat.Datasets {
		if d.ID != "ok" {
			t.Fatalf("catalog lists %q (symlinks out of the root must not be followed)", d.ID)
		}
	}
	for _, tool := range []string{"get_schema", "estimate_query", "query_data"} {
		for _, id := range traversalIDs {
			res := callRaw(t, c, tool, map[string]any{"dataset": id})
			body := text(res)
			var e toolErr
			if !res.IsError || json.Unmarshal([]byte(body), &e) != nil || (e.Code != "dataset_not_found" && e.Code != "invalid_argument") {
				t.Errorf("%s(%q): %s", tool, id, body)
			}
			if leaked(body) {
				t.Fatalf("%s(%q) leaked file contents: %s", tool, id, body)
			}
		}
	}
	for _, uri := range traversalURIs {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(context.Background(), req)
		if err == nil {
			b, _ := json.Marshal(res)
			t.Errorf("resources/read %q succeeded: %.300s", uri, b)
			if leaked(string(b)) {
				t.Fatalf("resources/read %q leaked file contents", uri)
			}
			continue
		}
		if msg := err.Error(); leaked(msg) || msg == "" {
			t.Fatalf("resources/read %q: %v", uri, err)
		}
	}
	// The real dataset still works.
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "ok"}, &q)
	if q.RowCount != 2 {
		t.Fatalf("ok dataset: %+v", q)
	}
}
