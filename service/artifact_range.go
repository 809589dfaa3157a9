package service

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// RangeMIME is the MIME type of a ranged artifact read: a slice of the
// file's bytes, always a base64 blob (a cut may split a character).
const RangeMIME = "application/octet-stream"

// readArtifact reads an artifact for resources/read: the whole file when
// it fits one message, or the range ?offset=N&length=M (length at most the
// resource read limit) of a file of any size.
func (s *Service) readArtifact(ctx context.Context, uri string) ([]byte, string, error) {
	base, rawQuery, ranged := strings.Cut(uri, "?")
	limit := s.cfg.ResourceReadLimit
	if !ranged {
		b, a, err := s.cfg.Artifacts.ReadAll(uri, obs.Principal(ctx), limit)
		if qerr.Code(err) == qerr.CodeOversizeResult {
			size := int64(0)
			if a, gerr := s.cfg.Artifacts.Get(uri, obs.Principal(ctx)); gerr == nil {
				size = a.Size
			}
			return nil, "", qerr.Limit(qerr.CodeOversizeResult, "the artifact is %d bytes, more than the %d bytes one message carries", size, limit).
				WithHint("read it in ranges: %s?offset=0&length=%d, then offset=%d, ...; or page its rows with the read_result tool; over HTTP use the result's download_url", uri, limit, limit)
		}
		if err != nil {
			return nil, "", err
		}
		return b, a.MIME, nil
	}
	q, err := url.ParseQuery(rawQuery)
	bad := func(msg string) error {
		return qerr.Invalid(qerr.CodeInvalidArgument, "%s", msg).
			WithHint("ranges are %s?offset=<byte offset>&length=<at most %d>", base, limit)
	}
	if err != nil {
		return nil, "", bad("the range query is malformed")
	}
	num := func(key string, def int64) (int64, error) {
		v := q.Get(key)
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, bad(fmt.Sprintf("%s must be a number of bytes >= 0", key))
		}
		return n, nil
	}
	offset, err := num("offset", 0)
	if err != nil {
		return nil, "", err
	}
	length, err := num("length", limit)
	if err != nil {
		return nil, "", err
	}
	if length > limit {
		return nil, "", bad(fmt.Sprintf("length %d is more than the %d bytes one message carries", length, limit))
	}
	b, _, err := s.cfg.Artifacts.ReadRange(base, obs.Principal(ctx), offset, length)
	if err != nil {
		return nil, "", err
	}
	return b, RangeMIME, nil
}

// artifactURI reports whether uri names an artifact (with or without a range).
func artifactURI(uri string) bool { return strings.HasPrefix(uri, artifacts.URIPrefix) }
