// Package infer is the text-type inference CSV, JSON and Excel share: the
// kinds a column of text cells can have (null, bool, integer, float,
// dates and timestamps in several layouts, string), how one cell is
// classified (Classify) and how a column's kind widens cell by cell
// (Widen, JoinKinds) so that a column stays numeric or temporal only when
// no value is lost, the notes that tell why (Trace, ColumnNote), and the
// conversion of a string column to its kind's Arrow type (ConvertColumn).
// It imports nothing of the catalog, so catalog (JSON, Excel) and
// catalog/csv both use it.
package infer
