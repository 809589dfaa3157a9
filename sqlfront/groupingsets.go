package sqlfront

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/quarrydb/quarry/internal/qerr"
)

// GROUPING SETS, ROLLUP and CUBE are lowered to a UNION ALL of one grouped
// block per grouping set: each block groups by its set's keys, and the
// keys of the other sets read as nulls in its SELECT list and HAVING
// (typed like the key: CASE WHEN false THEN min(key) END); grouping(a, b)
// is the constant bit mask of the arguments that are not grouped in that
// set (1 for a, the first, is the high bit). The statement's ORDER BY,
// LIMIT and OFFSET apply to the union (by output names or positions), as
// for any set operation.

// maxGroupingSets bounds the expansion (CUBE of n keys is 2^n sets).
const maxGroupingSets = 64

// hasGroupingSets reports GROUPING SETS/ROLLUP/CUBE in GROUP BY, or a
// grouping() call in the SELECT list or HAVING.
func hasGroupingSets(sel *pg.SelectStmt) bool {
	for _, g := range sel.GroupClause {
		if g.GetGroupingSet() != nil {
			return true
		}
	}
	found := false
	for _, n := range append(append([]*pg.Node(nil), sel.TargetList...), sel.HavingClause) {
		walk(n, func(x *pg.Node) bool {
			found = found || x.GetGroupingFunc() != nil
			return !found
		})
	}
	return found
}

// groupingSets expands GROUP BY into its grouping sets (each a list of key
// expressions): the cross product of the items, an item being one key
// (in every set) or a GROUPING SETS/ROLLUP/CUBE.
func (c *compiler) groupingSets(sel *pg.SelectStmt) ([][]*pg.Node, error) {
	sets := [][]*pg.Node{{}}
	for _, g := range sel.GroupClause {
		item, err := c.itemSets(g, sel)
		if err != nil {
			return nil, err
		}
		var next [][]*pg.Node
		for _, s := range sets {
			for _, t := range item {
				next = append(next, append(append([]*pg.Node(nil), s...), t...))
			}
		}
		if len(next) > maxGroupingSets {
			return nil, c.errAt(nodeLoc(g), qerr.CodeUnsupportedSQL, "GROUP BY expands to %d grouping sets; at most %d are accepted", len(next), maxGroupingSets).
				With("limit", maxGroupingSets).WithHint("list the grouping sets you need with GROUPING SETS ((...), ...)")
		}
		sets = next
	}
	return sets, nil
}

// unit is the keys of one grouping element: (a, b) or a.
func (c *compiler) unit(n *pg.Node, sel *pg.SelectStmt) ([]*pg.Node, error) {
	switch {
	case n.GetRowExpr() != nil:
		return n.GetRowExpr().Args, nil
	case n.GetGroupingSet() != nil && n.GetGroupingSet().Kind == pg.GroupingSetKind_GROUPING_SET_SIMPLE:
		return n.GetGroupingSet().Content, nil
	case n.GetGroupingSet() != nil && n.GetGroupingSet().Kind == pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return nil, nil
	case n.GetGroupingSet() != nil:
		return nil, c.errAt(nodeLoc(n), qerr.CodeUnsupportedSQL, "a nested ROLLUP, CUBE or GROUPING SETS is not supported here").
			WithHint("list the grouping sets with GROUPING SETS ((...), ...)")
	}
	if k, ok := ordinal(n); ok {
		if k < 1 || k > len(sel.TargetList) {
			return nil, c.errAt(nodeLoc(n), qerr.CodeInvalidArgument, "GROUP BY position %d is not in the SELECT list (1 to %d)", k, len(sel.TargetList))
		}
		return []*pg.Node{sel.TargetList[k-1].GetResTarget().Val}, nil
	}
	return []*pg.Node{n}, nil
}

// itemSets are the grouping sets of one GROUP BY item.
func (c *compiler) itemSets(g *pg.Node, sel *pg.SelectStmt) ([][]*pg.Node, error) {
	gs := g.GetGroupingSet()
	if gs == nil || gs.Kind == pg.GroupingSetKind_GROUPING_SET_SIMPLE || gs.Kind == pg.GroupingSetKind_GROUPING_SET_EMPTY {
		u, err := c.unit(g, sel)
		return [][]*pg.Node{u}, err
	}
	units := make([][]*pg.Node, len(gs.Content))
	for i, n := range gs.Content {
		if gs.Kind == pg.GroupingSetKind_GROUPING_SET_SETS && n.GetGroupingSet() != nil &&
			n.GetGroupingSet().Kind != pg.GroupingSetKind_GROUPING_SET_SIMPLE && n.GetGroupingSet().Kind != pg.GroupingSetKind_GROUPING_SET_EMPTY {
			return nil, c.errAt(nodeLoc(n), qerr.CodeUnsupportedSQL, "ROLLUP or CUBE inside GROUPING SETS is not supported").
				WithHint("list the grouping sets with GROUPING SETS ((...), ...)")
		}
		u, err := c.unit(n, sel)
		if err != nil {
			return nil, err
		}
		units[i] = u
	}
	var out [][]*pg.Node
	switch gs.Kind {
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP:
		for k := len(units); k >= 0; k-- {
			var s []*pg.Node
			for _, u := range units[:k] {
				s = append(s, u...)
			}
			out = append(out, s)
		}
	case pg.GroupingSetKind_GROUPING_SET_CUBE:
		if len(units) > 6 {
			return nil, c.errAt(nodeLoc(g), qerr.CodeUnsupportedSQL, "CUBE of %d elements is too large (at most 6)", len(units)).
				With("limit", 6).WithHint("list the grouping sets you need with GROUPING SETS ((...), ...)")
		}
		for mask := (1 << len(units)) - 1; mask >= 0; mask-- {
			var s []*pg.Node
			for i, u := range units {
				if mask&(1<<(len(units)-1-i)) != 0 {
					s = append(s, u...)
				}
			}
			out = append(out, s)
		}
	default: // GROUPING SETS
		out = units
	}
	return out, nil
}

