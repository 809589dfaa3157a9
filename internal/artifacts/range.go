package artifacts

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Open opens the artifact uri names for reading, for principal (as Get).
// The caller closes the file; an artifact evicted meanwhile is gone.
func (s *Store) Open(uri, principal string) (*os.File, Artifact, error) {
	a, err := s.Get(uri, principal)
	if err != nil {
		return nil, Artifact{}, err
	}
	f, err := os.Open(a.Path)
	if errors.Is(err, fs.ErrNotExist) { // evicted since Get
		return nil, Artifact{}, gone(uri)
	}
	if err != nil {
		return nil, Artifact{}, qerr.Internal(err, "cannot read artifact %s", uri)
	}
	return f, a, nil
}

// ReadRange returns up to length bytes of the artifact from offset (fewer
// at its end; none at or past it), for principal.
func (s *Store) ReadRange(uri, principal string, offset, length int64) ([]byte, Artifact, error) {
	if offset < 0 || length < 0 {
		return nil, Artifact{}, qerr.Invalid(qerr.CodeInvalidArgument, "offset and length must not be negative")
	}
	f, a, err := s.Open(uri, principal)
	if err != nil {
		return nil, Artifact{}, err
	}
	defer f.Close()
	n := max(min(length, a.Size-offset), 0)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, offset); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, Artifact{}, qerr.Internal(err, "cannot read artifact %s", uri)
	}
	return b, a, nil
}
