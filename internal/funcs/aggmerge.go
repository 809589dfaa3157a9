package funcs

// AggMerger is implemented by an AggState that can fold another state of
// the same aggregate (built by the same kernel over the same input type)
// into itself: src's group g goes into the receiver's group dst[g]
// (len(dst) is src's group count; the receiver has grown to cover every
// dst[g]). The result must be the state of both parts' rows together
// (floats up to rounding). The engine aggregates in parallel (partial
// states per worker, then merged) only when every state of the aggregate
// merges.
type AggMerger interface {
	Merge(src AggState, dst []int32) error
}
