package planner

import "strings"

// SubtreePusher is implemented by sources that run whole plan subtrees
// over their own rows (a remote engine): PushesPlan reports whether the
// source evaluates n — a chain of single-input nodes down to one Scan of
// it — exactly as the engine would.
type SubtreePusher interface {
	PushesPlan(n Node) bool
}

// PushSubtree replaces the highest subtree of n that p runs by a Scan of
// dataset whose Pushed is that subtree and whose Out is its schema. Only
// chains of single-input nodes above a Scan of dataset are offered,
// largest first; a bare Scan is not (its projection and filters are
// pushed as usual). Nodes above keep their column indices: the new Scan
// has the subtree's schema (a pushed top-N keeps its Sort above the Scan:
// keepOrder). Run it after Optimize.
func PushSubtree(n Node, dataset string, p SubtreePusher) (Node, error) {
	if s := chainScan(n); s != nil && s != n && s.Dataset == dataset && s.Pushed == nil && p.PushesPlan(n) {
		scan := &Scan{Dataset: s.Dataset, Out: n.Schema(), Pushed: n, RowCount: s.RowCount, RowCountExact: s.RowCountExact}
		return keepOrder(n, scan), nil
	}
	kids := n.Children()
	changed := false
	for i, k := range kids {
		nk, err := PushSubtree(k, dataset, p)
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

// keepOrder puts the Sort of a pushed top-N (a Limit over a Sort, with
// Projects above and between) over its new Scan again when the scan's columns hold
// every key: the source picks the rows, the engine orders those few as
// it always does (stable, its null and NaN placement), so a remote that
// answers in several endpoints, or breaks ties its own way, cannot change
// the order. Other subtrees come back as scan.
func keepOrder(pushed Node, scan *Scan) Node {
	l, ok := underProjects(pushed).(*Limit)
	if !ok {
		return scan
	}
	s, ok := underProjects(l.Input).(*Sort)
	if !ok {
		return scan
	}
	keys := make([]SortKey, len(s.Keys))
	for i, k := range s.Keys {
		ix := scan.Out.FieldIndices(k.Col)
		if len(ix) != 1 {
			return scan
		}
		keys[i] = k
		keys[i].Index = ix[0]
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

// chainScan is the Scan at the bottom of n when every node down to it
// has one input.
func chainScan(n Node) *Scan {
	for {
		if s, ok := n.(*Scan); ok {
			return s
		}
		kids := n.Children()
		if len(kids) != 1 {
			return nil
		}
		n = kids[0]
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
