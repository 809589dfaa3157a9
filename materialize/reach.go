package materialize

import (
	"context"
	"errors"
	"fmt"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
)

// ReadFileHint ends the warning of every file result: how a model reaches
// the file's rows through tools (clients such as Claude Desktop do not let
// the model call resources/read itself).
const ReadFileHint = "read its rows with the read_result tool (resource_uri), or copy it to the export directory with export"

// MethodPage: Result.Data is one page of a file result read back as rows
// (read_result on a resource_uri); page_info.page_token continues it.
const MethodPage = "page"

// PageRows is the number of rows one read_result page of a file asks for
// (the server's page size); the page may hold fewer to fit the byte and
// cell caps.
func (m *Materializer) PageRows() int64 { return m.hard.PageRows }

// VerifyFilePage checks a page token of the file uri (signed by FilePage)
// and returns the row offset it continues at.
func (m *Materializer) VerifyFilePage(token, uri string) (int64, error) {
	if m.handles == nil {
		return 0, qerr.Internal(errors.New("materialize: no handle registry configured"), "page tokens are not available")
	}
	tok, err := m.handles.Verify(token, uri)
	if err != nil {
		return 0, err
	}
	if tok.Offset < 0 {
		return 0, invalidToken("the page token is malformed")
	}
	return tok.Offset, nil
}

// FilePage encodes t, rows [offset, offset+t.NumRows()) of the file uri
// holding total rows, as one page: the longest prefix within the inline
// caps (at least one row), with page_info and, when rows remain, a page
// token for the next page, signed like handle page tokens and bound to uri.
func (m *Materializer) FilePage(ctx context.Context, uri string, t *Table, offset, total int64) (*Result, error) {
	if m.handles == nil {
		return nil, qerr.Internal(errors.New("materialize: no handle registry configured"), "page tokens are not available")
	}
	c := m.hard
	pg, err := m.page(ctx, t, 0, c.PageRows, c.MaxBytes, c.MaxCells, c.MaxCellChars)
	if err != nil {
		return nil, err
	}
	next := offset + pg.rows
	pi := &PageInfo{Offset: offset, Size: pg.rows, HasMore: next < total}
	res := &Result{
		Method: MethodPage, Data: pg.data, RowCount: pg.rows, TotalRows: total, Truncated: pi.HasMore,
		ResourceURI: uri, Format: FormatJSON, PageInfo: pi, Warnings: pg.warnings,
	}
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	if pi.HasMore {
		pi.PageToken = m.handles.Sign(handles.Token{Handle: uri, Offset: next, Size: c.PageRows, Format: FormatJSON})
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"showing rows %d–%d of %d; call read_result with resource_uri and page_info.page_token for the next page",
			offset+1, next, total))
	}
	return res, nil
}

// HandleFile writes the whole result behind handleID as a file of format
// (csv, parquet or arrow): the file result query_data would have given.
func (m *Materializer) HandleFile(ctx context.Context, handleID, format, principal string) (*Result, error) {
	if m.handles == nil {
		return nil, qerr.Internal(errors.New("materialize: no handle registry configured"), "result handles are not available")
	}
	t, err := m.handles.Get(handleID, principal)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	return m.Deliver(ctx, t, Request{Format: format, Principal: principal})
}
