package artifacts

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/quarrydb/quarry/internal/qerr"
)

// storageHint is the hint of errors writing the artifact directory: file
// results are unavailable, inline ones still work.
const storageHint = "file results cannot be written now: get the result inline instead (output_format json with filters, fewer columns, an aggregate or a limit); the server operator must free space in or fix the artifact directory"

// ioError classifies an error writing the artifact directory (doing what):
// a full disk or quota (ENOSPC, EDQUOT) and a directory that cannot be
// written (read-only file system, permission denied) are
// qerr.CodeResourceExhausted errors saying so, with a hint to get the
// result inline; anything else is internal.
func ioError(err error, what string) *qerr.Error {
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return qerr.Limit(qerr.CodeResourceExhausted, "the artifact directory is full: %s", what).
			WithHint(storageHint).With("reason", "no_space").Wrap(err)
	case errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission):
		return qerr.Limit(qerr.CodeResourceExhausted, "the artifact directory is not writable: %s", what).
			WithHint(storageHint).With("reason", "not_writable").Wrap(err)
	}
	return qerr.Internal(err, "%s", what)
}

// Writable reports whether a file can be written in the store directory
// now (the readiness probe): it writes one byte to a temp file and
// removes it. The error is ioError's. With a Remote, the object store
// must answer too (Remote.Check).
func (s *Store) Writable() error {
	f, err := os.CreateTemp(s.dir, tempPrefix+"probe-*")
	if err != nil {
		return ioError(err, "cannot create a file")
	}
	defer os.Remove(f.Name())
	_, err = f.Write([]byte{0})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ioError(err, "cannot write a file")
	}
	return s.remoteWritable()
}
