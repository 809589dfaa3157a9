package materialize

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// WriteArrow writes batches (all of schema's fields) to w as one Arrow IPC
// file (the random-access "Feather v2" format, uncompressed), with arrow-go's
// ipc.FileWriter. Columns keep their Arrow types, with two exceptions:
// column names are ColumnNames(schema) (as in every other output), and
// dictionary-encoded columns are written decoded, as their value type
// (the IPC file format allows only one dictionary per column, and batches
// of a result may carry different ones). The context is checked between
// batches.
func WriteArrow(ctx context.Context, w io.Writer, schema *arrow.Schema, batches []arrow.RecordBatch) error {
	aw, err := newArrowWriter(w, schema)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if err := aw.write(ctx, b); err != nil {
			aw.abort()
			return err
		}
	}
	return aw.close()
}

// arrowWriter writes record batches to one Arrow IPC file as they come.
type arrowWriter struct {
	fw     *ipc.FileWriter
	schema *arrow.Schema
	dict   []bool // column i is dictionary-encoded in the input
}

func newArrowWriter(w io.Writer, schema *arrow.Schema) (*arrowWriter, error) {
	names := ColumnNames(schema)
	fields := make([]arrow.Field, len(names))
	aw := &arrowWriter{dict: make([]bool, len(names))}
	for i, f := range schema.Fields() {
		f.Name = names[i]
		if dt, ok := f.Type.(*arrow.DictionaryType); ok {
			f.Type = dt.ValueType
			aw.dict[i] = true
		}
		fields[i] = f
	}
	md := schema.Metadata()
	aw.schema = arrow.NewSchema(fields, &md)
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(aw.schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, fmt.Errorf("arrow ipc: %w", err)
	}
	aw.fw = fw
	return aw, nil
}

func (aw *arrowWriter) write(ctx context.Context, b arrow.RecordBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		c := b.Column(i)
		if aw.dict[i] {
			d := c.(*array.Dictionary)
			dec, err := compute.TakeArray(ctx, d.Dictionary(), d.Indices())
			if err != nil {
				releaseAll(cols[:i])
				return fmt.Errorf("arrow ipc: decoding dictionary column %q: %w", aw.schema.Field(i).Name, err)
			}
			cols[i] = dec
			continue
		}
		c.Retain()
		cols[i] = c
	}
	rec := array.NewRecordBatch(aw.schema, cols, b.NumRows())
	releaseAll(cols)
	defer rec.Release()
	if err := aw.fw.Write(rec); err != nil {
		return fmt.Errorf("arrow ipc: %w", err)
	}
	return nil
}

func (aw *arrowWriter) close() error {
	if err := aw.fw.Close(); err != nil {
		return fmt.Errorf("arrow ipc: %w", err)
	}
	return nil
}

func (aw *arrowWriter) abort() { _ = aw.fw.Close() }

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}
