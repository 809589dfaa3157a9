package funcs

import "fmt"

// table is one ordered, name-indexed list of declarations (operators,
// aggregates or scalar functions). Order is documentation order: built-ins
// first, then registrations.
type table[K ~string, D any] struct {
	what  string
	name  func(*D) K
	decls []*D
	index map[K]*D
}

func newTable[K ~string, D any](what string, name func(*D) K) *table[K, D] {
	return &table[K, D]{what: what, name: name, index: map[K]*D{}}
}

// add registers d; it panics on an empty or duplicate name.
func (t *table[K, D]) add(d *D) {
	k := t.name(d)
	if _, dup := t.index[k]; dup || k == "" {
		panic(fmt.Sprintf("funcs: %s %q registered twice (or unnamed)", t.what, k))
	}
	t.decls = append(t.decls, d)
	t.index[k] = d
}

func (t *table[K, D]) lookup(k K) (*D, bool) {
	d, ok := t.index[k]
	return d, ok
}

// names returns the names of the declarations for which keep holds (all
// when keep is nil), in order.
func (t *table[K, D]) names(keep func(*D) bool) []string {
	out := make([]string, 0, len(t.decls))
	for _, d := range t.decls {
		if keep == nil || keep(d) {
			out = append(out, string(t.name(d)))
		}
	}
	return out
}
