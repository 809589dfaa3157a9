// Package handles keeps short-lived query results behind opaque result
// handles and issues opaque, signed page tokens for paging through them.
//
// # Handles
//
// A Registry maps unguessable ids ("h_" followed by 26 base32 characters,
// 128+ bits from crypto/rand) to reference-counted values. Put takes over
// the caller's reference; Get returns the value with an extra reference the
// caller must Release. The registry releases its own reference exactly once,
// when the handle is evicted, expires, is deleted, or the registry is closed.
// A value a caller obtained from Get stays valid until that caller releases
// it, even if the handle is evicted in the meantime.
//
// Expiry is sliding: a handle lives for Options.TTL after it was last
// successfully fetched with Get (or created with Put). Handles are also
// bounded by count (Options.MaxEntries) and optionally by bytes
// (Options.MaxBytes, for values that implement Sizer); in both cases the
// least recently used handles are evicted first. Expired handles are purged
// in the background by the golang-lru expirable cache and are also refused by
// Get as soon as they expire, whether or not they were purged yet.
//
// An unknown, expired or evicted handle, and a handle that belongs to a
// different principal, all produce the same error: qerr.ErrExpired with code
// qerr.CodeHandleExpired, so a caller cannot probe for other principals'
// handles.
//
// # Replicas
//
// SetRemote plugs in a Remote that shares handles between replicas of one
// server: Put publishes the handle, Get falls back to the Remote when the
// handle is not held locally (or expired locally: another replica may have
// used it since), Delete forgets it everywhere. materialize.SharedHandles
// is the Remote of result tables (docs/SCALE_OUT.md).
//
// # Page tokens
//
// Sign turns a Token (handle, offset, page size, format, per-call byte cap)
// into an opaque, URL-safe string:
// base64url(payload) + "." + base64url(HMAC-SHA256(payload)).
// The payload carries a key id (derived from the key, revealing nothing of
// it) and a CRC-32. Verify checks the MAC and that the token belongs to the
// given handle; a well-formed token signed with another key (the server
// before a restart, whose handles are gone) yields qerr.ErrExpired with code
// qerr.CodeHandleExpired and a hint to re-run the query; any other
// malformed, tampered or truncated token yields qerr.ErrInvalidArgument with
// code qerr.CodeInvalidPageToken. Verify never panics on any input.
package handles
