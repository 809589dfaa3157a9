package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// TestServeRejectsBadParquetCodec: an unknown --parquet-codec stops serve
// before it serves anything, with one line naming the flag and the
// supported codecs.
func TestServeRejectsBadParquetCodec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--parquet-codec", "lzo")
	cmd.Env = env()
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "--parquet-codec") || !strings.Contains(lines[0], "snappy, zstd, none") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// serveFlagChecks observe the effect of one `quarry serve` flag each: the
// server is started with the flag set away from its default and the test
// sees the difference through MCP, HTTP, the logs or the files written.
var serveFlagChecks = map[string]func(t *testing.T){
	"data":           checkFlagData,
	"addr":           checkFlagHTTPListener,
	"transport":      checkFlagHTTPListener,
	"log-format":     checkFlagLogFormat,
	"log-level":      checkFlagLogLevel,
	"parquet-codec":  checkFlagParquetCodec,
	"artifact-quota": checkFlagArtifactQuota,
	"artifact-ttl":   checkFlagArtifactTTL,
	"cache-memory":   checkFlagCacheMemory,
	"confirm-bytes":  checkFlagConfirmBytes,
	"handle-memory":  checkFlagHandleMemory,
	"max-cell-chars": checkFlagMaxCellChars,
	"max-cells":      checkFlagMaxCells,
	"query-memory":   checkFlagQueryMemory,
	"spill-bytes":    checkFlagSpillBytes,
	"server-memory":  checkFlagServerMemory,
	"flightsql-addr": checkFlagFlightSQLAddr,
}

// serveFlagsTestedElsewhere names, for the other flags, the test that sets
// the flag and observes its effect (TestServeFlags checks that it still
// passes the flag).
var serveFlagsTestedElsewhere = map[string]string{
	"max-csv-columns":      "TestServeInputLimitFlags",
	"max-csv-record-bytes": "TestServeInputLimitFlags",
	"max-gz-bytes":         "TestServeInputLimitFlags",
	"max-gz-ratio":         "TestServeInputLimitFlags",
	"allow-origin":         "TestHTTPOrigin",
	"otel-endpoint":        "TestServeOtelEndpoint",
	"auth-token":           "TestHTTPAuth",
	"auth-token-file":      "TestHTTPAuth",
	"max-body":             "TestHTTPLimits",
	"max-concurrent":       "TestHTTPLimits",
	"max-streams":          "TestHTTPStreamCap",
	"max-sessions":         "TestHTTPSessionCap",
	"rate-burst":           "TestHTTPLimits",
	"rate-limit":           "TestHTTPLimits",
	"shutdown-timeout":     "TestHTTPShutdownTimeout",
	"artifact-dir":         "TestDeliveryMillionRows",
	"max-bytes":            "TestDeliveryMillionRows",
	"max-rows":             "TestDeliveryMillionRows",
	"page-rows":            "TestDeliveryMillionRows",
	"spill-rows":           "TestDeliveryMillionRows",
	"enable-arrow-ipc":     "TestDeliveryCapsAndFiles",
	"expose-file-paths":    "TestDeliveryCapsAndFiles",
	"max-handles":          "TestDeliveryCapsAndFiles",
	"handle-ttl":           "TestHandleExpired",
	"confirm-rows":         "TestNeedsConfirmationStdio",
	"query-timeout":        "TestCancelTimeoutAndConcurrencyStdio",
	"sql":                  "TestSQLInjectionCorpus",
	"console":              "TestConsoleOff",
	"conformance-fixtures": "TestConformanceSuite",
	"export-dir":           "TestDesktopSession",
	"max-message-bytes":    "TestInteropBigArtifact",
	"config":               "TestServeConfigEnvAndFile",
	"print-config":         "TestServeConfigEnvAndFile",
	"tools":                "TestServeToolsSelection",
	"redis-url":            "walkReplicas", // TestReplicasShareHandles and TestReplicasShareArtifactStore
	"shared-key-file":      "walkReplicas",
	// The object store and Flight SQL TLS.
	"artifact-store":          "TestReplicasShareArtifactStore",
	"artifact-store-endpoint": "TestReplicasShareArtifactStore",
	"artifact-store-region":   "TestReplicasShareArtifactStore",
	"flightsql-tls-cert":      "TestFlightSQLTLS",
	"flightsql-tls-key":       "TestFlightSQLTLS",
	"write-timeout":           "TestStdioClientStopsReading",
}

// TestServeFlags: every flag `quarry serve --help` lists has a test that
// observes its effect, here or elsewhere; a new flag fails this test until
// it gets one.
func TestServeFlags(t *testing.T) {
	flags := serveFlagNames(t)
	for name := range serveFlagChecks {
		if !slices.Contains(flags, name) {
			t.Errorf("serveFlagChecks has %q, which serve no longer has", name)
		}
	}
	for name, test := range serveFlagsTestedElsewhere {
		if !slices.Contains(flags, name) {
			t.Errorf("serveFlagsTestedElsewhere has %q, which serve no longer has", name)
		}
		if !testPassesFlag(t, test, name) {
			t.Errorf("--%s: %s does not exist or does not pass %q", name, test, "--"+name)
		}
	}
	for _, name := range flags {
		check, ok := serveFlagChecks[name]
		if !ok {
			if _, ok := serveFlagsTestedElsewhere[name]; !ok {
				t.Errorf("serve flag --%s has no test observing its effect", name)
			}
			continue
		}
		t.Run(name, check)
	}
}

