package transport

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestLoopbackHost(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LocalHost:8765": true, "127.0.0.1": true, "127.0.0.1:8765": true, "127.9.9.9:1": true,
		"[::1]": true, "[::1]:8765": true, "localhost:65535": true,

		"":                          false,
		"127.0.0.1:8765.evil.com":   false, // mcp-go lets this through
		"localhost:8765.evil.com":   false,
		"[::1]:8765.evil.com":       false,
		"127.0.0.1.evil.com":        false,
		"127.0.0.1.evil.com:8765":   false,
		"evil.com":                  false,
		"localhost.evil.com":        false,
		"127.0.0.1:":                false,
		"127.0.0.1:0":               false,
		"127.0.0.1:65536":           false,
		"127.0.0.1:+80":             false,
		"127.0.0.1:8765:1":          false,
		"127.1":                     false,
		"::1":                       false,
		"[::1":                      false,
		"[::1]x":                    false,
		"[127.0.0.1]":               false,
		"[fe80::1%lo]":              false,
		"[::ffff:127.0.0.1]":        true, // IPv4-mapped loopback
		"10.0.0.1:8765":             false,
		"localhost\x00:80":          false,
		"localhost :80":             false,
		"127.0.0.1:8765/evil":       false,
		"127.0.0.1:000000000008765": false,
	} {
		if got := loopbackHost(h); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestHandlerHostHeader sends Host headers over real HTTP to a loopback
// listener: only exact loopback hosts are served.
func TestHandlerHostHeader(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{})
	port := ts.URL[strings.LastIndexByte(ts.URL, ':')+1:]
	body, hdr := callTool("whoami")
	for host, want := range map[string]int{
		"127.0.0.1:" + port:               200,
		"localhost:" + port:               200,
		"[::1]:" + port:                   200,
		"127.0.0.1:" + port + ".evil.com": 403,
		"localhost:" + port + ".evil.com": 403,
		"evil.com:" + port:                403,
	} {
		for _, path := range []string{"/mcp", "/healthz"} {
			var resp *http.Response
			var raw string
			if path == "/mcp" {
				resp, raw = rpc(t, ts.URL+path, body, with(hdr, "Host", host))
			} else {
				req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
				req.Host = host
				r, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(r.Body)
				r.Body.Close()
				resp, raw = r, string(b)
			}
			var out struct {
				Error struct {
					Data struct {
						Code string `json:"code"`
					} `json:"data"`
				} `json:"error"`
			}
			_ = json.Unmarshal([]byte(raw), &out)
			if resp.StatusCode != want || (want == 403 && out.Error.Data.Code != codeForbiddenHost) {
				t.Errorf("Host %q %s: %d %+v, want %d", host, path, resp.StatusCode, out, want)
			}
		}
	}
}
