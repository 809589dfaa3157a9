package flightsql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The facade is read-only: every command that would change data or open
// a transaction is refused with PermissionDenied (errReadOnly), and
// Substrait plans (not SQL) with Unimplemented.

var errSubstrait = status.Error(codes.Unimplemented, "unsupported_sql: Substrait plans are not supported; send SQL (CommandStatementQuery)")

// DoPutCommandStatementUpdate refuses updates.
func (s *Server) DoPutCommandStatementUpdate(context.Context, fsql.StatementUpdate) (int64, error) {
	return 0, errReadOnly
}

// DoPutPreparedStatementUpdate refuses prepared updates.
func (s *Server) DoPutPreparedStatementUpdate(context.Context, fsql.PreparedStatementUpdate, flight.MessageReader) (int64, error) {
	return 0, errReadOnly
}

// DoPutCommandStatementIngest refuses bulk ingestion.
func (s *Server) DoPutCommandStatementIngest(context.Context, fsql.StatementIngest, flight.MessageReader) (int64, error) {
	return 0, errReadOnly
}

// DoPutCommandSubstraitPlan refuses Substrait updates.
func (s *Server) DoPutCommandSubstraitPlan(context.Context, fsql.StatementSubstraitPlan) (int64, error) {
	return 0, errReadOnly
}

// BeginTransaction refuses transactions.
func (s *Server) BeginTransaction(context.Context, fsql.ActionBeginTransactionRequest) ([]byte, error) {
	return nil, errReadOnly
}

// EndTransaction refuses transactions.
func (s *Server) EndTransaction(context.Context, fsql.ActionEndTransactionRequest) error {
	return errReadOnly
}

// BeginSavepoint refuses savepoints.
func (s *Server) BeginSavepoint(context.Context, fsql.ActionBeginSavepointRequest) ([]byte, error) {
	return nil, errReadOnly
}

// EndSavepoint refuses savepoints.
func (s *Server) EndSavepoint(context.Context, fsql.ActionEndSavepointRequest) error {
	return errReadOnly
}

// GetFlightInfoSubstraitPlan refuses Substrait plans.
func (s *Server) GetFlightInfoSubstraitPlan(context.Context, fsql.StatementSubstraitPlan, *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return nil, errSubstrait
}

// GetSchemaSubstraitPlan refuses Substrait plans.
func (s *Server) GetSchemaSubstraitPlan(context.Context, fsql.StatementSubstraitPlan, *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	return nil, errSubstrait
}

// CreatePreparedSubstraitPlan refuses Substrait plans.
func (s *Server) CreatePreparedSubstraitPlan(context.Context, fsql.ActionCreatePreparedSubstraitPlanRequest) (fsql.ActionCreatePreparedStatementResult, error) {
	return fsql.ActionCreatePreparedStatementResult{}, errSubstrait
}
