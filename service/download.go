package service

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/qerr"
)

// DownloadTTL is the longest a signed download URL lives (never past its
// artifact's own expiry).
const DownloadTTL = 15 * time.Minute

// DownloadPathPrefix starts the HTTP path of artifact downloads.
const DownloadPathPrefix = "/artifacts/"

const downloadDomain = "quarry/download/v1\x00"

// downloadKey is the HMAC key of download URLs, random per process (URLs
// do not outlive the server, like its page tokens).
func (r *reachState) downloadKey() []byte {
	r.keyOnce.Do(func() {
		r.key = make([]byte, 32)
		_, _ = rand.Read(r.key)
	})
	return r.key
}

func (s *Service) downloadSig(name, principal string, exp int64) string {
	m := hmac.New(sha256.New, s.reach.downloadKey())
	m.Write([]byte(downloadDomain + name + "\x00" + principal + "\x00" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// DownloadPath signs the HTTP download of the artifact uri for principal:
// /artifacts/<id>.<ext>?p=<principal>&exp=<unix seconds>&sig=<HMAC>, valid
// until the earlier of DownloadTTL and the artifact's expiry. ok is false
// when uri is not a live artifact of principal.
func (s *Service) DownloadPath(uri, principal string, now time.Time) (string, bool) {
	a, err := s.cfg.Artifacts.Get(uri, principal)
	if err != nil {
		return "", false
	}
	exp := now.Add(DownloadTTL)
	if end := a.Created.Add(s.cfg.ArtifactTTL); end.Before(exp) {
		exp = end
	}
	name := strings.TrimPrefix(a.URI, artifacts.URIPrefix)
	q := url.Values{"p": {principal}, "exp": {strconv.FormatInt(exp.Unix(), 10)}}
	q.Set("sig", s.downloadSig(name, principal, exp.Unix()))
	return DownloadPathPrefix + name + "?" + q.Encode(), true
}

// OpenDownload checks a download URL's path and query (signature, expiry)
// and opens its artifact for the principal it was signed for: a bad
// signature is download_denied (ErrPermission), a past expiry
// download_expired (ErrExpired), a gone artifact resource_not_found.
func (s *Service) OpenDownload(path string, q url.Values, now time.Time) (artifacts.File, artifacts.Artifact, error) {
	name := strings.TrimPrefix(path, DownloadPathPrefix)
	exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
	principal := q.Get("p")
	if err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(s.downloadSig(name, principal, exp))) {
		return nil, artifacts.Artifact{}, qerr.New(qerr.ErrPermission, qerr.CodeDownloadDenied, "the download URL's signature is not valid").
			WithHint("use download_url exactly as a tool result gave it")
	}
	if now.Unix() >= exp {
		return nil, artifacts.Artifact{}, qerr.New(qerr.ErrExpired, qerr.CodeDownloadExpired, "the download URL has expired").
			WithHint("read the file's rows with read_result, or run the query again for a new download_url")
	}
	return s.cfg.Artifacts.Open(artifacts.URIPrefix+name, principal)
}
