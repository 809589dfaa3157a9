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
// has the subtree's schema. Run it after Optimize.
func PushSubtree(n Node, dataset string, p SubtreePusher) (Node, error) {
	if s := chainScan(n); s != nil && s != n && s.Dataset == dataset && s.Pushed == nil && p.PushesPlan(n) {
		return &Scan{Dataset: s.Dataset, Out: n.Schema(), Pushed: n, RowCount: s.RowCount, RowCountExact: s.RowCountExact}, nil
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
