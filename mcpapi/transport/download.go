package transport

import (
	"context"
	"net/http"
)

// Downloader serves signed artifact downloads over HTTP (the paths it
// Serves) and puts the host the client reached the server at in the
// context of each MCP request, so file results get a download_url
// (mcpapi.NewDownloader).
type Downloader interface {
	http.Handler
	Serves(path string) bool
	WithBase(ctx context.Context, host string) context.Context
}
