package flightsql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/service"
)

// handlePrefix starts every statement handle this server issues.
var handlePrefix = []byte("quarry.sql.v1:")

// stmtHandle is what a statement handle or ticket carries: the statement
// and its bound parameter values. Handles are stateless, so any Quarry
// serving the same catalog answers them and nothing is kept per client.
type stmtHandle struct {
	SQL    string `json:"sql"`
	Params []any  `json:"params,omitempty"`
}

func encodeHandle(h stmtHandle) ([]byte, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "invalid_argument: parameter values cannot be encoded: %v", err)
	}
	return append(bytes.Clone(handlePrefix), b...), nil
}

func decodeHandle(b []byte) (stmtHandle, error) {
	var h stmtHandle
	rest, ok := bytes.CutPrefix(b, handlePrefix)
	if ok {
		dec := json.NewDecoder(bytes.NewReader(rest))
		dec.UseNumber() // keep integers exact
		if err := dec.Decode(&h); err == nil {
			return h, nil
		}
	}
	return h, status.Error(codes.InvalidArgument, "invalid_argument: not a statement handle or ticket of this server")
}

// noTransactions refuses a command inside a transaction (none exist).
func noTransactions(id []byte) error {
	if len(id) > 0 {
		return errReadOnly
	}
	return nil
}

// prepare plans a statement through the service.
func (s *Server) prepare(ctx context.Context, h stmtHandle) (*service.SQLStatement, error) {
	st, err := s.svc.PrepareSQLStatement(ctx, h.SQL, h.Params)
	if err != nil {
		return nil, toStatus(err)
	}
	return st, nil
}

// GetFlightInfoStatement plans the query (errors surface at Execute) and
// returns a ticket carrying it.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd fsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if err := noTransactions(cmd.GetTransactionId()); err != nil {
		return nil, err
	}
	h := stmtHandle{SQL: cmd.GetQuery()}
	st, err := s.prepare(ctx, h)
	if err != nil {
		return nil, err
	}
	handle, err := encodeHandle(h)
	if err != nil {
		return nil, err
	}
	tkt, err := fsql.CreateStatementQueryTicket(handle)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "internal: %v", err)
	}
	s.plans.put(planKey(obs.Principal(ctx), handle), st)
	return s.flightInfo(desc, plainSchema(st), tkt), nil
}

// GetSchemaStatement returns the schema of a query's rows without running it.
func (s *Server) GetSchemaStatement(ctx context.Context, cmd fsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if err := noTransactions(cmd.GetTransactionId()); err != nil {
		return nil, err
	}
	return s.schemaOf(ctx, stmtHandle{SQL: cmd.GetQuery()})
}

// schemaOf plans h and returns the schema of its rows.
func (s *Server) schemaOf(ctx context.Context, h stmtHandle) (*flight.SchemaResult, error) {
	st, err := s.prepare(ctx, h)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(plainSchema(st), s.alloc)}, nil
}

// DoGetStatement runs the query of a ticket and streams its rows.
func (s *Server) DoGetStatement(ctx context.Context, tkt fsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if st := s.plans.take(planKey(obs.Principal(ctx), tkt.GetStatementHandle())); st != nil {
		return s.stream(ctx, st)
	}
	h, err := decodeHandle(tkt.GetStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	return s.run(ctx, h)
}

// CreatePreparedStatement checks and plans the statement. Its parameters
// are $1, $2, ...; their types come from the values bound (the parameter
// schema is left open). A statement that needs parameters to plan has no
// dataset schema until they are bound.
func (s *Server) CreatePreparedStatement(ctx context.Context, req fsql.ActionCreatePreparedStatementRequest) (fsql.ActionCreatePreparedStatementResult, error) {
	var res fsql.ActionCreatePreparedStatementResult
	if err := noTransactions(req.GetTransactionId()); err != nil {
		return res, err
	}
	h := stmtHandle{SQL: req.GetQuery()}
	st, err := s.svc.PrepareSQLStatement(ctx, h.SQL, nil)
	switch {
	case err == nil:
		res.DatasetSchema = plainSchema(st)
	case !needsParams(err):
		return res, toStatus(err)
	}
	if res.Handle, err = encodeHandle(h); err != nil {
		return res, err
	}
	isUpdate := false
	res.IsUpdate = &isUpdate
	return res, nil
}

// needsParams reports whether err says a $n parameter has no value.
func needsParams(err error) bool {
	var qe *qerr.Error
	return errors.As(err, &qe) && qe.Code == qerr.CodeInvalidArgument && qe.Diagnostics["field"] == "params"
}

// ClosePreparedStatement has nothing to release: handles are stateless.
func (s *Server) ClosePreparedStatement(context.Context, fsql.ActionClosePreparedStatementRequest) error {
	return nil
}

// DoPutPreparedStatementQuery binds parameter values: column i of the
// client's one-row batch is $i+1. It returns the new handle, carrying
// the statement and the values.
func (s *Server) DoPutPreparedStatementQuery(ctx context.Context, cmd fsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	h, err := decodeHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	h.Params = nil
	rows := int64(0)
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		rows += rec.NumRows()
		if rows > 1 {
			return nil, status.Error(codes.InvalidArgument, "invalid_argument: bind one row of parameter values per execution (batches of parameter rows are not supported)")
		}
		if h.Params, err = paramValues(rec); err != nil {
			return nil, err
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "invalid_argument: reading the parameter batch: %v", err)
	}
	if _, err := s.prepare(ctx, h); err != nil {
		return nil, err
	}
	return encodeHandle(h)
}

