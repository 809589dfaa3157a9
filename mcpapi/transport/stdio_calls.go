package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// maxStdioCalls bounds the tool calls running at once over stdio; more
// wait for a slot without blocking the input loop, so requests that wait
// on the user (elicitation) or a slow query never hold up the others.
const maxStdioCalls = 16

// stdioCalls runs the requests of a stdio session (every message with a
// method and an id) and writes their responses, tool results with
// appendMessage, in place of mcp-go's stdio worker pool (which serializes
// every response with json.Marshal) and its goroutine per other request
// (which bounds nothing). Each request runs on its own goroutine under the
// session context mcp-go's stdio server built (so elicitation, logging,
// progress and notifications/cancelled work as for its own calls), tool
// calls in one of maxStdioCalls slots, other requests in one of
// maxStdioOthers (subscriptions/listen in none); at most maxStdioPending
// run or wait (stdio_bounds.go). Responses are whole-line writes on the
// shared writer. Input ending cancels the requests still running, as
// mcp-go does.
type stdioCalls struct {
	srv    *server.MCPServer
	out    io.Writer
	log    *slog.Logger
	slots  chan struct{} // tool calls
	others chan struct{} // other requests

	ready  chan struct{} // closed by start
	done   chan struct{} // closed by stop
	ctx    context.Context
	cancel context.CancelFunc

	startOnce sync.Once
	mu        sync.Mutex // guards stopped against wg.Add after Wait began, and pending
	stopped   bool
	pending   int // requests running or waiting for a slot
	wg        sync.WaitGroup
}

func newStdioCalls(srv *server.MCPServer, out io.Writer, log *slog.Logger) *stdioCalls {
	return &stdioCalls{srv: srv, out: out, log: log, slots: make(chan struct{}, maxStdioCalls),
		others: make(chan struct{}, maxStdioOthers), ready: make(chan struct{}), done: make(chan struct{})}
}

// start sets the session context the calls run under (once).
func (c *stdioCalls) start(session context.Context) {
	c.startOnce.Do(func() {
		c.ctx, c.cancel = context.WithCancel(session)
		close(c.ready)
	})
}

// offer takes line if it is a request (a method and an id), reporting
// whether it did. A request beyond maxStdioPending is answered at once
// with a too_many_requests error.
func (c *stdioCalls) offer(line []byte) bool {
	var env struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &env) != nil || env.Method == "" || len(env.ID) == 0 {
		return false
	}
	var lane chan struct{}
	switch env.Method {
	case string(mcp.MethodToolsCall):
		lane = c.slots
	case string(mcp.MethodSubscriptionsListen): // held open while the client listens
	default:
		lane = c.others
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return false
	}
	busy := c.pending >= maxStdioPending
	if !busy {
		c.pending++
		c.wg.Go(func() { c.run(line, env.ID, lane) })
	}
	c.mu.Unlock()
	if busy {
		msg := fmt.Sprintf("too many requests in flight (%d): wait for answers before sending more", maxStdioPending)
		if _, err := c.out.Write(rpcErrorBody(env.ID, rpcServerError, msg, &guardData{Code: codeTooManyInFlight})); err != nil && !errors.Is(err, ErrClientStoppedReading) {
			c.log.Warn("writing a too_many_requests response", "err", err)
		}
	}
	return true
}

// run serves one request once the session has started, in a slot of lane
// (none if nil). The request stops counting as pending once it has run,
// before its response is written (the slot bounds those), so a client that
// got a response may send another.
func (c *stdioCalls) run(line []byte, id json.RawMessage, lane chan struct{}) {
	ran := sync.OnceFunc(func() {
		c.mu.Lock()
		c.pending--
		c.mu.Unlock()
	})
	defer ran()
	// A call offered before stop runs once the session has started, even
	// when stop has come since (ready and done both closed: a two-way
	// select would pick either at random and drop the call unanswered).
	select {
	case <-c.ready:
	default:
		select {
		case <-c.ready:
		case <-c.done:
			return // the server stopped before the session started
		}
	}
	if lane != nil {
		lane <- struct{}{}
		defer func() { <-lane }()
	}
	msg := c.handle(line, id)
	ran()
	if msg == nil {
		return
	}
	if _, err := c.out.Write(msg); err != nil && !errors.Is(err, ErrClientStoppedReading) { // that is logged once
		c.log.Error("writing a response", "err", err)
	}
}

// handle runs the call and returns its response line (nil for none).
func (c *stdioCalls) handle(line []byte, id json.RawMessage) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic in a stdio tool call", "panic", fmt.Sprint(r))
			out = rpcErrorBody(id, mcp.INTERNAL_ERROR, "internal error", nil)
		}
	}()
	if b := hugeNumberResponse(line); b != nil {
		return b // mcp-go could not decode the arguments
	}
	resp := c.srv.HandleMessage(c.ctx, line)
	if resp == nil {
		return nil
	}
	b, err := appendMessage(nil, resp)
	if err != nil {
		c.log.Error("encoding a tool call response", "err", err)
		return rpcErrorBody(id, mcp.INTERNAL_ERROR, "internal error: the response could not be encoded", nil)
	}
	return append(b, '\n')
}

// inputClosed cancels the calls still running: the client is gone.
func (c *stdioCalls) inputClosed() {
	select {
	case <-c.ready:
		c.cancel()
	default:
	}
}

// stop refuses new calls and waits for the running ones to write their
// responses.
func (c *stdioCalls) stop() {
	c.mu.Lock()
	if !c.stopped {
		c.stopped = true
		close(c.done)
	}
	c.mu.Unlock()
	c.inputClosed()
	c.wg.Wait()
}
