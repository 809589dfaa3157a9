package app

import (
	"context"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/materialize"
)

const mib = 1 << 20

// The Go memory limit is the server memory plus the handle bytes in use
// plus the headroom, and off when the server memory is unlimited.
func TestGoMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		handles int64
		want    int64
	}{
		{"no handles kept", Config{ServerMemory: 512 * mib, HandleMemory: 64 * mib, CacheMemory: 256 * mib}, 0, 512*mib + goRuntimeHeadroom},
		{"handles kept", Config{ServerMemory: 512 * mib, HandleMemory: 64 * mib}, 40 * mib, 552*mib + goRuntimeHeadroom},
		{"unlimited handles", Config{ServerMemory: 512 * mib, HandleMemory: -1}, 3 << 30, 512*mib + 3<<30 + goRuntimeHeadroom},
		{"no server cap", Config{ServerMemory: -1, HandleMemory: 64 * mib}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GoMemoryLimit(tc.cfg, tc.handles); got != tc.want {
				t.Fatalf("GoMemoryLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

// ApplyGoMemoryLimit sets the limit of the budgets and keeps it there as
// results are kept behind handles and let go (a change under goLimitStep
// leaves it alone); a GOMEMLIMIT set by the user wins.
func TestApplyGoMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	cfg := Config{Data: t.TempDir(), ArtifactDir: t.TempDir(), ServerMemory: 512 * mib, HandleMemory: 64 * mib,
		Logger: slog.New(slog.DiscardHandler)}
	a, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	base := int64(512*mib + goRuntimeHeadroom)
	if got, src := a.ApplyGoMemoryLimit(func(string) string { return "" }); got != base || src != "budgets" || debug.SetMemoryLimit(-1) != base {
		t.Fatalf("applied %d from %q; runtime limit %d, want %d", got, src, debug.SetMemoryLimit(-1), base)
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	table := func(bytes int) *materialize.Table {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(make([]int64, bytes/8), nil)
		col := b.NewArray()
		defer col.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, -1)
		defer rec.Release()
		return materialize.NewTable(nil, []arrow.RecordBatch{rec})
	}
	big := a.handles.Put(table(8*mib), "")
	if got, want := debug.SetMemoryLimit(-1), base+a.handles.Bytes(); got != want || a.handles.Bytes() < 8*mib {
		t.Fatalf("with %d bytes behind a handle: runtime limit %d, want %d", a.handles.Bytes(), got, want)
	}
	small := a.handles.Put(table(64<<10), "")
	if got, want := debug.SetMemoryLimit(-1), base+a.handles.Bytes(); got == want || got < want-goLimitStep {
		t.Fatalf("after a 64 KiB handle: runtime limit %d, want it left within a step of %d", got, want)
	}
	a.handles.Delete(big)
	a.handles.Delete(small)
	if got := debug.SetMemoryLimit(-1); got != base || a.handles.Bytes() != 0 {
		t.Fatalf("handles deleted (%d bytes left): runtime limit %d, want %d", a.handles.Bytes(), got, base)
	}

	debug.SetMemoryLimit(prev)
	// The runtime read GOMEMLIMIT at start; the app must not override it.
	b, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, src := b.ApplyGoMemoryLimit(func(k string) string { return map[string]string{"GOMEMLIMIT": "1GiB"}[k] }); got != prev || src != "GOMEMLIMIT" {
		t.Fatalf("with GOMEMLIMIT: %d from %q, want %d", got, src, prev)
	}
	id := b.handles.Put(table(8*mib), "")
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Fatalf("with GOMEMLIMIT and a handle kept: runtime limit %d, want %d", got, prev)
	}
	b.handles.Delete(id)
}
