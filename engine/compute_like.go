package engine

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/planner"
)

// Vectorized LIKE and ILIKE against a literal pattern (part of fastCall,
// compute_cmp.go). The registry's kernel gets the pattern broadcast into a
// full column (copied once per row) and tests row by row through generic
// accessors; here the pattern's test (funcs.LikeMatcher, the kernel's own:
// a substring search for literals and %, else the pattern's regular
// expression) runs over the string column's bytes directly, and once per
// dictionary value on a dictionary-encoded column. Null rows are null, as
// in the kernel; a null or invalid pattern is left to the kernel.

// like evaluates c (like or ilike) when its pattern is a string literal.
func (ev *evaluator) like(c *planner.Call, cols []arrow.Array, n int) (vec, bool, error) {
	if len(c.Args) != 2 {
		return vec{}, false, nil
	}
	m := ev.likeMatcher(c)
	if m == nil {
		return vec{}, false, nil
	}
	out := ev.pool.boolsN(n)
	if arr := dictColumn(c.Args[0], cols); arr != nil {
		dictOutcome(arr, out, func(vals []string, res []bool) {
			for d, s := range vals {
				res[d] = m(s)
			}
		})
		return vec{arr: ev.keep(buildBools(ev.mem, out, ev.validOf(arr)))}, true, nil
	}
	v, err := ev.eval(c.Args[0], cols, n)
	if err != nil {
		return vec{}, false, err
	}
	if v.arr == nil || !isStringType(v.arr.DataType().ID()) || v.arr.Len() != n {
		return vec{}, false, nil
	}
	src, valid := strSrcOf(v.arr), ev.validOf(v.arr)
	for i := range out {
		out[i] = (valid == nil || valid[i]) && m(src.at(i))
	}
	return vec{arr: ev.keep(buildBools(ev.mem, out, valid))}, true, nil
}

// likeMatcher returns the pattern test of c, made once per query; nil when
// the pattern is not a string literal or does not compile (the kernel then
// answers, with its error).
func (ev *evaluator) likeMatcher(c *planner.Call) func(string) bool {
	if m, ok := ev.likes[c]; ok {
		return m
	}
	var m func(string) bool
	if p, ok := c.Args[1].(*planner.Const); ok && !p.Null && p.Typ != nil && isStringType(p.Typ.ID()) {
		m, _ = funcs.LikeMatcher(planner.ConstValue(p), c.Fn == "ilike")
	}
	if ev.likes == nil {
		ev.likes = map[*planner.Call]func(string) bool{}
	}
	ev.likes[c] = m
	return m
}
