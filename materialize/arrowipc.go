package materialize

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
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
	fw    *ipc.FileWriter
	plain *Plainer
}

func newArrowWriter(w io.Writer, schema *arrow.Schema) (*arrowWriter, error) {
	aw := &arrowWriter{plain: NewPlainer(schema)}
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(aw.plain.Schema()), ipc.WithAllocator(memory.DefaultAllocator))
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
	rec, err := aw.plain.Batch(ctx, b)
	if err != nil {
		return fmt.Errorf("arrow ipc: %w", err)
	}
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
