package engine

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// The merge of first and last without group keys (agg_merge.go): the
// parallel path deals batch k of its input to worker k mod w (after the
// serial prefix, which the operator folds itself), so the input position
// of a partial state's value is known from the batch that set it. Each
// keyless first/last state is wrapped in a seqFirstLast, which notes the
// position (the batch's number in the dealing; -1 for the serial prefix)
// of the first (last) batch holding a non-null value: that batch's value is
// the state's. The merge keeps the value of the smallest (largest)
// position, which is the serial result exactly. With group keys first and
// last take the radix-partitioned path (agg_radix.go), where nothing merges.

// groupCopier is a first/last state that can take one group's value from
// another state of the same type.
type groupCopier interface {
	aggState
	// copyGroup sets group to of s to group from of src.
	copyGroup(src aggState, from, to int)
}

// sequenced is a state that wants the input position of the batches it
// folds (see runParallel).
type sequenced interface{ setSeq(seq int64) }

// seqFirstLast wraps a keyless first/last state (see above).
type seqFirstLast struct {
	groupCopier
	last bool
	seq  int64 // the position of the batch being folded
	has  bool  // some folded batch held a non-null value
	pos  int64 // the position of the batch whose value the state holds
}

// wrapKeylessFirstLast returns s wrapped for the keyless merge, or s when
// it cannot take a group's value from another state.
func wrapKeylessFirstLast(s aggState, last bool) aggState {
	if c, ok := s.(groupCopier); ok {
		return &seqFirstLast{groupCopier: c, last: last, seq: -1}
	}
	return s
}

func (s *seqFirstLast) setSeq(seq int64) { s.seq = seq }
func (s *seqFirstLast) keylessOnly()     {}

func (s *seqFirstLast) update(col arrow.Array, gids []int32) error {
	if err := s.groupCopier.update(col, gids); err != nil {
		return err
	}
	if anyValid(col, len(gids)) && (s.last || !s.has) {
		s.has, s.pos = true, s.seq
	}
	return nil
}

// anyValid reports whether one of the first n rows of col is not null.
func anyValid(col arrow.Array, n int) bool {
	v := validityOf(col)
	for i := range n {
		if v.ok(i) {
			return true
		}
	}
	return false
}

func (s *seqFirstLast) merge(src aggState, _ []int32) error {
	o := src.(*seqFirstLast)
	if !o.has {
		return nil
	}
	if !s.has || (s.last && o.pos > s.pos) || (!s.last && o.pos < s.pos) {
		s.copyGroup(o.groupCopier, 0, 0)
		s.has, s.pos = true, o.pos
	}
	return nil
}

func (s *firstLast[T]) copyGroup(src aggState, from, to int) {
	o := src.(*firstLast[T])
	s.cur[to], s.seen[to] = o.cur[from], o.seen[from]
}

func (s *firstLastBool) copyGroup(src aggState, from, to int) {
	o := src.(*firstLastBool)
	s.cur[to], s.seen[to] = o.cur[from], o.seen[from]
}

func (s *firstLastStr) copyGroup(src aggState, from, to int) {
	o := src.(*firstLastStr)
	x := strings.Clone(o.cur[from])
	s.acct.charge(int64(len(x) - len(s.cur[to])))
	s.cur[to], s.seen[to] = x, o.seen[from]
}
