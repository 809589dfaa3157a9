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
// server still serves unexpired artifacts. Temp files left by a crashed
// writer are deleted once stale (not modified for StaleTempAge), at Open and
// by the sweeper; fresher ones may belong to another live Quarry process
// sharing the directory and are left alone.
//
// Every error is a *qerr.Error: malformed URIs are qerr.ErrInvalidArgument
// (qerr.CodeInvalidArgument), unknown or expired artifacts qerr.ErrExpired
// (qerr.CodeResourceNotFound), oversize reads qerr.ErrLimitExceeded
// (qerr.CodeOversizeResult).
package artifacts
