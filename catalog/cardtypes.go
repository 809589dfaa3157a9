package catalog

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/infer"
)

// Type overrides for the formats whose cells are text before they are
// typed (JSON, Excel; CSV has its own reader, catalog/csv): a schema card's
// column type replaces the inferred one, every cell's text (a JSON
// number as written, a string's value, true/false, an Excel cell as
// Quarry reads it) is parsed under the override with the parsers CSV
// uses (infer.OverrideParser), and a cell that does not parse makes the
// file a diagnostic naming the row and column (CardReadError).

// cardTypesApply reports whether the type overrides of schema cards
// apply to datasets of kind k.
func cardTypesApply(k Kind) bool { return k == KindCSV || k == KindJSON || k == KindXLSX }

// CardReadError is the error of a file that does not read as its schema
// cards (spec) say: CardReadPrefix, the cards, then the problem.
func CardReadError(spec *ReadSpec, format string, args ...any) error {
	return fmt.Errorf("%s (%s): %s", CardReadPrefix, spec.SourcesPhrase(), fmt.Sprintf(format, args...))
}

// cardType is a column's type override and its parser.
type cardType struct {
	t       infer.OvType
	format  string
	parse   infer.CellParser
	scratch array.Builder // check's
	n       int
}

// cardTypeFor is the override of column name in spec, or nil when there
// is none.
func cardTypeFor(spec *ReadSpec, name string) (*cardType, error) {
	if !spec.Overrides() {
		return nil, nil
	}
	to, ok := spec.Types[name]
	if !ok {
		return nil, nil
	}
	t, err := infer.OverrideType(to.Type)
	if err != nil {
		return nil, err
	}
	parse, err := infer.OverrideParser(t, to.Format, nil, nil)
	if err != nil {
		return nil, err
	}
	return &cardType{t: t, format: to.Format, parse: parse}, nil
}

// check parses the text of row (counted from 1) of column name under the
// override, a CardReadError when it does not parse.
func (c *cardType) check(spec *ReadSpec, row int64, name, text string) error {
	if c.scratch == nil {
		c.scratch = array.NewBuilder(memory.DefaultAllocator, c.t.DT)
	}
	if !c.parse(c.scratch, text) {
		phrase := ""
		if c.format != "" {
			phrase = fmt.Sprintf(" in format %q", c.format)
		}
		return CardReadError(spec, "row %d, column %q: %q does not parse as %s%s", row, name, text, TypeName(c.t.DT), phrase)
	}
	if c.n++; c.n == 4096 {
		c.scratch.NewArray().Release()
		c.n = 0
	}
	return nil
}

// release frees check's scratch builder.
func (c *cardType) release() {
	if c != nil && c.scratch != nil {
		c.scratch.Release()
		c.scratch = nil
	}
}

// convert builds the column's array from its cells' texts.
func (c *cardType) convert(mem memory.Allocator, in *array.String) (arrow.Array, error) {
	b := array.NewBuilder(mem, c.t.DT)
	return infer.ConvertEach(in, b, func(s string) bool { return c.parse(b, s) }, TypeName(c.t.DT))
}

// cardTyped applies the overrides (by field of schema; nil entries keep
// the inferred type) to schema and notes: an overridden column gets the
// override's type and a note naming its format (no inference hint). An
// override naming the inferred type without a format changes nothing
// and is dropped from types.
func cardTyped(schema *arrow.Schema, notes map[string]ColumnNote, types []*cardType) (*arrow.Schema, map[string]ColumnNote) {
	fields := schema.Fields()
	changed := false
	for i, c := range types {
		if c == nil {
			continue
		}
		if c.format == "" && arrow.TypeEqual(c.t.DT, fields[i].Type) {
			types[i] = nil
			continue
		}
		changed = true
		fields[i].Type = c.t.DT
		delete(notes, fields[i].Name)
		if c.format != "" {
			if notes == nil {
				notes = map[string]ColumnNote{}
			}
			notes[fields[i].Name] = ColumnNote{Format: c.format}
		}
	}
	if !changed {
		return schema, notes
	}
	return arrow.NewSchema(fields, nil), notes
}
