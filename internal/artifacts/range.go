package artifacts

import (
	"errors"
	"io"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Open opens the artifact uri names for reading, for principal (as Get):
// its local file, or its object in the Remote read in ranges. The caller
// closes it; an artifact evicted meanwhile is gone.
func (s *Store) Open(uri, principal string) (File, Artifact, error) {
	a, err := s.Get(uri, principal)
	if err != nil {
		return nil, Artifact{}, err
	}
	f, err := s.Reader(a)
	if err != nil {
		return nil, Artifact{}, err
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
		return nil, Artifact{}, readError(err, uri)
	}
	return b, a, nil
}
