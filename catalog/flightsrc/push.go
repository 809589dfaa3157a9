package flightsrc

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/planner/sqlgen"
)

var _ planner.SubtreePusher = (*source)(nil)

// PushesPlan implements planner.SubtreePusher: a subtree with an
// aggregate the remote computes as the engine does (count, count of a
// column, count distinct of a group-key type, sum and avg of integers — and of float64 with float_sums —, min and max of integers,
// strings and dates, grouped by integer, string, date or boolean keys; in
// the mysql dialect no string keys or string min/max: its collations may
// ignore case), a top-N (a Limit over a Sort), or joins of tables of
// this remote (a cross join only under an aggregate or a limit: its
// pairs outnumber its inputs' rows), over filters the dialect prints,
// with HAVING filters, projections, renames, a top-N or a limit above.
// The generator (sqlgen.GenerateTables) decides which filters, sort and
// join keys print.
func (s *source) PushesPlan(n planner.Node) bool {
	agg, topN, join, cross, ok := false, false, false, false, true
	reduced := false // an aggregate or a limit above every join
	planner.Inspect(n, func(x planner.Node, _ int) bool {
		switch x := x.(type) {
		case *planner.Aggregate:
			agg = true
			reduced = reduced || !join
			in := x.Input.Schema()
			for _, k := range x.GroupIdx {
				ok = ok && s.keyType(in.Field(k).Type)
			}
			for _, a := range x.Aggs {
				ok = ok && s.pushesAgg(a, in)
			}
		case *planner.Limit:
			reduced = reduced || !join
		case *planner.Sort:
			topN = true // the generator takes it only under a Limit
		case *planner.Join:
			join = true
			cross = cross || x.Type == planner.JoinCross
		case *planner.Scan:
			_, err := s.tables(x.Dataset)
			ok = ok && err == nil
		}
		return ok
	})
	if !ok || (!agg && !topN && !join) || (cross && !reduced) {
		return false
	}
	_, err := sqlgen.GenerateTables(n, s.tables, s.r.dialect)
	return err == nil
}

// tables names the remote table of dataset: this source's, or another
// table of its remote (a join); a dataset of another remote, or a local
// one, has none.
func (s *source) tables(dataset string) (sqlgen.Table, error) {
	if dataset == s.id {
		return s.table, nil
	}
	if m := s.r.byID.Load(); m != nil {
		if t, ok := (*m)[dataset]; ok {
			return t, nil
		}
	}
	return sqlgen.Table{}, fmt.Errorf("%w: dataset %q is not a table of remote %s", sqlgen.ErrUnsupported, dataset, s.r.cfg.Name)
}

// keyType reports whether a column of type t may be a pushed group key
// or a pushed min/max argument.
func (s *source) keyType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.DATE32, arrow.BOOL:
		return true
	case arrow.STRING, arrow.LARGE_STRING:
		return !s.r.dialect.CaseInsensitiveStrings
	}
	return false
}

func isInteger(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// pushesAgg reports whether aggregate a (over input schema in) is pushed.
func (s *source) pushesAgg(a planner.AggExpr, in *arrow.Schema) bool {
	if len(a.Filter) > 0 || a.Arg != "" {
		return false
	}
	if a.Col == "*" || a.Index < 0 {
		return a.Fn == planner.AggCount && a.Col == "*"
	}
	t := in.Field(a.Index).Type
	switch a.Fn {
	case planner.AggCount:
		return true
	case planner.AggSum, planner.AggAvg:
		// SQL sums of uint64 may leave int64; float32 sums stay float32
		// in some engines. Float64 sums and averages only with
		// float_sums: the engine's are exact on decimal data, a remote
		// adds doubles in its own order (docs/SCALE_OUT.md, "Exactness").
		return (isInteger(t) && t.ID() != arrow.UINT64) || (t.ID() == arrow.FLOAT64 && s.r.cfg.FloatSums)
	case planner.AggCountDistinct:
		return s.keyType(t) // values the remote compares as the engine does
	case planner.AggMin, planner.AggMax:
		return s.keyType(t) && t.ID() != arrow.BOOL
	}
	return false
}

// toType converts a column of a pushed subtree's result to the type the
// plan gives it (remotes type computed columns their own way: SQLite
// types them by their first value, or as a union of its storage classes):
// as catalog.ExposeArray does, and a dense union value by value from its
// members' text.
func toType(mem memory.Allocator, arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	u, ok := arr.(*array.DenseUnion)
	if !ok {
		return catalog.ExposeArray(mem, arr, to)
	}
	b := array.NewBuilder(mem, to)
	defer b.Release()
	b.Reserve(u.Len())
	for i := range u.Len() {
		v, off := u.Field(u.ChildID(i)), int(u.ValueOffset(i))
		if v.IsNull(off) {
			b.AppendNull()
			continue
		}
		if err := b.AppendValueFromString(v.ValueStr(off)); err != nil {
			return nil, fmt.Errorf("cannot read the remote's %s value %q as %s: %w", v.DataType(), v.ValueStr(off), to, err)
		}
	}
	return b.NewArray(), nil
}
