// Package shared is the state that Quarry replicas behind one load balancer
// share, so that a result handle, a page token or an artifact issued by one
// replica is served by any other: a small key-value interface with expiries
// (KV) and its Redis implementation (OpenRedis, over go-redis).
//
// A single server needs none of it: without --redis-url every replica keeps
// its handles in memory (package handles) and knows its own artifacts only
// (package artifacts), exactly as before.
//
// What is stored (all keys under the "quarry:" prefix, all with expiries):
//
//   - "quarry:handle:<id>": a result handle's metadata (principal, the URI of
//     its spill file in the shared artifact directory, the Arrow schema, the
//     row count), written by the replica that created the handle and read
//     by the others on a local miss (materialize.SharedHandles). Its expiry
//     slides like the handle's own TTL.
//   - "quarry:artifact:<id>": the principal an artifact belongs to, so that
//     another replica enforces the same ownership (artifacts.Options.Shared).
//
// The rows themselves never go through Redis: they live in Parquet files of
// the artifact directory, which the replicas share (a common volume).
package shared