// serveFlagNames lists the flags of `quarry serve --help`.
func serveFlagNames(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--help")
	cmd.Env = env()
	out, _ := cmd.CombinedOutput() // --help exits non-zero with the flag package
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	if len(names) < 20 {
		t.Fatalf("serve --help lists %d flags:\n%s", len(names), out)
	}
	return names
}

// testPassesFlag reports whether the e2e test function name exists and its
// body passes "--flag".
func testPassesFlag(t *testing.T, name, flag string) bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name && fn.Body != nil {
				body := src[fset.Position(fn.Body.Pos()).Offset:fset.Position(fn.Body.End()).Offset]
				return bytes.Contains(body, []byte(`"--`+flag+`"`))
			}
		}
	}
	return false
}

// flagData is a data root holding big.csv of rows rows (writeBigCSV).
func flagData(t *testing.T, rows int) string {
	t.Helper()
	dir := t.TempDir()
	writeBigCSV(t, filepath.Join(dir, "big.csv"), rows, 0)
	return dir
}

func checkFlagData(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 10))
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if cat.Total != 1 || cat.Datasets[0].ID != "big" || cat.Datasets[0].RowCount != 10 {
		t.Fatalf("catalog of --data: %+v", cat)
	}
}

// checkFlagHTTPListener: --transport http --addr A serves MCP over HTTP at A.
func checkFlagHTTPListener(t *testing.T) {
	p := launchHTTP(t, nil) // --transport http --addr <free loopback port>
	c := connectHTTP(t, p.base, nil, false)
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if cat.Total == 0 {
		t.Fatal("no datasets over HTTP")
	}
}

func checkFlagLogFormat(t *testing.T) {
	for _, f := range []string{"json", "text"} {
		s := startSession(t, nil, "--log-format", f)
		callRaw(t, s.c, "get_catalog", map[string]any{})
		lines := waitLogLines(t, s, "tool call")
		for _, l := range lines {
			isJSON := json.Valid([]byte(l))
			if isJSON != (f == "json") || (f == "text" && !strings.HasPrefix(l, "time=")) {
				t.Fatalf("--log-format %s: line %q", f, l)
			}
		}
	}
}

// waitLogLines waits until the session's stderr has a line containing
// want and returns its non-empty lines.
func waitLogLines(t *testing.T, s *session, want string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q:\n%s", want, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var lines []string
	for l := range strings.SplitSeq(s.stderr.String(), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func checkFlagLogLevel(t *testing.T) {
	// info (the default) logs every tool call; warn does not.
	info := startSession(t, nil, "--log-level", "info")
	callRaw(t, info.c, "get_catalog", map[string]any{})
	waitLogLines(t, info, `"tool call"`)
	warn := startSession(t, nil, "--log-level", "warn")
	callRaw(t, warn.c, "get_catalog", map[string]any{})
	callErr(t, warn.c, "get_schema", map[string]any{"dataset": "no-such-dataset"})
	time.Sleep(200 * time.Millisecond)
	if s := warn.stderr.String(); strings.Contains(s, `"level":"INFO"`) {
		t.Fatalf("--log-level warn logged info lines:\n%s", s)
	}
}

// checkFlagParquetCodec: Parquet files (written directly, or the spill
// file of a big result handed out as the file) use the codec.
func checkFlagParquetCodec(t *testing.T) {
	dir := flagData(t, 20_000)
	sizes := map[string]int64{}
	for _, tc := range []struct {
		codec string
		want  format.CompressionCodec
	}{{"none", format.Uncompressed}, {"snappy", format.Snappy}, {"zstd", format.Zstd}} {
		for _, spill := range []string{"1000", "-1"} {
			c := startStdio(t, "--data", dir, "--parquet-codec", tc.codec, "--spill-rows", spill)
			p := callPage(t, c, "query_data", map[string]any{"dataset": "big", "output_format": "parquet"})
			b := readArtifact(t, c, p.ResourceURI, "application/vnd.apache.parquet")
			f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if f.NumRows() != 20_000 {
				t.Fatalf("%d rows", f.NumRows())
			}
			for _, rg := range f.Metadata().RowGroups {
				for _, cc := range rg.Columns {
					if cc.MetaData.Codec != tc.want {
						t.Fatalf("--parquet-codec %s (spill rows %s): column %v is %v", tc.codec, spill, cc.MetaData.PathInSchema, cc.MetaData.Codec)
					}
				}
			}
			sizes[tc.codec+"/"+spill] = int64(len(b))
		}
	}
	if sizes["none/1000"] <= sizes["zstd/1000"] || sizes["none/-1"] <= sizes["zstd/-1"] {
		t.Fatalf("uncompressed files are not bigger: %v", sizes)
	}
}

func checkFlagArtifactQuota(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 5000), "--artifact-dir", t.TempDir(), "--artifact-quota", "1000")
	e := callErr(t, c, "query_data", map[string]any{"dataset": "big", "output_format": "csv"})
	if e.Code != "resource_exhausted" {
		t.Fatalf("a file over --artifact-quota: %+v", e)
	}
}

