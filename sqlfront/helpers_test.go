package sqlfront

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// schemas is a small catalog of dataset schemas for the package tests
// (the service's catalog adapter is tested end to end in e2e).
type schemas map[string]*arrow.Schema

func (s schemas) Input(_ context.Context, name string) (planner.Input, error) {
	if sc, ok := s[name]; ok {
		return planner.Input{Dataset: name, Schema: sc, RowCount: 100, RowCountExact: true}, nil
	}
	for id, sc := range s {
		if strings.HasSuffix(id, "/"+name) {
			return planner.Input{Dataset: id, Schema: sc, RowCount: 100, RowCountExact: true}, nil
		}
	}
	return planner.Input{}, qerr.NotFound(qerr.CodeDatasetNotFound, "dataset %q not found", name)
}

func field(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

var testCatalog = schemas{
	"shop/orders": arrow.NewSchema([]arrow.Field{
		field("id", arrow.PrimitiveTypes.Int64), field("customer", arrow.PrimitiveTypes.Int64),
		field("region", arrow.BinaryTypes.String), field("qty", arrow.PrimitiveTypes.Int64),
		field("price", arrow.PrimitiveTypes.Float64), field("day", arrow.FixedWidthTypes.Date32),
	}, nil),
	"shop/customers": arrow.NewSchema([]arrow.Field{
		field("id", arrow.PrimitiveTypes.Int64), field("name", arrow.BinaryTypes.String), field("country", arrow.BinaryTypes.String),
	}, nil),
}

// compile parses and lowers sql over testCatalog and returns the optimized plan text.
func compile(sql string, params ...any) (string, error) {
	st, err := Parse(sql)
	if err != nil {
		return "", err
	}
	c, err := st.Compile(context.Background(), testCatalog, params)
	if err != nil {
		return "", err
	}
	p, err := planner.Optimize(c.Plan, planner.OptimizeOptions{})
	if err != nil {
		return "", err
	}
	return planner.String(p), nil
}
