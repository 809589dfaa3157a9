package planner

import "strings"

// SubtreePusher is implemented by sources that run whole plan subtrees
// over their own rows (a remote engine): PushesPlan reports whether the
// source evaluates n — a subtree whose first Scan reads the source's
// dataset, its other Scans (of joined datasets) any dataset — exactly as
// the engine would. A source refuses a subtree that scans a dataset it
// cannot read itself (another remote's, or a local file).
type SubtreePusher interface {
	PushesPlan(n Node) bool
}

// PushSubtree replaces each highest subtree of n that a source runs by a
// Scan whose Pushed is that subtree and whose Out is its schema. pusher
// gives the source of a dataset when it is a SubtreePusher (nil
// otherwise); a subtree is offered to the pusher of its first Scan's
// dataset, which the new Scan keeps (the engine reads it through that
// dataset's source), largest first. A subtree may join several datasets
// (those of one remote); a bare Scan is not offered (its projection and
// filters are pushed as usual), nor a subtree over a Scan pushed
// already. Nodes above keep their column indices: the new Scan has the
// subtree's schema (a pushed top-N keeps its Sort above the Scan:
// keepOrder). Run it after Optimize.
func PushSubtree(n Node, pusher func(dataset string) SubtreePusher) (Node, error) {
	if s := ScanOf(n); s != nil && s != n && unpushed(n) {
		if p := pusher(s.Dataset); p != nil && p.PushesPlan(n) {
			scan := &Scan{Dataset: s.Dataset, Out: n.Schema(), Pushed: n, RowCount: s.RowCount, RowCountExact: s.RowCountExact}
			return keepOrder(n, scan), nil
		}
	}
	kids := n.Children()
	changed := false
	for i, k := range kids {
		nk, err := PushSubtree(k, pusher)
		if err != nil {
			return nil, err
		}
		if nk != k {
			kids[i], changed = nk, true
		}
	}
	if !changed {
		return n, nil
	}
	return n.WithChildren(kids...)
}

// unpushed reports whether no Scan in n runs a pushed subtree.
func unpushed(n Node) bool {
	ok := true
	Inspect(n, func(x Node, _ int) bool {
		if s, is := x.(*Scan); is && s.Pushed != nil {
			ok = false
		}
		return ok
	})
	return ok
}

// keepOrder puts the Sort of a pushed top-N (a Limit over a Sort, with
// Projects and renaming Computes above and Projects between) over its
// new Scan again when the scan's columns hold every key (under its
// name, or a name a Compute above gave it): the source picks the rows,
// the engine orders those few as it always does (stable, its null and
// NaN placement), so a remote that answers in several endpoints, or
// breaks ties its own way, cannot change the order. Other subtrees come
// back as scan.
func keepOrder(pushed Node, scan *Scan) Node {
	renamed := map[string]string{} // a column -> a new name of it above
	top := pushed
	for done := false; !done; {
		switch x := top.(type) {
		case *Project:
			top = x.Input
		case *Compute:
			for _, e := range x.Exprs {
				if ref, ok := e.Expr.(*ColRef); ok {
					renamed[ref.Name] = e.Name
				}
			}
			top = x.Input
		default:
			done = true
		}
	}
	l, ok := top.(*Limit)
	if !ok {
		return scan
	}
	s, ok := underProjects(l.Input).(*Sort)
	if !ok {
		return scan
	}
	keys := make([]SortKey, len(s.Keys))
	for i, k := range s.Keys {
		name := k.Col
		for range len(renamed) + 1 { // follow renames until a column of the scan
			if len(scan.Out.FieldIndices(name)) > 0 {
				break
			}
			name = renamed[name]
		}
		ix := scan.Out.FieldIndices(name)
		if len(ix) != 1 {
			return scan
		}
		keys[i] = k
		keys[i].Col, keys[i].Index = name, ix[0]
	}
	return &Sort{Input: scan, Keys: keys}
}

// underProjects is the first node at or under n that is not a Project.
func underProjects(n Node) Node {
	for {
		p, ok := n.(*Project)
		if !ok {
			return n
		}
		n = p.Input
	}
}

// describePushed is a pushed subtree on one line, root first.
func describePushed(n Node) string {
	var parts []string
	Inspect(n, func(n Node, _ int) bool {
		parts = append(parts, n.Describe())
		return true
	})
	return strings.Join(parts, " <- ")
}
