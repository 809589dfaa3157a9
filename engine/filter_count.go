package engine

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/planner"
)

// countOp answers an Aggregate without group keys whose every aggregate is
// count(*) or count(col) (the result is one row of int64 counts, as the
// hash aggregate gives) without copying any row: over a filter it counts
// the set entries of each batch's mask (ANDed with the column's validity
// for count(col)) instead of gathering the passing rows, and a lone
// is_null / is_not_null filter under count(*) is answered from the null
// counts alone. Over any other input it adds up batch lengths and null
// counts.
type countOp struct {
	ex   *exec
	in   op
	out  *arrow.Schema
	cols []int // per aggregate: the counted column, -1 for count(*)
	done bool
}

// newCountOp returns the count operator for n, or nil when n needs the
// hash aggregate. n must already be validated (newAggOp).
func newCountOp(ex *exec, n *planner.Aggregate) *countOp {
	if len(n.GroupIdx) > 0 || len(n.Aggs) == 0 {
		return nil
	}
	in := n.Input.Schema()
	c := &countOp{ex: ex, out: n.Out}
	for j, e := range n.Aggs {
		if e.Fn != planner.AggCount || len(e.Filter) > 0 || !arrow.TypeEqual(n.Out.Field(j).Type, arrow.PrimitiveTypes.Int64) {
			return nil
		}
		col := -1
		if e.Col != "*" {
			// Null-typed columns have no validity bitmap: leave them to
			// the hash aggregate.
			if e.Index < 0 || e.Index >= in.NumFields() || in.Field(e.Index).Type.ID() == arrow.NULL {
				return nil
			}
			col = e.Index
		}
		c.cols = append(c.cols, col)
	}
	return c
}

func (c *countOp) next() (out arrow.RecordBatch, err error) {
	if err := c.ex.ctx.Err(); err != nil {
		return nil, err
	}
	if c.done {
		return nil, nil
	}
	counts := make([]int64, len(c.cols))
	f := asFilter(c.in)
	for {
		if err := c.ex.ctx.Err(); err != nil {
			return nil, err
		}
		var b arrow.RecordBatch
		if f != nil {
			b, err = f.in.next()
		} else {
			b, err = c.in.next()
		}
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		if f != nil {
			c.addFiltered(f, b, counts)
		} else {
			c.addAll(b, counts)
		}
		b.Release()
	}
	c.close()
	defer catchBudget(&err)
	cols := make([]arrow.Array, 0, len(counts))
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for j := range counts {
		cols = append(cols, buildFixed(c.ex.alloc, arrow.PrimitiveTypes.Int64, counts[j:j+1], nil))
	}
	return array.NewRecordBatch(c.out, cols, 1), nil
}

// addAll counts every row of b.
func (c *countOp) addAll(b arrow.RecordBatch, counts []int64) {
	rows := b.NumRows()
	for j, k := range c.cols {
		if k < 0 {
			counts[j] += rows
		} else {
			counts[j] += rows - int64(b.Column(k).NullN())
		}
	}
}

// addFiltered counts the rows of b that pass f's predicates.
func (c *countOp) addFiltered(f *filterOp, b arrow.RecordBatch, counts []int64) {
	rows := b.NumRows()
	if len(f.preds) == 1 && f.preds[0].nullTest != nullNone && c.starOnly() {
		col := b.Column(f.preds[0].nullCol)
		nulls := int64(col.NullN())
		if col.DataType().ID() == arrow.NULL {
			nulls = rows
		}
		if f.preds[0].nullTest == nullIsNot {
			nulls = rows - nulls
		}
		for j := range counts {
			counts[j] += nulls
		}
		return
	}
	mask := f.evalMask(b)
	pass := int64(-1)
	for j, k := range c.cols {
		var v validity
		if k >= 0 {
			v = validityOf(b.Column(f.outCol(k)))
		}
		if v.bits == nil {
			if pass < 0 {
				pass = int64(countTrue(mask))
			}
			counts[j] += pass
			continue
		}
		counts[j] += int64(countTrueValid(mask, v.bits, v.off))
	}
}

func (c *countOp) starOnly() bool {
	for _, k := range c.cols {
		if k >= 0 {
			return false
		}
	}
	return true
}

func (c *countOp) close() {
	if !c.done {
		c.done = true
		c.in.close()
	}
}

// countTrueValid returns the number of rows i with mask[i] set and bit
// off+i of the validity bitmap bm set.
func countTrueValid(mask []bool, bm []byte, off int) int {
	m := maskBytes(mask)
	n := 0
	i := 0
	for ; i+8 <= len(m); i += 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(m[i:]) & spread8[bitmapByte(bm, off+i)])
	}
	for ; i < len(m); i++ {
		n += int(m[i] & getBit(bm, off+i))
	}
	return n
}
