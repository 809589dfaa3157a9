// Package qerr owns Quarry's error vocabulary: a handful of error categories
// (wrapped with %w and tested with errors.Is) and the structured, model-facing
// error shape {error, code, hint, diagnostics} with a stable code.
//
// Every package returns errors built here (or wrapping one built here), so the
// MCP layer can turn any error into a structured tool error without parsing
// message text.
package qerr

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error categories. Every *Error wraps exactly one of them; callers test with
// errors.Is(err, qerr.ErrNotFound) and never compare message text.
var (
	// ErrInvalidArgument: the caller's input is wrong and can be fixed by the caller.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: the named dataset, column, handle or resource does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnsupported: the request is well formed but Quarry cannot do it (type, format, filter).
	ErrUnsupported = errors.New("unsupported")
	// ErrLimitExceeded: a size, memory, time or quota limit was hit.
	ErrLimitExceeded = errors.New("limit exceeded")
	// ErrExpired: a short-lived object (result handle, artifact) is gone.
	ErrExpired = errors.New("expired")
	// ErrPermission: the request touches something it may not (outside the data root, another principal's handle).
	ErrPermission = errors.New("permission denied")
	// ErrInternal: a bug or an unexpected I/O failure; not fixable by the caller.
	ErrInternal = errors.New("internal error")
)

// Stable error codes. They are part of the product contract (docs/TOOLS.md);
// never rename one.
const (
	CodeDatasetNotFound   = "dataset_not_found"
	CodeInvalidColumn     = "invalid_column"
	CodeInvalidFilter     = "invalid_filter"
	CodeInvalidAggregate  = "invalid_aggregate"
	CodeInvalidArgument   = "invalid_argument"
	CodeHandleExpired     = "handle_expired"
	CodeInvalidPageToken  = "invalid_page_token"
	CodeOversizeResult    = "oversize_result"
	CodeUnsupportedFormat = "unsupported_format"
	CodeResourceNotFound  = "resource_not_found"
	CodePathOutsideRoot   = "path_outside_root"
	CodeResourceExhausted = "resource_exhausted"
	CodeTimeout           = "timeout"
	CodeCancelled         = "cancelled"
	CodeInternal          = "internal"
	// CodeInvalidFilterToken: a pattern_filter token that is malformed,
	// tampered with, expired or for another dataset.
	CodeInvalidFilterToken = "invalid_filter_token"
	// HDF5 specific codes.
	CodeInvalidSlice      = "invalid_slice"
	CodeNotADataset       = "not_a_dataset"
	CodeDanglingLink      = "dangling_link"
	CodeUnsupportedType   = "unsupported_type"
	CodeUnsupportedFilter = "unsupported_filter"

	// SQL front-end codes (advanced_query): a statement or construct that
	// is not read-only catalog access, and a construct the dialect does not
	// support (yet). Both carry the offending fragment and its position.
	CodeForbiddenSQL   = "forbidden_sql"
	CodeUnsupportedSQL = "unsupported_sql"

	// CodeNotInBuild: the feature (HDF5, SQL) was left out of this binary
	// (a cgo-free or -tags nohdf5 build); diagnostics.feature names it.
	CodeNotInBuild = "not_in_build"
)

// Error is the structured error every Quarry API returns to the model.
// Its JSON form is exactly {error, code, hint?, diagnostics?}.
type Error struct {
	// Message is the human/LLM readable sentence (JSON "error").
	Message string `json:"error"`
	// Code is one of the stable Code* constants.
	Code string `json:"code"`
	// Hint says how to fix the call; empty when there is nothing to say.
	Hint string `json:"hint,omitempty"`
	// Diagnostics carries small structured detail (suggestions, shapes, limits).
	Diagnostics map[string]any `json:"diagnostics,omitempty"`
	// Category is the wrapped category (ErrInvalidArgument, ...). Not serialized.
	Category error `json:"-"`
	// Cause is an optional underlying error. Not serialized.
	Cause error `json:"-"`
}

// Error implements error.
func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return e.Code + ": " + e.Message
}

// Unwrap exposes both the category and the cause to errors.Is / errors.As.
func (e *Error) Unwrap() []error {
	out := make([]error, 0, 2)
	if e.Category != nil {
		out = append(out, e.Category)
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}

// WithHint returns e with Hint set (for chaining at construction).
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// With adds one diagnostics entry and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Diagnostics == nil {
		e.Diagnostics = map[string]any{}
	}
	e.Diagnostics[key] = value
	return e
}

// Wrap sets the cause and returns e.
func (e *Error) Wrap(cause error) *Error {
	e.Cause = cause
	return e
}

// New builds an *Error of the given category and code.
func New(category error, code, format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...), Code: code, Category: category}
}

// Invalid is New(ErrInvalidArgument, code, ...).
func Invalid(code, format string, args ...any) *Error {
	return New(ErrInvalidArgument, code, format, args...)
}

// NotFound is New(ErrNotFound, code, ...).
func NotFound(code, format string, args ...any) *Error {
	return New(ErrNotFound, code, format, args...)
}

// Unsupported is New(ErrUnsupported, code, ...).
func Unsupported(code, format string, args ...any) *Error {
	return New(ErrUnsupported, code, format, args...)
}

// Limit is New(ErrLimitExceeded, code, ...).
func Limit(code, format string, args ...any) *Error {
	return New(ErrLimitExceeded, code, format, args...)
}

// Internal wraps an unexpected error as code "internal".
func Internal(cause error, format string, args ...any) *Error {
	return New(ErrInternal, CodeInternal, format, args...).Wrap(cause)
}

// As returns the *Error in err's chain, or converts an unknown error into an
// internal one (context errors become cancelled/timeout). Never returns nil
// for a non-nil err.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, errDeadline()):
		return Limit(CodeTimeout, "the query took too long and was stopped").
			WithHint("narrow the query (filters, fewer columns, a limit) or raise the server's --query-timeout").Wrap(err)
	case errors.Is(err, errCanceled()):
		return New(ErrInvalidArgument, CodeCancelled, "the request was cancelled").Wrap(err)
	}
	return Internal(err, "internal error: %v", err)
}

// Code returns the stable code of err ("" for nil).
func Code(err error) string {
	if err == nil {
		return ""
	}
	return As(err).Code
}

// Suggest returns up to n candidates closest to name (case-insensitive
// Levenshtein distance, prefix/substring matches first), for did-you-mean hints.
func Suggest(name string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	ln := strings.ToLower(name)
	var all []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := EditDistance(ln, lc)
		if ln != "" && (strings.Contains(lc, ln) || strings.Contains(ln, lc)) {
			d = min(d, 1)
		}
		limit := max(2, len([]rune(name))/3)
		if d <= limit {
			all = append(all, scored{c, d})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].s < all[j].s
	})
	out := make([]string, 0, n)
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].s)
	}
	return out
}

// EditDistance is the Levenshtein distance between a and b in runes (one
// insertion, deletion or substitution each), the measure Suggest ranks by.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
