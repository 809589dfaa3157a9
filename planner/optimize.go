package planner

import "github.com/apache/arrow-go/v18/arrow"

// FilterPushdowner is implemented by sources that can evaluate some
// predicates themselves while reading (e.g. skipping row groups or chunks).
// HandlesFilter reports whether the source fully applies p; the optimizer
// moves only those predicates into the Scan. p may use any Op* constant
// (including OpAny groups and CaseInsensitive string ops): a source must
// return false for whatever it does not fully understand.
type FilterPushdowner interface {
	HandlesFilter(p Predicate) bool
}

// ZoneFilterer is implemented by sources that keep per-batch statistics
// (zone maps: min/max and null counts per column) and skip the batches in
// which no row can satisfy a predicate. UsesZoneFilter reports whether the
// source can use p, a predicate over the scan's output schema in, for that;
// skipping is only a pre-filter, so the Filter above the Scan keeps p.
type ZoneFilterer interface {
	UsesZoneFilter(p Predicate, in *arrow.Schema) bool
}

// OptimizeOptions configures Optimize.
type OptimizeOptions struct {
	// Pushdown, when non-nil, receives filters it reports it handles
	// (rule PushFilters). Nil means no filter is pushed into the scan.
	Pushdown FilterPushdowner
	// Zones, when non-nil, receives copies of the filters it can use to
	// skip batches (rule ZoneFilters). Nil means none.
	Zones ZoneFilterer
	// Sources, when non-nil, gives the pushdown and zone filterer of each
	// dataset by id, for plans that scan several datasets (joins,
	// subqueries): a Scan of a dataset it lists gets that dataset's (either
	// may be nil), a Scan of another dataset Pushdown and Zones. See
	// SourceOptions.
	Sources map[string]SourceOptions
}

// Rule is one optimizer rewrite, declared in a file of its own
// (rule_*.go). Rules take a plan and return the rewritten plan; they never
// modify their input: they rewrite with Transform (or Children and
// WithChildren), so unchanged subtrees are shared and changed nodes are
// new copies. A rule names only the node types it is about; it reaches
// every other node through the Node interface (and the optional
// ColumnUser, IndexResolver and RowPreserver interfaces), so a new node
// type needs no change to the rules that merely pass through it.
type Rule struct {
	// Name identifies the rule in explain output and tests.
	Name string
	// Apply rewrites the plan.
	Apply func(n Node, opts OptimizeOptions) (Node, error)
}

// Rules is the optimizer pipeline, in order.
var Rules = []Rule{
	{Name: "fold_constants", Apply: FoldConstants},
	{Name: "join_cross_order", Apply: JoinCrossOrder},
	{Name: "push_join_residual", Apply: PushJoinResidual},
	{Name: "expr_filter_preds", Apply: ExprFilterPreds},
	{Name: "derive_join_ors", Apply: DeriveJoinORs},
	{Name: "or_column_preds", Apply: OrColumnPreds},
	{Name: "push_join_filters", Apply: PushJoinFilters},
	{Name: "semi_join_reduce", Apply: SemiJoinReduce},
	{Name: "join_reduce_right", Apply: JoinReduceRight},
	{Name: "join_filtering_first", Apply: JoinFilteringFirst},
	{Name: "push_filters", Apply: PushFilters},
	{Name: "push_limit", Apply: PushLimit},
	{Name: "push_limit_union", Apply: PushLimitIntoUnion},
	{Name: "push_projection_union", Apply: PushProjectionIntoUnion},
	{Name: "push_projection", Apply: PushProjection},
	{Name: "zone_filters", Apply: ZoneFilters},
}

// Optimize applies Rules in order to a clone of the plan, then re-resolves
// every column index against the rewritten child schemas (Resolve modifies
// nodes in place, hence the clone: the caller's plan is never modified).
func Optimize(n Node, opts OptimizeOptions) (Node, error) {
	n, err := clone(n)
	if err != nil {
		return nil, err
	}
	for _, r := range Rules {
		if n, err = r.Apply(n, opts); err != nil {
			return nil, err
		}
	}
	return n, Resolve(n)
}
