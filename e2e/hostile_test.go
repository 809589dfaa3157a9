package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// writeRootFile writes name under root.
func writeRootFile(t *testing.T, root, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gzipBytes is b gzipped.
func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// hostile is the data root of hostileRoot, written once for the package's
// tests (no server writes into its data root) and removed with the binary.
var hostile struct {
	once sync.Once
	root string
	rows int64
}

// hostileRoot returns a data root of one good file, one large .csv.gz that
// takes seconds to scan (about 1.5 GiB of rows at a ~40x compression
// ratio, written in under a second as repeated gzip members) and hostile
// files: a gzip bomb, a one-line 20 MiB CSV, a 100,000-column CSV, NUL
// bytes and invalid UTF-8, and the slow file's rows. The root is shared by
// the tests that call it (written by the first).
func hostileRoot(t *testing.T) (string, int64) {
	t.Helper()
	hostile.once.Do(func() {
		root := filepath.Join(filepath.Dir(binary), "hostile")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		rows := writeHostileRoot(t, root)
		hostile.root, hostile.rows = root, rows
	})
	if hostile.root == "" {
		t.Fatal("the hostile data root was not written (see the first test that asked for it)")
	}
	return hostile.root, hostile.rows
}

// writeHostileRoot writes hostileRoot's files into root and returns the slow
// file's rows. Every big file is one small gzip member (or zstd frame)
// repeated, so that writing it costs little in the race-instrumented test.
func writeHostileRoot(t *testing.T, root string) int64 {
	t.Helper()
	write := func(name string, data []byte) { writeRootFile(t, root, name, data) }
	repeat := func(name string, head, body []byte, times int) {
		f, err := os.Create(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, _ = f.Write(gzipBytes(head))
		member := gzipBytes(body)
		for range times {
			if _, err := f.Write(member); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("good.csv", []byte("x,y\n1,a\n2,b\n"))

	// The slow file: rows of a few fixed fields and a random number.
	rng := rand.New(rand.NewPCG(1, 2))
	var body bytes.Buffer
	rowsPerMember := int64(0)
	for body.Len() < 1<<20 {
		fmt.Fprintf(&body, "1,2,3,4,5,6,7,8,9,10,%s,%d\n", strings.Repeat("abcdefghij", 5), rng.IntN(100))
		rowsPerMember++
	}
	const members = 1536
	repeat("slow.csv.gz", []byte("a,b,c,d,e,f,g,h,i,j,s,r\n"), body.Bytes(), members)

	repeat("bomb.csv.gz", []byte("a,b\n"), bytes.Repeat([]byte("0,0\n"), 1<<18), 2048) // 2 GiB, ~1000x
	write("oneline.csv", bytes.Repeat([]byte("y"), 20<<20))
	var wide bytes.Buffer
	for r := range 4 {
		for c := range 100_000 {
			if c > 0 {
				wide.WriteByte(',')
			}
			if r == 0 {
				wide.WriteString("c" + strconv.Itoa(c))
			} else {
				wide.WriteString(strconv.Itoa(c % 10))
			}
		}
		wide.WriteByte('\n')
	}
	write("wide.csv", wide.Bytes())
	write("nul.csv", []byte("a,b\n1,\x00\n"))
	write("latin1.csv", []byte("a,b\n1,caf\xe9\n"))

	// Typed and JSON inputs: a Parquet footer claiming 2 GiB, a footer of
	// garbage, a zstd bomb of JSON lines (one frame repeated), broken JSON.
	le := func(n uint32) string { return string([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}) }
	write("claims.parquet", []byte("PAR1"+strings.Repeat("x", 64)+le(1<<31)+"PAR1"))
	write("garbage.parquet", []byte("PAR1"+strings.Repeat("\xff", 64)+le(64)+"PAR1"))
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	frame := zw.EncodeAll(bytes.Repeat([]byte("{\"a\": 0}\n"), 1<<20/10), nil)
	write("bomb.jsonl.zst", bytes.Repeat(frame, 2048)) // 2 GiB of JSON lines
	write("broken.json", []byte(`[{"a": 1}, {"a": `))
	return members * rowsPerMember
}

// peakRSS is the process's peak resident set (VmHWM) in bytes, or 0 when
// /proc does not tell.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

type scanCatalog struct {
	catalogResult
	Scanning     bool `json:"scanning"`
	PendingFiles int  `json:"pending_files"`
	Diagnostics  []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"diagnostics"`
}

// TestHostileDataRootHTTP: serve opens its listener at once while a slow
// catalog scan runs (/healthz, tools/list and get_catalog answer, the
// catalog reports the scan, /readyz is 503 until it ends), a lookup of
// the file being scanned waits for it, hostile files become diagnostics,
// and the server's peak memory stays bounded.
func TestHostileDataRootHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("scans gigabytes")
	}
	root, slowRows := hostileRoot(t)
	start := time.Now()
	p := launchHTTP(t, nil, "--data", root, "--cache-memory", "0")
	t.Logf("/healthz answered after %v", time.Since(start))
	c := httpClient(t, p.base, mcp.LATEST_PROTOCOL_VERSION, []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(120 * time.Second)})
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list during the scan: %v", err)
	}
	if code, _ := httpGet(p.base + "/readyz"); code != 503 {
		t.Errorf("/readyz during the scan = %d, want 503", code)
	}
	var cat scanCatalog
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if code, _ := httpGet(p.base + "/readyz"); code == 503 && (!cat.Scanning || cat.PendingFiles < 1) {
		t.Fatalf("get_catalog while /readyz says the scan runs: scanning=%v pending=%d", cat.Scanning, cat.PendingFiles)
	}
	if !cat.Scanning || cat.PendingFiles < 1 {
		t.Fatalf("get_catalog during the scan: scanning=%v pending=%d (the slow file scanned in %v: too fast for this test?)",
			cat.Scanning, cat.PendingFiles, time.Since(start))
	}
	t.Logf("during the scan (%v): %d datasets, %d pending", time.Since(start), cat.Total, cat.PendingFiles)
	// The good file is queryable during the scan.
	var sch schemaResult
	call(t, c, "get_schema", map[string]any{"dataset": "good"}, &sch)
	if len(sch.Shape) != 2 || sch.Shape[0] != 2 {
		t.Errorf("good shape %v", sch.Shape)
	}
	// A lookup of the file being scanned waits for it.
	call(t, c, "get_schema", map[string]any{"dataset": "slow"}, &sch)
	if len(sch.Shape) != 2 || sch.Shape[0] != slowRows || sch.Shape[1] != 12 {
		t.Errorf("slow shape %v, want [%d 12]", sch.Shape, slowRows)
	}
	t.Logf("slow file scanned after %v", time.Since(start))

	deadline := time.Now().Add(60 * time.Second)
	for {
		cat = scanCatalog{} // omitempty: scanning disappears when false
		call(t, c, "get_catalog", map[string]any{}, &cat)
		if !cat.Scanning || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if cat.Scanning {
		t.Fatal("the scan never ended")
	}
	if code, _ := httpGet(p.base + "/readyz"); code != 200 {
		t.Errorf("/readyz after the scan = %d, want 200", code)
	}
	var ids []string
	for _, d := range cat.Datasets {
		ids = append(ids, d.ID)
	}
	if strings.Join(ids, ",") != "good,slow" {
		t.Errorf("datasets %v, want [good slow]", ids)
	}
	want := map[string]string{
		"bomb.csv.gz": "decompresses more than 250 times",
		"oneline.csv": "longer than 16 MiB",
		"wide.csv":    "more than the limit of 16384",
		"nul.csv":     "NUL",
		"latin1.csv":  "UTF-8",

		"claims.parquet":  "more than the file holds",
		"garbage.parquet": "footer",
		"bomb.jsonl.zst":  "decompresses more than 250 times",
		"broken.json":     "ends inside record 2",
	}
	for _, d := range cat.Diagnostics {
		if w, ok := want[d.Path]; ok {
			if !strings.Contains(d.Reason, w) {
				t.Errorf("diagnostic of %s: %q, want it to mention %q", d.Path, d.Reason, w)
			}
			delete(want, d.Path)
		}
	}
	if len(want) > 0 {
		t.Errorf("no diagnostics for %v; got %+v", want, cat.Diagnostics)
	}
	if e := callErr(t, c, "get_schema", map[string]any{"dataset": "bomb"}); e.Code != "dataset_not_found" {
		t.Errorf("bomb: %+v", e)
	}
	if rss := peakRSS(p.cmd.Process.Pid); rss > 0 {
		t.Logf("server peak RSS %d MiB", rss>>20)
		if rss > 1<<30 {
			t.Errorf("server peak RSS %d MiB, want < 1 GiB", rss>>20)
		}
	}
}

// TestHostileDataRootStdio: over stdio the server answers initialize and
// tools/list at once while the slow scan runs.
func TestHostileDataRootStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("scans gigabytes")
	}
	root, _ := hostileRoot(t)
	start := time.Now()
	c := startStdio(t, "--data", root, "--cache-memory", "0")
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	var cat scanCatalog
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if !cat.Scanning {
		t.Fatalf("get_catalog after %v: not scanning (scan too fast for this test?)", time.Since(start))
	}
	t.Logf("initialize, tools/list and get_catalog answered after %v during the scan", time.Since(start))
}

// TestServeInputLimitFlags: each input-limit flag of serve takes effect:
// lowered, it turns a file the default accepts into a diagnostic.
func TestServeInputLimitFlags(t *testing.T) {
	root := t.TempDir()
	write := func(name string, data []byte) { writeRootFile(t, root, name, data) }
	write("three.csv", []byte("a,b,c\n1,2,3\n"))
	write("longline.csv", append([]byte("a,b\n1,"), append(bytes.Repeat([]byte("z"), 3<<20), '\n')...)) // longer than a chunk
	var rows bytes.Buffer
	rng := rand.New(rand.NewPCG(3, 4))
	for rows.Len() < 1<<20 {
		fmt.Fprintf(&rows, "1,2,3,4,5,6,7,8,9,10,%s,%d\n", strings.Repeat("abcdefghij", 5), rng.IntN(100))
	}
	// ~40x compressible: 40 gzip members of 1 MiB, over 32 MiB, so the ratio is checked.
	ratio := gzipBytes([]byte("a,b,c,d,e,f,g,h,i,j,s,r\n"))
	member := gzipBytes(rows.Bytes())
	for range 40 {
		ratio = append(ratio, member...)
	}
	write("ratio.csv.gz", ratio)
	write("size.csv.gz", gzipBytes(append([]byte("a,b\n"), bytes.Repeat([]byte("1,2\n"), 1<<20)...)))

	// diagnostics serves root with the extra flags and returns the
	// catalog's diagnostic reason of each file once the scan has ended.
	diagnostics := func(t *testing.T, extra ...string) map[string]string {
		t.Helper()
		c := startStdio(t, append([]string{"--data", root, "--cache-memory", "0"}, extra...)...)
		defer c.Close()
		var cat scanCatalog
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			cat = scanCatalog{}
			call(t, c, "get_catalog", map[string]any{}, &cat)
			if !cat.Scanning || time.Now().After(deadline) {
				break
			}
		}
		reasons := map[string]string{}
		for _, d := range cat.Diagnostics {
			reasons[d.Path] = d.Reason
		}
		return reasons
	}
	tests := []struct {
		flag, value, file, reason string
	}{
		{"--max-csv-columns", "2", "three.csv", "more than the limit of 2"},
		{"--max-csv-record-bytes", "1048576", "longline.csv", "longer than 1 MiB"},
		{"--max-gz-bytes", "1048576", "size.csv.gz", "decompresses to more than 1 MiB"},
		{"--max-gz-ratio", "10", "ratio.csv.gz", "more than 10 times"},
	}
	// One server with the defaults accepts every file; one per flag lowered.
	defaults := diagnostics(t)
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			for _, lowered := range []bool{false, true} {
				reason := defaults[tc.file]
				if lowered {
					reason = diagnostics(t, tc.flag, tc.value)[tc.file]
				}
				if lowered != strings.Contains(reason, tc.reason) {
					t.Errorf("%s %s (lowered %v): diagnostic of %s = %q, want it to mention %q: %v", tc.flag, tc.value, lowered, tc.file, reason, tc.reason, lowered)
				}
			}
		})
	}
}
