package planner

import "fmt"

// Generic plan traversal. Everything here reaches a node's inputs through
// Children and rebuilds nodes through WithChildren only, so it works for
// every node type, including ones added later.

// Transform rewrites the plan bottom-up (post-order). Each node's children
// are transformed first; when any of them changed, the node is rebuilt with
// WithChildren (a copy), and f is then applied to the node. f returns the
// node's replacement and whether it differs from its argument; when it
// reports no change it must return its argument. f must not modify its
// argument: it builds new nodes (WithChildren gives a modifiable copy).
//
// Transform reports whether anything changed. When nothing did it returns n
// itself; when something did, the unchanged subtrees of the result are the
// input's own nodes (shared, not copied). Transform never modifies n. The
// first error from f or WithChildren stops the walk.
func Transform(n Node, f func(Node) (Node, bool, error)) (Node, bool, error) {
	children := n.Children()
	changed := false
	for i, c := range children {
		nc, ch, err := Transform(c, f)
		if err != nil {
			return nil, false, err
		}
		if ch {
			children[i], changed = nc, true
		}
	}
	if changed {
		var err error
		if n, err = n.WithChildren(children...); err != nil {
			return nil, false, err
		}
	}
	out, ch, err := f(n)
	if err != nil {
		return nil, false, err
	}
	return out, changed || ch, nil
}

// Inspect visits the plan depth-first in pre-order (a node, then its
// children in order), calling f with each node and its depth (0 for n).
// When f returns false, the node's children are skipped. f also sees nil
// nodes (a nil plan, or a nil child), whose children are never visited; a
// typed nil pointer node is f's to reject (return false).
func Inspect(n Node, f func(n Node, depth int) bool) {
	var walk func(Node, int)
	walk = func(n Node, depth int) {
		if !f(n, depth) || n == nil {
			return
		}
		for _, c := range n.Children() {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
}

// Clone deep-copies a plan (every node is rebuilt with WithChildren), so
// the copy can be modified without affecting n. Clone(nil) is nil. It
// panics if a node's WithChildren rejects the node's own children, which is
// a bug in that node type.
func Clone(n Node) Node {
	c, err := clone(n)
	if err != nil {
		panic(fmt.Sprintf("planner: Clone: %v", err))
	}
	return c
}

func clone(n Node) (Node, error) {
	if n == nil {
		return nil, nil
	}
	children := n.Children()
	for i, c := range children {
		var err error
		if children[i], err = clone(c); err != nil {
			return nil, err
		}
	}
	return n.WithChildren(children...)
}

// ScanOf returns the plan's first Scan in pre-order (its only one in the
// plans Build makes), or nil if there is none.
func ScanOf(n Node) *Scan {
	var s *Scan
	Inspect(n, func(n Node, _ int) bool {
		if s == nil {
			s, _ = n.(*Scan)
		}
		return s == nil
	})
	return s
}
