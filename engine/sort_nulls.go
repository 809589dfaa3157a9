package engine

// nullsFirst makes k sort nulls before the other values when first is set
// (SQL ORDER BY ... NULLS FIRST, planner.SortKey.NullsFirst); a nil key
// (an unsortable type) stays nil.
func nullsFirst(k sortKey, first bool) sortKey {
	if f, ok := k.(interface{ setNullsFirst() }); ok && first {
		f.setNullsFirst()
	}
	return k
}

func (k *ordKey[T]) setNullsFirst() { k.first = true }
