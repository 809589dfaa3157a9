package app

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
)

// The Go memory limit follows the query and handle budgets, is off when
// either is unlimited, and leaves a GOMEMLIMIT set by the user alone.
func TestGoMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name string
		cfg  Config
		want int64
	}{
		{"budgets", Config{ServerMemory: 512 * mib, HandleMemory: 64 * mib, CacheMemory: 256 * mib}, 512*mib + 64*mib + goRuntimeHeadroom},
		{"default handle memory", Config{ServerMemory: 512 * mib}, 512*mib + DefaultHandleMemory + goRuntimeHeadroom},
		{"no server cap", Config{ServerMemory: -1, HandleMemory: 64 * mib}, 0},
		{"unlimited handles", Config{ServerMemory: 512 * mib, HandleMemory: -1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GoMemoryLimit(tc.cfg); got != tc.want {
				t.Fatalf("GoMemoryLimit = %d, want %d", got, tc.want)
			}
		})
	}
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := Config{ServerMemory: 512 * mib, HandleMemory: 64 * mib}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got, src := ApplyGoMemoryLimit(cfg, getenv, log); got != GoMemoryLimit(cfg) || src != "budgets" || debug.SetMemoryLimit(-1) != got {
		t.Fatalf("applied %d from %q; runtime limit %d", got, src, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(prev)
	env["GOMEMLIMIT"] = "1GiB" // the runtime read it at start; the app must not override it
	if got, src := ApplyGoMemoryLimit(cfg, getenv, log); got != prev || src != "GOMEMLIMIT" || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("with GOMEMLIMIT: %d from %q; runtime limit %d, want %d", got, src, debug.SetMemoryLimit(-1), prev)
	}
}
