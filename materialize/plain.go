package materialize

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"

	"github.com/quarrydb/quarry/internal/dictstr"
)

// Plainer turns the engine's batches into the plain form Arrow files and
// streams carry: dictionary-encoded columns decoded to their value type
// (a stream or file allows one dictionary per column, and batches of a
// result may carry different ones; many clients read no dictionaries) and
// column names made unique (ColumnNames).
type Plainer struct {
	schema *arrow.Schema
	dict   []bool // column i is dictionary-encoded in the input
}

// NewPlainer prepares the conversion of batches of schema.
func NewPlainer(schema *arrow.Schema) *Plainer {
	names := ColumnNames(schema)
	fields := make([]arrow.Field, len(names))
	p := &Plainer{dict: make([]bool, len(names))}
	for i, f := range schema.Fields() {
		f.Name = names[i]
		if dt, ok := f.Type.(*arrow.DictionaryType); ok {
			f.Type = dt.ValueType
			p.dict[i] = true
		}
		fields[i] = f
	}
	md := schema.Metadata()
	p.schema = arrow.NewSchema(fields, &md)
	return p
}

// Schema is the plain schema.
func (p *Plainer) Schema() *arrow.Schema { return p.schema }

// Batch returns b in the plain schema (a new reference: release it).
func (p *Plainer) Batch(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		c := b.Column(i)
		if p.dict[i] {
			d := c.(*array.Dictionary)
			if dec, err := dictstr.Decode(exec.GetAllocator(ctx), d, d.Dictionary().DataType()); err == nil {
				cols[i] = dec
				continue
			} // anything dictstr does not decode (numbers, over 2 GiB), Take does or refuses
			dec, err := compute.TakeArray(ctx, d.Dictionary(), d.Indices())
			if err != nil {
				releaseAll(cols[:i])
				return nil, fmt.Errorf("decoding dictionary column %q: %w", p.schema.Field(i).Name, err)
			}
			cols[i] = dec
			continue
		}
		c.Retain()
		cols[i] = c
	}
	rec := array.NewRecordBatch(p.schema, cols, b.NumRows())
	releaseAll(cols)
	return rec, nil
}
