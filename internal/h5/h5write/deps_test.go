package h5write_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNotInShippedBinary: the writer is for tests and generators only, so
// neither cmd/quarry nor anything it imports may depend on it.
func TestNotInShippedBinary(t *testing.T) {
	const writer = "github.com/quarrydb/quarry/internal/h5/h5write"
	// go test puts its own GOROOT/bin first on the test's PATH.
	out, err := exec.Command("go", "list", "-deps", "github.com/quarrydb/quarry/cmd/quarry").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/quarrydb/quarry/internal/h5") {
		t.Fatalf("go list -deps cmd/quarry lists no internal/h5: %d packages, not the expected list", len(deps))
	}
	if slices.Contains(deps, writer) {
		t.Fatalf("cmd/quarry depends on %s; only tests and generators may import it", writer)
	}
}