func checkFlagArtifactTTL(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 1000), "--artifact-dir", t.TempDir(), "--artifact-ttl", "1s")
	p := callPage(t, c, "query_data", map[string]any{"dataset": "big", "output_format": "csv"})
	if p.ResourceURI == "" {
		t.Fatalf("no file: %s", p.Raw)
	}
	readArtifact(t, c, p.ResourceURI, "text/csv")
	time.Sleep(1200 * time.Millisecond)
	if _, err := readResource(t, c, p.ResourceURI); err == nil {
		t.Fatal("the artifact outlived --artifact-ttl 1s")
	}
}

// checkFlagCacheMemory: with the column cache (the default) a file
// rewritten to the same size and mtime is still answered from memory; with
// --cache-memory 0 it is read again.
func checkFlagCacheMemory(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "north"}, {[]string{"--cache-memory", "0"}, "NORTH"}} {
		dir := flagData(t, 100)
		path := filepath.Join(dir, "big.csv")
		c := startStdio(t, append([]string{"--data", dir}, tc.args...)...)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// In place (same inode), same size, same mtime.
		if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte("north"), []byte("NORTH")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
		var q queryResult
		call(t, c, "query_data", map[string]any{"dataset": "big", "columns": []string{"region"}, "limit": 1}, &q)
		if len(q.Data) != 1 || q.Data[0]["region"] != tc.want {
			t.Fatalf("serve %v: got %v, want region %q", tc.args, q.Data, tc.want)
		}
	}
}

func checkFlagConfirmBytes(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 50), "--confirm-bytes", "100")
	var q struct {
		Status string `json:"status"`
	}
	call(t, c, "query_data", map[string]any{"dataset": "big"}, &q)
	if q.Status != "needs_confirmation" {
		t.Fatalf("50 rows over --confirm-bytes 100: status %q", q.Status)
	}
}

func checkFlagHandleMemory(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 1000), "--handle-memory", "1")
	h1 := callPage(t, c, "query_data", map[string]any{"dataset": "big"})
	h2 := callPage(t, c, "query_data", map[string]any{"dataset": "big"})
	if h1.ResultHandle == "" || h2.ResultHandle == "" {
		t.Fatalf("want two handles: %s %s", h1.Method, h2.Method)
	}
	e := callErr(t, c, "query_next_page", map[string]any{"result_handle": h1.ResultHandle, "page_token": h1.PageInfo.PageToken})
	if e.Code != "handle_expired" {
		t.Fatalf("the first handle over --handle-memory 1: %+v", e)
	}
	callPage(t, c, "query_next_page", map[string]any{"result_handle": h2.ResultHandle, "page_token": h2.PageInfo.PageToken})
}

func checkFlagMaxCellChars(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 20_000), "--max-cell-chars", "3")
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "big", "columns": []string{"note"},
		"filters": []map[string]any{{"col": "id", "op": "eq", "value": 12345}}}, &q)
	s, _ := q.Data[0]["note"].(string)
	if len(q.Data) != 1 || !strings.HasPrefix(s, "n12…") || !strings.Contains(strings.Join(q.Warnings, "\n"), "longer than 3 characters") {
		t.Fatalf("--max-cell-chars 3: %q %q", s, q.Warnings)
	}
}

func checkFlagMaxCells(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 100), "--max-cells", "40")
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "big"}, &q)
	if q.RowCount != 10 || !q.Truncated { // 40 cells of 4 columns
		t.Fatalf("--max-cells 40: %d rows (truncated %v)", q.RowCount, q.Truncated)
	}
}

func checkFlagQueryMemory(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 20_000), "--query-memory", "65536")
	e := callErr(t, c, "aggregate", map[string]any{"dataset": "big", "group_by": []string{"note"},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}}})
	if e.Code != "resource_exhausted" {
		t.Fatalf("20,000 groups in 64 KiB: %+v", e)
	}
}

func checkFlagSpillBytes(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		spill bool
	}{{nil, false}, {[]string{"--spill-bytes", "1000"}, true}} {
		arts := t.TempDir()
		c := startStdio(t, append([]string{"--data", flagData(t, 5000), "--artifact-dir", arts, "--spill-rows", "-1"}, tc.args...)...)
		p := callPage(t, c, "query_data", map[string]any{"dataset": "big"})
		if p.Method != "handle" || (len(spillFiles(t, arts)) == 1) != tc.spill {
			t.Fatalf("serve %v: %s, spill files %v", tc.args, p.Method, spillFiles(t, arts))
		}
	}
}