// groupingSetsPlan rewrites a SELECT with grouping sets to the UNION ALL
// of one block per set (one set: that block).
func (c *compiler) groupingSetsPlan(sel *pg.SelectStmt) (*pg.SelectStmt, error) {
	if len(sel.DistinctClause) > 0 || len(sel.WindowClause) > 0 {
		return nil, c.errAt(firstLoc(sel), qerr.CodeUnsupportedSQL, "DISTINCT or WINDOW with GROUPING SETS/ROLLUP/CUBE is not supported").
			WithHint("wrap the grouped query in a subquery and apply DISTINCT or the window outside")
	}
	sets, err := c.groupingSets(sel)
	if err != nil {
		return nil, err
	}
	// the block with the most keys first: the union's column names are its
	sort.SliceStable(sets, func(i, j int) bool { return len(sets[i]) > len(sets[j]) })
	var keys []*pg.Node
	for _, s := range sets {
		for _, k := range s {
			if indexExpr(keys, k) < 0 {
				keys = append(keys, k)
			}
		}
	}
	var union *pg.SelectStmt
	for _, s := range sets {
		blk := proto.Clone(sel).(*pg.SelectStmt)
		blk.WithClause, blk.SortClause, blk.LimitCount, blk.LimitOffset = nil, nil, nil, nil
		blk.GroupClause = s
		var ferr error
		fix := func(x *pg.Node) bool {
			if ferr != nil || isAgg(x) != nil || isWindow(x) != nil {
				return false
			}
			if gf := x.GetGroupingFunc(); gf != nil {
				mask := int64(0)
				for _, a := range gf.Args {
					mask <<= 1
					if indexExpr(keys, a) < 0 {
						ferr = c.errAt(nodeLoc(a), qerr.CodeInvalidArgument, "arguments of grouping() must be GROUP BY keys")
						return false
					}
					if indexExpr(s, a) < 0 {
						mask |= 1
					}
				}
				x.Node = pg.MakeAConstIntNode(mask, gf.Location).Node
				return false
			}
			if i := indexExpr(keys, x); i >= 0 && indexExpr(s, x) < 0 {
				x.Node = nullOf(keys[i]).Node
				return false
			}
			return true
		}
		for _, t := range blk.TargetList {
			rt := t.GetResTarget()
			if ref := rt.Val.GetColumnRef(); ref != nil && rt.Name == "" {
				rt.Name = ref.Fields[len(ref.Fields)-1].GetString_().GetSval() // keep its output name when nulled
			}
			walk(rt.Val, fix)
		}
		walk(blk.HavingClause, fix)
		if ferr != nil {
			return nil, ferr
		}
		if hasGroupingSets(blk) {
			return nil, c.errAt(firstLoc(sel), qerr.CodeUnsupportedSQL, "grouping() is supported in the SELECT list and HAVING, outside aggregates").
				WithHint("compute grouping(...) as its own SELECT item")
		}
		if len(s) == 0 && blk.HavingClause == nil {
			blk.HavingClause = &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: true}}}}}
		}
		if union == nil {
			union = blk
			continue
		}
		union = &pg.SelectStmt{Op: pg.SetOperation_SETOP_UNION, All: true, Larg: union, Rarg: blk}
	}
	union.SortClause, union.LimitCount, union.LimitOffset = sel.SortClause, sel.LimitCount, sel.LimitOffset
	return union, nil
}

// nullOf is a null typed like key in a grouped block: CASE WHEN false
// THEN min(key) END.
func nullOf(key *pg.Node) *pg.Node {
	min := pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode("min")}, []*pg.Node{proto.Clone(key).(*pg.Node)}, -1)
	f := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: false}}}}}
	return pg.MakeCaseExprNode(nil, []*pg.Node{pg.MakeCaseWhenNode(f, min, -1)}, -1)
}

// indexExpr is the position of an expression equal to n (ignoring
// locations) in xs, or -1.
func indexExpr(xs []*pg.Node, n *pg.Node) int {
	want := unlocated(n)
	for i, x := range xs {
		if proto.Equal(unlocated(x), want) {
			return i
		}
	}
	return -1
}

// unlocated is a copy of n with every location zeroed.
func unlocated(n *pg.Node) *pg.Node {
	c := proto.Clone(n).(*pg.Node)
	var clear func(m protoreflect.Message)
	clear = func(m protoreflect.Message) {
		if f := m.Descriptor().Fields().ByName("location"); f != nil && f.Kind() == protoreflect.Int32Kind {
			m.Clear(f)
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Message() == nil || fd.IsMap():
			case fd.IsList():
				for i := 0; i < v.List().Len(); i++ {
					clear(v.List().Get(i).Message())
				}
			default:
				clear(v.Message())
			}
			return true
		})
	}
	clear(c.ProtoReflect())
	return c
}
