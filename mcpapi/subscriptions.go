package mcpapi

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// watchEvery is how often subscribed resources are re-checked (mtime
// polling: a dataset's catalog entry carries its file's size, modification
// time and identity; the catalog card is re-scanned, which re-reads only
// changed files).
var watchEvery = 2 * time.Second

// resourceWatch delivers notifications/resources/updated: a session that
// subscribed (resources/subscribe, protocol 2025-11-25) to the catalog
// (quarry://catalog) or to a dataset's resource (quarry://datasets/{id}/
// schema, /catalog or /summary) is told when the underlying data changes:
// a file added, removed, rewritten or replaced for the catalog; the
// dataset's file rewritten, replaced or removed for a dataset. Other URIs
// (artifacts, result pages) never change and are never notified. The
// polling goroutine runs only while a subscription exists.
//
// 2026-07-28 clients subscribe with the resourceSubscriptions of a
// subscriptions/listen request instead and are told on that request's
// stream while it stays open. mcp-go v1.2.1 records such subscriptions only
// on sessions implementing server.SessionWithResourceSubscriptions, which
// its own ephemeral listen sessions do not: a hook takes the URIs and the
// stream's session from the request, and the updates are queued on that
// session (the transport tags them with the subscription id).
type resourceWatch struct {
	s   *server.MCPServer
	svc *service.Service

	mu         sync.Mutex
	subs       map[string]map[string]bool // subscriber -> subscribed URIs
	seen       map[string][32]byte        // URI -> fingerprint last seen
	listeners  map[string]server.ClientSession
	nextListen int
	running    bool
}

// watchResources registers the subscription hooks on hooks; s is set once
// the server exists.
func watchResources(hooks *server.Hooks, svc *service.Service) *resourceWatch {
	w := &resourceWatch{svc: svc, subs: map[string]map[string]bool{}, seen: map[string][32]byte{}, listeners: map[string]server.ClientSession{}}
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil && watchable(req.Params.URI) {
			w.add(sess.SessionID(), req.Params.URI)
		}
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			w.remove(sess.SessionID(), req.Params.URI)
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		w.remove(sess.SessionID(), "")
	})
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil {
			return
		}
		w.mu.Lock()
		w.nextListen++
		key := fmt.Sprintf("listen/%d", w.nextListen) // never a session id (those are UUIDs)
		w.listeners[key] = sess
		w.mu.Unlock()
		for _, uri := range req.Params.Notifications.ResourceSubscriptions {
			if watchable(uri) {
				w.add(key, uri)
			}
		}
		go func() { // the stream ends with its request
			<-ctx.Done()
			w.remove(key, "")
			w.mu.Lock()
			delete(w.listeners, key)
			w.mu.Unlock()
		}()
	})
	return w
}

// watchable reports whether uri names data that can change.
func watchable(uri string) bool {
	_, _, ok := service.ParseDatasetURI(uri)
	return ok || uri == service.CatalogURI
}

// fingerprint hashes what uri's data looks like now: the catalog card, or
// the dataset's catalog entry (file size, modification time), or the error
// reading it (a removed file).
func (w *resourceWatch) fingerprint(uri string) [32]byte {
	probe := uri
	if id, _, ok := service.ParseDatasetURI(uri); ok {
		probe = service.DatasetURI(id, service.ResourceCatalog)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, _, err := w.svc.ReadResource(ctx, probe)
	if err != nil {
		b = []byte("error: " + qerr.Code(err))
	}
	return sha256.Sum256(b)
}

func (w *resourceWatch) add(session, uri string) {
	fp := w.fingerprint(uri) // the state the subscriber knows
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs[session] == nil {
		w.subs[session] = map[string]bool{}
	}
	w.subs[session][uri] = true
	if _, ok := w.seen[uri]; !ok {
		w.seen[uri] = fp
	}
	if !w.running {
		w.running = true
		go w.loop()
	}
}

// remove drops session's subscription to uri ("": all of them).
func (w *resourceWatch) remove(session, uri string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if uri == "" {
		delete(w.subs, session)
	} else if m := w.subs[session]; m != nil {
		delete(m, uri)
		if len(m) == 0 {
			delete(w.subs, session)
		}
	}
}

// watched returns every subscribed URI with its subscribers; it stops the
// loop (returning nil) when there are none.
func (w *resourceWatch) watched() map[string][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]string{}
	for sess, uris := range w.subs {
		for uri := range uris {
			out[uri] = append(out[uri], sess)
		}
	}
	for uri := range w.seen {
		if out[uri] == nil {
			delete(w.seen, uri)
		}
	}
	if len(out) == 0 {
		w.running = false
		return nil
	}
	return out
}

func (w *resourceWatch) loop() {
	for {
		time.Sleep(watchEvery)
		uris := w.watched()
		if uris == nil {
			return
		}
		for uri, sessions := range uris {
			fp := w.fingerprint(uri)
			w.mu.Lock()
			changed := w.seen[uri] != fp
			w.seen[uri] = fp
			w.mu.Unlock()
			if !changed {
				continue
			}
			for _, sess := range sessions {
				w.notify(sess, uri)
			}
		}
	}
}

// notify tells subscriber (a session id, or a listen stream's key) that
// uri was updated. A listen stream whose queue is full misses it (as
// mcp-go's own broadcasts do).
func (w *resourceWatch) notify(subscriber, uri string) {
	w.mu.Lock()
	sess := w.listeners[subscriber]
	w.mu.Unlock()
	if sess == nil {
		_ = w.s.SendNotificationToSpecificClient(subscriber, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
		return
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: mcp.MethodNotificationResourceUpdated, Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}}}}
	select {
	case sess.NotificationChannel() <- n:
	default:
	}
}