// GetFlightInfoPreparedStatement plans the statement with its bound
// values; the ticket is the command itself.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	h, err := decodeHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	st, err := s.prepare(ctx, h)
	if err != nil {
		return nil, err
	}
	return s.flightInfo(desc, plainSchema(st), desc.Cmd), nil
}

// GetSchemaPreparedStatement returns the schema of the statement's rows.
func (s *Server) GetSchemaPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	h, err := decodeHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	return s.schemaOf(ctx, h)
}

// DoGetPreparedStatement runs the statement with its bound values.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd fsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	h, err := decodeHandle(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	return s.run(ctx, h)
}

// guarded runs fn, turning a panic into the Internal status (the
// streaming goroutine is outside the interceptors' recover).
func guarded(ctx context.Context, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicStatus(ctx, p)
		}
	}()
	return fn()
}

// plainSchema is the schema of st's rows as the facade sends them
// (materialize.Plainer: no dictionaries, unique names).
func plainSchema(st *service.SQLStatement) *arrow.Schema {
	return materialize.NewPlainer(st.Schema()).Schema()
}

// run plans h and streams its rows: the engine's record batches go to
// the channel as they are produced; the call's context (cancelled when
// the client goes away) stops the query.
func (s *Server) run(ctx context.Context, h stmtHandle) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	st, err := s.prepare(ctx, h)
	if err != nil {
		return nil, nil, err
	}
	return s.stream(ctx, st)
}

// stream runs st and streams its rows.
func (s *Server) stream(ctx context.Context, st *service.SQLStatement) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	start := time.Now()
	ch := make(chan flight.StreamChunk, 1)
	schemac := make(chan *arrow.Schema, 1)
	failc := make(chan error, 1)
	go func() {
		defer close(ch)
		started := false
		var rows, batches int64
		err := guarded(ctx, func() error {
			return st.Stream(ctx, func(ctx context.Context, rr array.RecordReader) error {
				started = true
				plain := materialize.NewPlainer(rr.Schema())
				schemac <- plain.Schema()
				for rr.Next() {
					rec, err := plain.Batch(ctx, rr.RecordBatch())
					if err != nil {
						return err
					}
					select {
					case ch <- flight.StreamChunk{Data: rec}:
						rows += rec.NumRows()
						batches++
					case <-ctx.Done():
						rec.Release()
						return ctx.Err()
					}
				}
				return rr.Err()
			})
		})
		log := obs.Logger(ctx)
		if !started {
			if err == nil {
				err = errors.New("the query produced no reader")
			}
			failc <- toStatus(err)
			return
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			err = toStatus(err)
			log.Info("flightsql query", "rows", rows, "batches", batches, "ms", ms, "code", status.Code(err).String())
			select {
			case ch <- flight.StreamChunk{Err: err}:
			case <-ctx.Done():
			}
			return
		}
		log.Info("flightsql query", "rows", rows, "batches", batches, "ms", ms, "code", "OK")
	}()
	select {
	case sc := <-schemac:
		return sc, ch, nil
	case err := <-failc:
		return nil, nil, err
	}
}
