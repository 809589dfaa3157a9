// Package artifacts is Quarry's artifact store: the files Quarry writes for
// results too large to return inline (Parquet, CSV, Arrow IPC, JSON), kept in
// a private directory outside the data root and served as
// quarry://artifacts/<id>.<ext> resources.
//
// Writes are atomic: a Writer fills a ".tmp-*" file in the store directory,
// and Commit fsyncs it and renames it to "<id>.<ext>", so a reader never sees
// a partial artifact. Artifact ids are unguessable ("a_" followed by 26
// base32 characters, 128+ bits from crypto/rand).
//
// Artifacts live for Options.TTL after they are committed; a background
// sweeper deletes expired ones, and Get refuses them as soon as they expire.
// The store keeps the bytes on disk under Options.Quota by evicting the
// oldest artifacts first when a Commit would exceed it; a single artifact
// larger than the quota is refused with qerr.CodeResourceExhausted.
//
// The store's state is rebuilt from the directory at Open, so a restarted
// server still serves unexpired artifacts. A Writer holds an exclusive file
// lock (flock) on its temp file while it lives; the kernel drops it when the
// process dies, however it dies. So Open and the sweeper delete temp files
// nobody holds locked (older than OrphanTempAge): a crashed writer's garbage
// is cleaned at the next start, while a live writer's temp file, in this or
// another Quarry process sharing the directory, is never touched. Where
// flock is not available, temp files are deleted once stale (not modified
// for StaleTempAge).
//
// Every error is a *qerr.Error: malformed URIs are qerr.ErrInvalidArgument
// (qerr.CodeInvalidArgument), unknown or expired artifacts qerr.ErrExpired
// (qerr.CodeResourceNotFound), oversize reads qerr.ErrLimitExceeded
// (qerr.CodeOversizeResult).
package artifacts
