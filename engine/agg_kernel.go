package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// kernelState runs an aggregate registered with its own kernel
// (funcs.AggDecl.Kernel) as one of the engine's aggregate states.
type kernelState struct{ s funcs.AggState }

func (k kernelState) grow(n int) { k.s.Grow(n) }

func (k kernelState) update(col arrow.Array, gids []int32) error { return k.s.Update(col, gids) }

func (k kernelState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return k.s.Build(mem, lo, hi)
}

func (k kernelState) groupBytes() int64 { return k.s.GroupBytes() }

// newKernelState builds the state of e from its registered kernel over an
// input column of type dt.
func newKernelState(d *funcs.AggDecl, e planner.AggExpr, dt arrow.DataType) (aggState, arrow.DataType, error) {
	if !d.Input.Accepts(dt) {
		return nil, nil, qerr.Unsupported(qerr.CodeInvalidAggregate, "%s is not supported on column %q of type %s", e.Fn, e.Col, dt).
			WithHint("%s takes %s", e.Fn, d.Input.Doc)
	}
	s, err := d.Kernel(dt, e.Q)
	if err != nil {
		return nil, nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s(%s): %v", e.Fn, e.Col, err)
	}
	return kernelState{s}, d.Result(dt), nil
}
