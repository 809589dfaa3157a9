package csv

// workerDict is one parsing worker's dictionary of one string column,
// kept across the chunks the worker parses so that a chunk's lookups hit
// a table that is already filled and warm (no re-insertion of the same
// values chunk after chunk). Each chunk still numbers its own values in
// first-seen order (dictBuilder.order): local maps a worker code to the
// chunk's code, stamped with the chunk's generation so that it needs no
// clearing between chunks. Used by one goroutine at a time.
type workerDict struct {
	d     strDict
	local []uint64 // worker code -> gen<<32 | chunk code
	gen   uint64
	order []int32 // recycled dictBuilder.order
}

// Bounds of a worker dictionary: beyond them it starts over at the next
// chunk (a column whose values keep changing would otherwise grow it
// without end).
const (
	workerDictValues = 1 << 15
	workerDictBytes  = 4 << 20
)

// start begins a chunk: a new generation, and a fresh dictionary when the
// old one grew past its bounds.
func (w *workerDict) start() {
	if w.d.slots == nil || w.d.len() > workerDictValues || len(w.d.vals) > workerDictBytes || w.gen >= 1<<32-1 {
		w.d.init(64)
		w.local = w.local[:0]
		w.gen = 0
	}
	w.gen++
}
