package service

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// headReader passes through batches until left rows were returned; the last
// batch is sliced. It stops reading its input once the quota is met.
type headReader struct {
	array.RecordReader
	left int64
	cur  arrow.RecordBatch
}

func (h *headReader) Next() bool {
	if h.cur != nil {
		h.cur.Release()
		h.cur = nil
	}
	if h.left <= 0 || !h.RecordReader.Next() {
		return false
	}
	rec := h.RecordReader.RecordBatch()
	if rec.NumRows() > h.left {
		h.cur = rec.NewSlice(0, h.left)
	} else {
		rec.Retain()
		h.cur = rec
	}
	h.left -= h.cur.NumRows()
	return true
}

func (h *headReader) RecordBatch() arrow.RecordBatch { return h.cur }

// Record is the deprecated alias of RecordBatch.
func (h *headReader) Record() arrow.RecordBatch { return h.cur }

func (h *headReader) Release() {
	if h.cur != nil {
		h.cur.Release()
		h.cur = nil
	}
	h.RecordReader.Release()
}
