package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInteropBigArtifact runs interop/mcp-sdk/bigartifact.mjs: a 50 MB
// CSV result read through the official TypeScript SDK client with its
// default limits — in ranges over stdio (the whole-file read is refused
// and the session survives; messages stay under --max-message-bytes) and
// by signed download URL over HTTP, whole and by Range. All three copies
// must be the artifact on disk, byte for byte.
func TestInteropBigArtifact(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 52 MB result three times")
	}
	node, dir := nodePackage(t, "mcp-sdk", "node_modules/@modelcontextprotocol/sdk/package.json")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	data := t.TempDir()
	f, err := os.Create(filepath.Join(data, "big.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,label,payload")
	for i := range 440_000 { // about 52 MB
		fmt.Fprintf(w, "%d,label %d,%s\n", i, i%97, strings.Repeat(string(rune('a'+i%26)), 100))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "bigartifact.mjs"), "--bin", binary, "--data", data, "--dataset", "big",
		"--", "--max-message-bytes", "4194304")
	cmd.Env = env()
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "bigartifact: OK") {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("bigartifact.mjs: %v\n%s\n%s", err, out, stderr)
	}
	var res struct {
		Stdio struct {
			Size   int64  `json:"size"`
			SHA256 string `json:"sha256"`
			URI    string `json:"uri"`
		} `json:"stdio"`
		HTTP struct {
			Size         int64  `json:"size"`
			SHA256       string `json:"sha256"`
			RangedSHA256 string `json:"ranged_sha256"`
		} `json:"http"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(string(out), "\n", 2)[0]), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	file := filepath.Join(cacheHome, "quarry", "artifacts", strings.TrimPrefix(res.Stdio.URI, "quarry://artifacts/"))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	want := hex.EncodeToString(sum[:])
	if res.Stdio.Size < 50e6 || res.Stdio.SHA256 != want || res.HTTP.SHA256 != want || res.HTTP.RangedSHA256 != want {
		t.Fatalf("file %d bytes %s; stdio %+v; http %+v", len(b), want, res.Stdio, res.HTTP)
	}
	t.Logf("%d bytes read in ranges over stdio and downloaded over HTTP in %v", res.Stdio.Size, time.Since(start).Round(time.Millisecond))
}
