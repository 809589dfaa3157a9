package service

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// mapReader is a RecordReader that returns each batch of its input through
// fn (which returns a new batch the reader owns), with schema as its schema.
// Release releases the current batch and the input.
type mapReader struct {
	array.RecordReader
	schema *arrow.Schema
	fn     func(arrow.RecordBatch) arrow.RecordBatch
	cur    arrow.RecordBatch
}

func (r *mapReader) Schema() *arrow.Schema { return r.schema }

func (r *mapReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if !r.RecordReader.Next() {
		return false
	}
	r.cur = r.fn(r.RecordReader.RecordBatch())
	return true
}

func (r *mapReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch (the deprecated name).
func (r *mapReader) Record() arrow.RecordBatch { return r.cur }

func (r *mapReader) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.RecordReader.Release()
}
