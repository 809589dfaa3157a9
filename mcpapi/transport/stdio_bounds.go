package transport

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// A stdio client that stops reading.
//
// Over stdio the server writes to one pipe that only the client drains. A
// client that keeps sending requests but stops reading its output would,
// left alone, make the server hold every response it cannot write and a
// goroutine per request it keeps reading. Three bounds prevent that:
//
//   - at most maxStdioCalls tool calls and maxStdioOthers other requests
//     run at once (stdioCalls), so at most that many responses wait to be
//     written;
//   - at most maxStdioPending requests are running or waiting for a slot;
//     one more is answered at once with a JSON-RPC error (code
//     too_many_requests), without being run;
//   - one write to the client may block for StdioOptions.WriteTimeout
//     (default 30 s, DefaultWriteTimeout): then the session is ended, as for
//     a client that closed its input, with one log line ("client stopped
//     reading"); every later write fails at once, the running calls are
//     cancelled, and ServeStdioWith returns ErrClientStoppedReading (quarry
//     serve exits with it).

// maxStdioPending bounds the requests of a stdio session that are running
// or waiting for a slot.
const maxStdioPending = 256

// maxStdioOthers bounds the requests other than tool calls (resources/read,
// lists, ping, ...) running at once over stdio; subscriptions/listen,
// which lasts as long as the client listens, takes no slot.
const maxStdioOthers = 16

// ErrClientStoppedReading is ServeStdioWith's error when one write to the
// client blocked for longer than the write timeout.
var ErrClientStoppedReading = errors.New("the client stopped reading its input: a write to it blocked for longer than the write timeout")

// StdioOptions configures ServeStdioWith. The zero value means defaults.
type StdioOptions struct {
	// Logger receives the transport's logs; nil => slog.Default().
	Logger *slog.Logger
	// WriteTimeout is how long one write to the client (a whole message)
	// may block before the session is ended; 0 => DefaultWriteTimeout.
	WriteTimeout time.Duration
}

// stdioWriter writes whole messages to w one at a time (the writes of
// mcp-go's stdio server, of stdioCalls and of filterStdio), each bounded by
// a timeout. The write itself runs on the writer's own goroutine, on a copy
// of the message, so a caller never waits longer than the timeout; after a
// write timed out every write fails at once with ErrClientStoppedReading
// (the one that blocked is abandoned and its goroutine stays parked until
// the process exits or the client reads again).
type stdioWriter struct {
	mu      sync.Mutex // one message at a time; guards closed
	timeout time.Duration
	work    chan []byte
	result  chan writeResult
	closed  bool
	stalled atomic.Bool
	onStall func() // called once, on the first write that timed out
}

type writeResult struct {
	n   int
	err error
}

func newStdioWriter(w io.Writer, timeout time.Duration, onStall func()) *stdioWriter {
	d := &stdioWriter{timeout: timeout, work: make(chan []byte), result: make(chan writeResult, 1), onStall: onStall}
	go func() {
		for p := range d.work {
			n, err := w.Write(p)
			d.result <- writeResult{n, err}
		}
	}()
	return d
}

// Write writes p whole, or fails after the timeout.
func (d *stdioWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stalled.Load() {
		return 0, ErrClientStoppedReading
	}
	if d.closed {
		return 0, io.ErrClosedPipe
	}
	d.work <- append([]byte(nil), p...) // the caller may reuse p once Write returns
	t := time.NewTimer(d.timeout)
	defer t.Stop()
	select {
	case r := <-d.result:
		return r.n, r.err
	case <-t.C:
		d.stalled.Store(true)
		d.onStall()
		return 0, ErrClientStoppedReading
	}
}

// Stalled reports whether a write timed out.
func (d *stdioWriter) Stalled() bool { return d.stalled.Load() }

// Close makes later writes fail and lets the writer goroutine end (once its
// write in progress, if any, returns).
func (d *stdioWriter) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		close(d.work)
	}
}
