package catalog

import (
	"errors"
	"io"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog/internal/chunk"
	"github.com/quarrydb/quarry/internal/qerr"
)

// DefaultBatchSize is the number of rows per record batch a Source produces
// when ScanOptions.BatchSize is 0.
const DefaultBatchSize = 64 << 10

// Projection resolves requested column names to file column indices.
func Projection(id string, schema *arrow.Schema, cols []string) ([]int, error) {
	if len(cols) == 0 {
		idx := make([]int, schema.NumFields())
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, len(cols))
	seen := make(map[string]bool, len(cols))
	for i, name := range cols {
		if seen[name] {
			return nil, qerr.Invalid(qerr.CodeInvalidColumn, "column %q is requested more than once", name).
				WithHint("list each column once")
		}
		seen[name] = true
		fi := schema.FieldIndices(name)
		if len(fi) == 0 {
			names := make([]string, schema.NumFields())
			for j, f := range schema.Fields() {
				names[j] = f.Name
			}
			return nil, qerr.Invalid(qerr.CodeInvalidColumn, "dataset %q has no column %q", id, name).
				With("suggestions", qerr.Suggest(name, names, 3)).
				WithHint("column names are case-sensitive; call get_catalog to see the dataset's columns")
		}
		idx[i] = fi[0]
	}
	return idx, nil
}

// SourceOpenError is the error of a Source that cannot open the file of
// dataset id when a scan starts.
func SourceOpenError(id string, err error) error {
	var qe *qerr.Error
	if errors.As(err, &qe) { // refused by FileInfo.Open
		return err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return qerr.NotFound(qerr.CodeDatasetNotFound, "the file of dataset %q no longer exists", id).
			WithHint("call get_catalog to see the current datasets").Wrap(err)
	}
	return qerr.Internal(err, "cannot open the file of dataset %q", id)
}

// ErrFileChanged: a source file was truncated, rewritten or grew while a
// scan was reading it (the chunk readers' error, catalog/internal/chunk).
var ErrFileChanged = chunk.ErrFileChanged

// FileChangedError is the error of a scan whose file changed under it
// (cause wraps ErrFileChanged): dataset_not_found, since the version the
// catalog listed is gone, with diagnostics "changed": true and a hint to
// retry (the next query reads the file as it is then).
func FileChangedError(id string, cause error) *qerr.Error {
	return qerr.NotFound(qerr.CodeDatasetNotFound, "the file of dataset %q changed while it was being read", id).
		With("changed", true).WithHint("retry the query: it will read the file as it is now").Wrap(cause)
}

// MultiCloser closes every closer it holds, joining their errors.
type MultiCloser []io.Closer

func (m MultiCloser) Close() error {
	var errs []error
	for _, c := range m {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
