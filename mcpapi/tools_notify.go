package mcpapi

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/service"
)

// notice is one message for the user, sent as notifications/message.
type notice struct {
	level mcp.LoggingLevel
	text  string
}

// maxNotices bounds the notifications one call sends.
const maxNotices = 10

// sendNotices sends notices as notifications/message (logger "quarry").
// mcp-go drops those below the level the client set (logging/setLevel, or
// per request from protocol 2026-07-28 on). Best effort: errors are ignored.
func sendNotices(ctx context.Context, tool string, ns []notice) {
	srv := server.ServerFromContext(ctx)
	if srv == nil || len(ns) == 0 {
		return
	}
	if len(ns) > maxNotices {
		rest := len(ns) - maxNotices + 1
		ns = append(ns[:maxNotices-1:maxNotices-1], notice{ns[maxNotices-1].level, fmt.Sprintf("... and %d more", rest)})
	}
	for _, n := range ns {
		_ = srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(n.level, "quarry",
			map[string]any{"message": n.text, "tool": tool, "request_id": obs.RequestID(ctx)}))
	}
}

func catalogNotices(c *service.CatalogResponse) []notice {
	var out []notice
	for _, d := range c.Diagnostics {
		lv := mcp.LoggingLevelWarning
		if d.Level == "error" {
			lv = mcp.LoggingLevelError
		}
		out = append(out, notice{lv, fmt.Sprintf("skipped %s: %s", d.Path, d.Reason)})
	}
	return out
}

func estimateNotices(e *service.EstimateResponse) []notice {
	var out []notice
	for _, w := range e.Warnings {
		out = append(out, notice{mcp.LoggingLevelInfo, w})
	}
	return out
}

func resultNotices(r *materialize.Result) []notice {
	if r == nil {
		return nil
	}
	var out []notice
	if r.Truncated {
		out = append(out, notice{mcp.LoggingLevelNotice, fmt.Sprintf("result truncated: %d of %d rows delivered (method %s); the rest via query_next_page",
			r.RowCount, r.TotalRows, r.Method)})
	}
	for _, w := range r.Warnings {
		out = append(out, notice{mcp.LoggingLevelInfo, w})
	}
	return out
}

func queryNotices(r *service.QueryResponse) []notice {
	if r == nil {
		return nil
	}
	if r.Status == service.StatusNeedsConfirmation {
		return []notice{{mcp.LoggingLevelNotice, "query not run: " + r.Hint}}
	}
	return resultNotices(r.Result)
}

// withProgress makes the service report scan progress as
// notifications/progress when the request carries a progress token. The
// reported progress only grows: a call that scans twice (a size check,
// then the query) adds the scans up.
func withProgress(ctx context.Context, req mcp.CallToolRequest) context.Context {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return ctx
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return ctx
	}
	token := req.Params.Meta.ProgressToken
	var (
		mu             sync.Mutex
		base, lastDone int64
		lastSent       int64 = -1
	)
	return service.WithProgress(ctx, func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if done < lastDone { // a new scan started
			base += lastDone
		}
		lastDone = done
		p := base + done
		if p <= lastSent {
			return
		}
		lastSent = p
		params := map[string]any{"progressToken": token, "progress": p,
			"message": fmt.Sprintf("scanned %s rows", groupDigits(done))}
		if total > 0 {
			params["total"] = base + total
			params["message"] = fmt.Sprintf("scanned %s of %s rows", groupDigits(done), groupDigits(total))
		}
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", params)
	})
}
