package flightsql

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quarrydb/quarry/internal/qerr"
)

// errReadOnly is the answer to every command that would change data or
// open a transaction.
var errReadOnly = status.Error(codes.PermissionDenied,
	"forbidden_sql: Quarry's Flight SQL service is read-only; updates, ingestion, substrait plans and transactions are refused (hint: run SELECT statements)")

// toStatus turns a Quarry error into a gRPC status: the code by category,
// the message "<quarry code>: <message> (hint: <hint>)". gRPC statuses
// pass through; anything else is Internal.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return status.Error(codes.Canceled, "cancelled: "+err.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return status.Error(codes.DeadlineExceeded, "timeout: "+err.Error())
	}
	var qe *qerr.Error
	if !errors.As(err, &qe) {
		return status.Error(codes.Internal, "internal: "+err.Error())
	}
	msg := qe.Code + ": " + qe.Message
	if qe.Hint != "" {
		msg += " (hint: " + qe.Hint + ")"
	}
	return status.Error(grpcCode(qe), msg)
}

func grpcCode(e *qerr.Error) codes.Code {
	switch e.Code {
	case qerr.CodeTimeout:
		return codes.DeadlineExceeded
	case qerr.CodeCancelled:
		return codes.Canceled
	case qerr.CodeForbiddenSQL:
		return codes.PermissionDenied
	case qerr.CodeNotInBuild:
		return codes.Unimplemented
	}
	switch {
	case errors.Is(e, qerr.ErrInvalidArgument), errors.Is(e, qerr.ErrUnsupported):
		return codes.InvalidArgument
	case errors.Is(e, qerr.ErrNotFound), errors.Is(e, qerr.ErrExpired):
		return codes.NotFound
	case errors.Is(e, qerr.ErrLimitExceeded):
		return codes.ResourceExhausted
	case errors.Is(e, qerr.ErrPermission):
		return codes.PermissionDenied
	}
	return codes.Internal
}
