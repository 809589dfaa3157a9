package engine

import "unsafe"

// The merge of median and quantile (agg_merge.go), for aggregates without
// group keys: the parallel path then folds the input on every core (each
// worker collecting its own values) and the partial collectors' values are
// moved into the operator's, block by block. The result is an exact
// selection over the same multiset of values, so it is the serial one (up
// to the sign of a zero that ties with the other zero). With group keys the radix-partitioned path (agg_radix.go) takes
// these aggregates instead, where nothing has to be moved.

// keylessMerger is a mergingState whose merge the parallel path uses only
// without group keys (keylessOnly is a marker).
type keylessMerger interface {
	mergingState
	keylessOnly()
}

func (s *quantState) keylessOnly() {}

// merge moves src's values into s (only the owner of a shared collector
// moves them; the other aggregates on the column read the same collector).
func (s *quantState) merge(src aggState, dst []int32) error {
	if !s.owner {
		return nil
	}
	o := src.(*quantState).c
	var buf []float64
	for g, d := range dst {
		if g >= len(o.chains) {
			break
		}
		s.c.nan[d] = s.c.nan[d] || o.nan[g]
		ch := &s.c.chains[d]
		err := o.store.drain(&o.chains[g], &buf, func(vs []float64) error {
			for _, x := range vs {
				if err := s.c.store.add(ch, x); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// drain empties ch (in a store still adding) block by block, calling f
// with each block's values decoded into *buf (in no particular order) and
// giving the block back right after.
func (s *blockStore) drain(ch *valueChain, buf *[]float64, f func([]float64) error) error {
	if ch.nblk == 0 {
		return nil
	}
	last := ch.nblk - 1
	ref := ch.tail
	for k := int64(last); k >= 0; k-- {
		form := ref.form()
		used := int64(formVals(uint32(k), form))
		if uint32(k) == last {
			used -= int64(ch.room)
		}
		p := s.blockPtr(ref)
		var vs []float64
		if d, ok := form.compact(); ok {
			*buf = resize(*buf, int(used))
			div := pow10[d]
			for i, v := range unsafe.Slice((*int32)(p), used) {
				(*buf)[i] = float64(v) / div
			}
			vs = *buf
		} else {
			vs = unsafe.Slice((*float64)(p), used)
		}
		prev := s.link(ref, uint32(k))
		err := f(vs)
		s.release(ref)
		if err != nil {
			*ch = valueChain{}
			return err
		}
		ref = prev
	}
	*ch = valueChain{}
	return nil
}
