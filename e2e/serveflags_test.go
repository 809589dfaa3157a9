package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
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
	if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "--parquet-codec") || !strings.Contains(lines[0], "zstd, snappy, none") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}
