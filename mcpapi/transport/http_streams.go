package transport

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"
)

// Slow clients and open streams. A client that stops reading (its TCP
// window full) would otherwise block the server's writes forever, pinning
// the request's goroutine and everything its response holds; and a client
// opening listening streams (GET /mcp, server-sent events) without end
// would pin one goroutine and session state each.

// Defaults of the stream limits (see HTTPOptions).
const (
	// DefaultWriteTimeout is how long one write to a client (a response
	// body, an SSE event, a flush) may block before the request is ended.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxStreams is the open listening streams (GET /mcp) of one
	// principal.
	DefaultMaxStreams = 4
)

// codeTooManyStreams is the rejection of a listening stream beyond
// HTTPOptions.MaxStreams.
const codeTooManyStreams = "too_many_streams"

// deadlineWriter arms a write deadline of d on the connection before every
// Write and Flush, so a write to a client that stopped reading fails after
// d instead of blocking; the request then ends and its memory is freed.
// The first stall is logged once.
type deadlineWriter struct {
	http.ResponseWriter
	rc     *http.ResponseController
	d      time.Duration
	log    *slog.Logger
	mu     sync.Mutex
	logged bool
}

func newDeadlineWriter(w http.ResponseWriter, d time.Duration, log *slog.Logger) *deadlineWriter {
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d, log: log}
	dw.arm()
	return dw
}

// arm sets the connection's write deadline d from now (also called when
// the handler returns, for the server's final flush of the response).
func (w *deadlineWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

// Write implements http.ResponseWriter.
func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.arm()
	n, err := w.ResponseWriter.Write(p)
	w.stalled(err)
	return n, err
}

// Flush implements http.Flusher (mcp-go streams SSE only through one).
func (w *deadlineWriter) Flush() {
	w.arm()
	w.stalled(w.rc.Flush())
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// stalled logs, once per request, a write that failed on its deadline.
func (w *deadlineWriter) stalled(err error) {
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.logged {
		w.logged = true
		w.log.Warn("client stopped reading: a write blocked longer than the write timeout; dropping the request or stream",
			"write_timeout", w.d.String())
	}
}

// streamSlots counts the open listening streams of each principal
// (principals come from configuration plus anonymous: the map is bounded).
type streamSlots struct {
	max  int // <= 0: unlimited
	mu   sync.Mutex
	open map[string]int
}

// acquire takes a stream slot of principal without waiting; the caller
// must call release when the stream ends.
func (s *streamSlots) acquire(principal string) bool {
	if s.max <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[principal] >= s.max {
		return false
	}
	if s.open == nil {
		s.open = map[string]int{}
	}
	s.open[principal]++
	return true
}

func (s *streamSlots) release(principal string) {
	if s.max <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[principal]--; s.open[principal] <= 0 {
		delete(s.open, principal)
	}
}

// DefaultMaxSessions is the live legacy (2025-11-25) MCP sessions of one
// principal (see HTTPOptions.MaxSessions).
const DefaultMaxSessions = 64

// codeTooManySessions is the rejection of an initialize beyond
// HTTPOptions.MaxSessions.
const codeTooManySessions = "too_many_sessions"

// sessionTable counts the live legacy sessions of each principal: a
// session is added when an initialize answer carries its Mcp-Session-Id,
// touched by every request naming it, and dropped on DELETE or once idle
// for longer than the transport keeps it (ttl).
type sessionTable struct {
	max int // <= 0: unlimited
	ttl time.Duration

	mu    sync.Mutex
	byID  map[string]*sessionEntry
	count map[string]int
}

type sessionEntry struct {
	principal string
	seen      time.Time
}

// full reports whether principal already holds max live sessions (after
// dropping the idle ones).
func (s *sessionTable) full(principal string, now time.Time) bool {
	if s.max <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.byID {
		if now.Sub(e.seen) > s.ttl {
			s.dropLocked(id)
		}
	}
	return s.count[principal] >= s.max
}

func (s *sessionTable) add(id, principal string, now time.Time) {
	if s.max <= 0 || id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID, s.count = map[string]*sessionEntry{}, map[string]int{}
	}
	if _, ok := s.byID[id]; ok {
		return
	}
	s.byID[id] = &sessionEntry{principal: principal, seen: now}
	s.count[principal]++
}

func (s *sessionTable) touch(id string, now time.Time) {
	if s.max <= 0 || id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.byID[id]; e != nil {
		e.seen = now
	}
}

func (s *sessionTable) remove(id string) {
	if s.max <= 0 || id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(id)
}

func (s *sessionTable) dropLocked(id string) {
	e := s.byID[id]
	if e == nil {
		return
	}
	delete(s.byID, id)
	if s.count[e.principal]--; s.count[e.principal] <= 0 {
		delete(s.count, e.principal)
	}
}

// isInitialize reports whether a JSON-RPC message is an initialize
// request, and its id.
func isInitialize(body []byte) (bool, json.RawMessage) {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "initialize" {
		return false, nil
	}
	return true, m.ID
}
