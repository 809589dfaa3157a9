package catalog

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// String columns a writer stored dictionary-encoded (a dictionary page in
// every row group, as DuckDB, pyarrow and Spark write low-cardinality
// strings) are read as Arrow dictionary arrays (pqarrow's read-dictionary
// mode: the codes as written, the dictionary once per row group) instead
// of being expanded to one string per row. The dataset's schema still says
// string; PlanSchema says dictionary, so the engine filters, groups and
// counts on the codes (engine/dict.go) and converts only where a plain
// string is needed.

// parquetDictType is the type of string columns read as dictionaries.
var parquetDictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// dictLeaves returns, by field of sc, the leaf column of each top-level
// string field stored with a dictionary page in every row group of md,
// and -1 for the other fields; nil when there is none.
func dictLeaves(md *metadata.FileMetaData, fr *pqarrow.FileReader, sc *arrow.Schema) []int {
	var out []int
	for i, f := range sc.Fields() {
		if f.Type.ID() != arrow.STRING || i >= len(fr.Manifest.Fields) || !fr.Manifest.Fields[i].IsLeaf() ||
			md.NumRowGroups() == 0 || !dictInEveryRowGroup(md, fr.Manifest.Fields[i].ColIndex) {
			continue
		}
		if out == nil {
			out = make([]int, sc.NumFields())
			for k := range out {
				out[k] = -1
			}
		}
		out[i] = fr.Manifest.Fields[i].ColIndex
	}
	return out
}

// dictInEveryRowGroup reports whether leaf column col has a dictionary
// page in every row group.
func dictInEveryRowGroup(md *metadata.FileMetaData, col int) bool {
	for rg := range md.NumRowGroups() {
		cc, err := md.RowGroup(rg).ColumnChunk(col)
		if err != nil || !cc.HasDictionaryPage() {
			return false
		}
	}
	return true
}

// withDicts returns sc with the fields that have a dictionary leaf typed
// parquetDictType (sc itself when there is none).
func withDicts(sc *arrow.Schema, dict []int) *arrow.Schema {
	if dict == nil {
		return sc
	}
	fields := sc.Fields()
	for i := range fields {
		if dict[i] >= 0 {
			fields[i].Type = parquetDictType
		}
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md)
}

// PlanSchema implements PlanSchemaer: the dataset's schema with the string
// columns read as dictionaries typed so.
func (s *parquetSource) PlanSchema() *arrow.Schema { return s.plan }

// PlanSchemaer is implemented by sources whose scans return some string
// columns dictionary-encoded although Dataset.Schema says string: planning
// against PlanSchema lets the engine work on the codes (a plan that says
// string gets the columns decoded).
type PlanSchemaer interface {
	PlanSchema() *arrow.Schema
}
