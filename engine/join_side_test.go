package engine

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchesOp returns its batches (owned) one by one, then nil; it counts
// the calls of next past its end.
type batchesOp struct {
	bs       []arrow.RecordBatch
	pastEnd  int
	released bool
}

func (o *batchesOp) next() (arrow.RecordBatch, error) {
	if len(o.bs) == 0 {
		o.pastEnd++
		return nil, nil
	}
	b := o.bs[0]
	o.bs = o.bs[1:]
	return b, nil
}

func (o *batchesOp) close() {
	for _, b := range o.bs {
		b.Release()
	}
	o.bs, o.released = nil, true
}

// intBatches is batches of sizes rows of one int64 column k numbered from start.
func intBatches(mem memory.Allocator, start int64, sizes ...int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for _, n := range sizes {
		vs := make([]any, n)
		for i := range vs {
			vs[i] = start
			start++
		}
		out = append(out, makeBatch(mem, []tcol{{"k", arrow.PrimitiveTypes.Int64, vs}}))
	}
	return out
}

// TestChooseSide: the input that ends first when both are read in step is
// built, whichever the estimate named, and both inputs still yield every
// batch, in order; past sideStepRows on both sides or over a quarter of
// the memory budget the estimate stands.
func TestChooseSide(t *testing.T) {
	cases := []struct {
		name          string
		est, other    []int // batch sizes of the estimated build side and of the other input
		limit, live   int64
		wantFlip      bool
		wantEstRead   int // batches of the estimated build side read in step
		wantOtherRead int
	}{
		{name: "estimate right", est: []int{3}, other: []int{5, 5, 5}, wantEstRead: 1, wantOtherRead: 1},
		{name: "estimate wrong", est: []int{4, 4, 4, 4}, other: []int{2, 3}, wantFlip: true, wantEstRead: 2, wantOtherRead: 2},
		{name: "empty other side", est: []int{4, 4}, other: nil, wantFlip: true, wantEstRead: 1},
		{name: "both empty", est: nil, other: nil},
		{name: "equal sizes", est: []int{5}, other: []int{5}, wantEstRead: 1, wantOtherRead: 1},
		{name: "both past the cap", est: []int{sideStepRows, sideStepRows, 1}, other: []int{sideStepRows, sideStepRows}, wantEstRead: 1, wantOtherRead: 1},
		{name: "over a quarter of the budget", est: []int{4, 4, 4}, other: []int{1}, limit: 100, live: 26},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := newAlloc()
			defer mem.AssertSize(t, 0)
			est := &batchesOp{bs: intBatches(mem, 0, c.est...)}
			other := &batchesOp{bs: intBatches(mem, 1000, c.other...)}
			nEst, nOther := len(est.bs), len(other.bs)
			ex := &exec{ctx: context.Background(), budget: &budget{limit: c.limit}}
			ex.budget.live.Store(c.live)
			j := &joinOp{ex: ex, p: &joinPlan{buildLeft: true}, buildIn: est, probeIn: other}
			if err := j.chooseSide(); err != nil {
				t.Fatal(err)
			}
			if flipped := !j.p.buildLeft; flipped != c.wantFlip {
				t.Fatalf("flipped %v, want %v", flipped, c.wantFlip)
			}
			if got := nEst - len(est.bs); got != c.wantEstRead {
				t.Errorf("read %d batches of the estimated build side in step, want %d", got, c.wantEstRead)
			}
			if got := nOther - len(other.bs); got != c.wantOtherRead {
				t.Errorf("read %d batches of the other side in step, want %d", got, c.wantOtherRead)
			}
			wantBuild, wantProbe := c.est, c.other
			buildStart, probeStart := int64(0), int64(1000)
			if c.wantFlip {
				wantBuild, wantProbe, buildStart, probeStart = c.other, c.est, 1000, 0
			}
			for _, side := range []struct {
				in    op
				sizes []int
				start int64
			}{{j.buildIn, wantBuild, buildStart}, {j.probeIn, wantProbe, probeStart}} {
				next := side.start
				for i := 0; ; i++ {
					b, err := side.in.next()
					if err != nil {
						t.Fatal(err)
					}
					if b == nil {
						if i != len(side.sizes) {
							t.Fatalf("%d batches, want %d", i, len(side.sizes))
						}
						break
					}
					if i >= len(side.sizes) || int(b.NumRows()) != side.sizes[i] || values[int64](b.Column(0))[0] != next {
						t.Fatalf("batch %d: %d rows from %d, want sizes %v from %d", i, b.NumRows(), values[int64](b.Column(0))[0], side.sizes, next)
					}
					next += b.NumRows()
					b.Release()
				}
			}
			if est.pastEnd > 1 || other.pastEnd > 1 {
				t.Errorf("an ended input was read again: %d, %d", est.pastEnd, other.pastEnd)
			}
			j.buildIn.close()
			j.probeIn.close()
			if !est.released || !other.released {
				t.Error("an input was not closed")
			}
		})
	}
}
