package e2e

import (
	"testing"
	"time"
)

// checkFlagServerMemory: with a server-wide query memory of one byte no
// query can start; after the short wait it fails with resource_exhausted
// naming the server scope (not the query's own limit).
func checkFlagServerMemory(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 100), "--server-memory", "1")
	start := time.Now()
	e := callErr(t, c, "query_data", map[string]any{"dataset": "big", "limit": 5})
	if e.Code != "resource_exhausted" || e.Diagnostics["scope"] != "server" || e.Hint == "" {
		t.Fatalf("query under a 1-byte server budget: %+v", e)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the refusal took %v", el)
	}
}
