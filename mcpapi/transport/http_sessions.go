package transport

import (
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// codeSessionNotFound answers a request naming an Mcp-Session-Id that this
// server did not issue to the caller's principal, that was ended by DELETE,
// or that idled out (or was issued before a restart): HTTP 404, which tells
// a 2025-11-25 client to initialize a new session.
const codeSessionNotFound = "session_not_found"

// sessionOwners binds every legacy (2025-11-25) session to the principal
// whose initialize created it. mcp-go's default session-id manager neither
// remembers the ids it issued nor who they belong to, so without this a
// terminated session id kept working and one principal could name
// another's session (its log level, subscriptions, pending elicitations).
// Stateless 2026-07-28 requests carry no session id and are not affected.
type sessionOwners struct {
	ttl time.Duration

	mu sync.Mutex
	m  map[string]*sessionEntry
	// swept is when idle entries were last dropped.
	swept time.Time
}

// owns reports whether sid may be used by principal: sid is empty, or it was
// issued to principal and has not ended or idled out. A use refreshes it.
func (o *sessionOwners) owns(sid, principal string, now time.Time) bool {
	if sid == "" {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.m[sid]
	if e == nil {
		return false
	}
	if now.Sub(e.seen) > o.ttl {
		delete(o.m, sid)
		return false
	}
	if e.principal != principal {
		return false
	}
	e.seen = now
	return true
}

// bind records that principal's initialize was answered with sid.
func (o *sessionOwners) bind(sid, principal string, now time.Time) {
	if sid == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*sessionEntry{}
	}
	if now.Sub(o.swept) > o.ttl/4 {
		for id, e := range o.m {
			if now.Sub(e.seen) > o.ttl {
				delete(o.m, id)
			}
		}
		o.swept = now
	}
	o.m[sid] = &sessionEntry{principal: principal, seen: now}
}

// end forgets sid (DELETE).
func (o *sessionOwners) end(sid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, sid)
}

// checkSession answers 404 session_not_found and returns false when r
// names a session its principal does not own.
func (h *HTTPHandler) checkSession(w http.ResponseWriter, r *http.Request, principal string, info *requestInfo) bool {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if h.owners.owns(sid, principal, time.Now()) {
		return true
	}
	info.reject = codeSessionNotFound
	writeGuardError(w, http.StatusNotFound, rpcInvalidRequest, nil, codeSessionNotFound,
		"unknown, ended or expired session (Mcp-Session-Id); initialize a new session")
	return false
}
