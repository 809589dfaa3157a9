package mcpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/service"
)

// Downloads serves signed artifact downloads over HTTP
// (service.DownloadPathPrefix) and puts the base URL of the server in the
// context of each MCP request, so file results get a download_url; it is
// the transport's HTTPOptions.Download.
type Downloads struct{ svc *service.Service }

// NewDownloader returns the Downloads of svc's artifacts.
func NewDownloader(svc *service.Service) *Downloads { return &Downloads{svc: svc} }

type downloadBaseKey struct{}

type downloadBase struct {
	d    *Downloads
	base string
}

// WithBase records the scheme and host the client reached the server at.
func (d *Downloads) WithBase(ctx context.Context, host string) context.Context {
	return context.WithValue(ctx, downloadBaseKey{}, downloadBase{d: d, base: "http://" + host})
}

// ServeHTTP serves GET and HEAD of a signed download URL with Range
// support (http.ServeContent). The signature is the credential, so a
// browser or curl can fetch the link; it names the principal the file
// belongs to and expires.
func (d *Downloads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, a, err := d.svc.OpenDownload(r.URL.Path, r.URL.Query(), time.Now())
	if err != nil {
		e := qerr.As(err)
		status := http.StatusNotFound
		switch {
		case errors.Is(err, qerr.ErrPermission):
			status = http.StatusForbidden
		case errors.Is(err, qerr.ErrExpired):
			status = http.StatusGone
		case errors.Is(err, qerr.ErrInternal):
			status = http.StatusInternalServerError
		}
		obs.Logger(r.Context()).Info("download refused", "code", e.Code)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(e)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", a.MIME)
	w.Header().Set("Content-Disposition", `attachment; filename="`+path.Base(a.URI)+`"`)
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, "", a.Created, f)
}

// Serves reports whether an HTTP path is an artifact download.
func (d *Downloads) Serves(p string) bool { return strings.HasPrefix(p, service.DownloadPathPrefix) }

// addDownloadURL gives the file result in out a signed download_url when
// the call came over HTTP with downloads enabled.
func addDownloadURL(ctx context.Context, out any) {
	b, ok := ctx.Value(downloadBaseKey{}).(downloadBase)
	if !ok {
		return
	}
	var res *materialize.Result
	switch x := out.(type) {
	case *materialize.Result:
		res = x
	case *service.QueryResponse:
		res = x.Result
	case *service.SliceResponse:
		res = x.Result
	}
	if res == nil || res.Method != materialize.MethodFile || res.ResourceURI == "" {
		return
	}
	if p, ok := b.d.svc.DownloadPath(res.ResourceURI, obs.Principal(ctx), time.Now()); ok {
		res.DownloadURL = b.base + p
	}
}
