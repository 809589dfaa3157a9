package flightsrc

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quarrydb/quarry/internal/qerr"
)

// remoteError turns the error of a call to remote r into a structured
// error with a stable code. parent is the caller's context: when it ended,
// its error is returned as it is (the query's timeout or cancellation);
// a call that ran out of the remote's own timeout is a timeout naming the
// remote. sql, when set, is the statement the remote refused.
func (r *Remote) remoteError(parent context.Context, what string, err error, sql string) error {
	if err == nil {
		return nil
	}
	if perr := parent.Err(); perr != nil {
		return perr
	}
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return err
	}
	msg := err.Error()
	code := codes.Unknown
	if st, ok := status.FromError(err); ok {
		code, msg = st.Code(), st.Message()
	} else if errors.Is(err, context.DeadlineExceeded) {
		code = codes.DeadlineExceeded
	}
	if dl, ok := parent.Deadline(); ok && code == codes.DeadlineExceeded && time.Until(dl) < deadlineSlack {
		// The caller's deadline, which the server (or the transport)
		// reported a moment before the caller's own timer fired.
		return context.DeadlineExceeded
	}
	name := r.cfg.Name
	switch code {
	case codes.Unavailable:
		return qerr.NotFound(qerr.CodeRemoteUnavailable, "the Flight SQL remote %q (%s) cannot be reached (%s): %s", name, r.cfg.URI, what, short(msg)).
			With("remote", name).
			WithHint("the remote is down or its [[flightsql]] uri is wrong; datasets of the data root and other remotes still work").Wrap(err)
	case codes.Unauthenticated, codes.PermissionDenied:
		return qerr.New(qerr.ErrPermission, qerr.CodeRemoteAuthFailed, "the Flight SQL remote %q refused the credentials (%s): %s", name, what, short(msg)).
			With("remote", name).
			WithHint("the server's operator must fix token_file/token_env or user/password_* of this remote").Wrap(err)
	case codes.DeadlineExceeded:
		return qerr.Limit(qerr.CodeTimeout, "the Flight SQL remote %q did not answer within %s (%s)", name, r.cfg.timeout(), what).
			With("remote", name).
			WithHint("retry later, or ask the server's operator to raise the remote's timeout").Wrap(err)
	case codes.Canceled:
		return qerr.As(context.Canceled)
	}
	e := qerr.Unsupported(qerr.CodeRemoteError, "the Flight SQL remote %q failed (%s): %s", name, what, short(msg)).
		With("remote", name).With("grpc_code", code.String()).
		WithHint("the remote could not run the query Quarry sent it; query the dataset with fewer filters or report it to the server's operator")
	if sql != "" {
		e = e.With("remote_sql", sql)
	}
	return e.Wrap(err)
}

// deadlineSlack: a DeadlineExceeded this close to the caller's deadline
// is the caller's.
const deadlineSlack = 100 * time.Millisecond

// short keeps a remote's message to one line of at most 300 bytes.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
