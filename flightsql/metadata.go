package flightsql

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/materialize"
)

// tableType is the type of every dataset in GetTables.
const tableType = "TABLE"

// Catalogs and schemas: Quarry's tables are dataset ids ("weather/stations"),
// which the dialect takes unqualified, so there are neither catalogs nor
// database schemas; tables have null catalog and schema names.

// GetFlightInfoCatalogs answers with a ticket for the (empty) catalog list.
func (s *Server) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.flightInfo(desc, schema_ref.Catalogs, desc.Cmd), nil
}

// DoGetCatalogs streams no catalogs.
func (s *Server) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.batch(schema_ref.Catalogs, nil)
}

// GetFlightInfoSchemas answers with a ticket for the (empty) schema list.
func (s *Server) GetFlightInfoSchemas(_ context.Context, _ fsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.flightInfo(desc, schema_ref.DBSchemas, desc.Cmd), nil
}

// DoGetDBSchemas streams no schemas.
func (s *Server) DoGetDBSchemas(context.Context, fsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.batch(schema_ref.DBSchemas, nil)
}

// GetFlightInfoTableTypes answers with a ticket for the table types.
func (s *Server) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.flightInfo(desc, schema_ref.TableTypes, desc.Cmd), nil
}

// DoGetTableTypes streams the one table type.
func (s *Server) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.batch(schema_ref.TableTypes, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).Append(tableType)
	})
}

// GetFlightInfoTables answers with a ticket for the table list.
func (s *Server) GetFlightInfoTables(_ context.Context, cmd fsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	sc := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		sc = schema_ref.TablesWithIncludedSchema
	}
	return s.flightInfo(desc, sc, desc.Cmd), nil
}

// DoGetTables streams the datasets matching the filters (table name
// pattern with SQL LIKE wildcards, table types; a catalog or schema
// filter matches only the null/empty name), with their Arrow schemas
// when asked (as query results carry them: no dictionaries).
func (s *Server) DoGetTables(ctx context.Context, cmd fsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	tables, err := s.svc.Tables(ctx)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	keep := func(id string) bool {
		if c := cmd.GetCatalog(); c != nil && *c != "" {
			return false
		}
		if p := cmd.GetDBSchemaFilterPattern(); p != nil && !likeMatch(*p, "") {
			return false
		}
		if p := cmd.GetTableNameFilterPattern(); p != nil && !likeMatch(*p, id) {
			return false
		}
		if types := cmd.GetTableTypes(); len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return strings.EqualFold(t, tableType) }) {
			return false
		}
		return true
	}
	sc := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		sc = schema_ref.TablesWithIncludedSchema
	}
	return s.batch(sc, func(b *array.RecordBuilder) {
		for _, t := range tables {
			if !keep(t.ID) {
				continue
			}
			b.Field(0).AppendNull() // catalog_name
			b.Field(1).AppendNull() // db_schema_name
			b.Field(2).(*array.StringBuilder).Append(t.ID)
			b.Field(3).(*array.StringBuilder).Append(tableType)
			if cmd.GetIncludeSchema() {
				b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(materialize.NewPlainer(t.Schema).Schema(), s.alloc))
			}
		}
	})
}

// batch streams one batch of schema sc filled by fill (nil: no rows).
func (s *Server) batch(sc *arrow.Schema, fill func(*array.RecordBuilder)) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ch := make(chan flight.StreamChunk, 1)
	if fill != nil {
		b := array.NewRecordBuilder(s.alloc, sc)
		defer b.Release()
		fill(b)
		ch <- flight.StreamChunk{Data: b.NewRecordBatch()}
	}
	close(ch)
	return sc, ch, nil
}

// likeMatch reports whether s matches the SQL LIKE pattern p (% any run,
// _ one character, \ escapes), as Flight SQL's filter patterns are.
func likeMatch(p, s string) bool {
	ok, err := regexp.MatchString(funcs.LikeRegexp(p, false), s)
	return err == nil && ok
}
