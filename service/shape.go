package service

import (
	"errors"
	"slices"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
)

// checkShape refuses a shape that is not one of materialize.Shapes.
func checkShape(shape string) error {
	if shape == "" || slices.Contains(materialize.Shapes, shape) {
		return nil
	}
	return qerr.Invalid(qerr.CodeInvalidArgument, "unknown shape %q", shape).With("field", "shape").
		With("suggestions", materialize.Shapes).
		WithHint("shape is records (default: [{col: value}]), columns ({col: [values]}) or csv (one CSV string)")
}

// applyShape lays out r's inline rows (data and preview) in shape. When
// csv cannot hold them typed (a list or object value), they stay records
// and a warning says so.
func applyShape(r *materialize.Result, shape string) error {
	if r == nil || shape == "" || shape == materialize.ShapeRecords {
		return nil
	}
	data, err := materialize.Reshape(r.Data, shape)
	if err == nil {
		var preview []byte
		preview, err = materialize.Reshape(r.Preview, shape)
		r.Data, r.Preview = data, preview
	}
	switch {
	case errors.Is(err, materialize.ErrShapeNested):
		r.Warnings = append(r.Warnings, "shape csv: "+err.Error()+"; the rows are returned as records")
		return nil
	case err != nil:
		return qerr.Internal(err, "shaping the rows as %s", shape)
	}
	r.Shape = shape
	return nil
}

// shapeQuery applies shape to a delivered query response.
func shapeQuery(r *QueryResponse, err error, shape string) (*QueryResponse, error) {
	if err != nil || r == nil || r.Result == nil {
		return r, err
	}
	return r, applyShape(r.Result, shape)
}
