package engine

import "github.com/apache/arrow-go/v18/arrow"

// Exact window sums and averages (agg_decimal.go): a sliding frame adds
// and takes back values, so float64 sums there are neither exact nor
// stable (a running total of 0.1s prints 0.30000000000000004, and taking
// 1e16 back out of a frame loses what was added beside it). While every
// value of the column looks decimal, slideSum adds integers at one scale
// instead: adding and taking back are exact, and each frame's result is
// the double nearest to its exact decimal sum (or average).

// decColumn returns vals (valid: nil, or false for nulls) as integers at
// one scale d, the fewest digits every value needs (n·10^-d is the decimal
// the value looks like: decScaled), when every value looks decimal and the
// magnitudes add up to less than 2^63 (so no frame's sum leaves int64);
// ok false otherwise.
func decColumn(vals []float64, valid []bool) (ns []int64, d int, ok bool) {
	for i, x := range vals {
		if valid != nil && !valid[i] {
			continue
		}
		for {
			if _, ok := decScaled(x, decPow10[d]); ok {
				break
			}
			if d++; d > maxDecScale {
				return nil, 0, false
			}
		}
	}
	ns = make([]int64, len(vals))
	p := decPow10[d]
	var total uint64
	for i, x := range vals {
		if valid != nil && !valid[i] {
			continue
		}
		n, ok := decScaled(x, p)
		if total += uint64(decAbs(n)); !ok || total >= 1<<63 {
			return nil, 0, false
		}
		ns[i] = n
	}
	return ns, d, true
}

// decWindowInput makes col (a sum's or avg's input, loaded as float64)
// exact when it can: float32 values become the decimals they were rounded
// from (decOf32), then, if decColumn accepts the column, col holds its
// integers and the scale is returned; -1 leaves col a float column. The
// integers are reserved before decColumn allocates them.
func (w *windowOp) decWindowInput(col *numCol, dt arrow.DataType) (int, error) {
	if dt.ID() == arrow.FLOAT32 {
		hint := 0
		for i, x := range col.floats {
			col.floats[i], hint = decOf32(float32(x), hint)
		}
	}
	if err := w.acct.reserve(int64(8 * len(col.floats))); err != nil {
		return -1, err
	}
	ns, d, ok := decColumn(col.floats, col.valid)
	if !ok {
		w.acct.charge(-int64(8 * len(col.floats)))
		return -1, nil
	}
	col.ints, col.floats = ns, nil
	return d, nil
}
