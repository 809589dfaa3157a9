package catalog

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// CopyArrayData deep-copies d's buffers, children and dictionary into
// memory from mem, so that the copy holds nothing of d's memory (a mapped
// file, another allocator's buffers). The caller releases the copy.
func CopyArrayData(mem memory.Allocator, d arrow.ArrayData) arrow.ArrayData {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b == nil {
			continue
		}
		nb := memory.NewResizableBuffer(mem)
		nb.Resize(b.Len())
		copy(nb.Bytes(), b.Bytes())
		bufs[i] = nb
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = CopyArrayData(mem, c)
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	for _, c := range children {
		c.Release()
	}
	if d.DataType().ID() == arrow.DICTIONARY && d.Dictionary() != nil {
		dc := CopyArrayData(mem, d.Dictionary())
		out.SetDictionary(dc)
		dc.Release()
	}
	return out
}
