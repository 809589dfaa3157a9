package app

import (
	"net"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/artifacts/s3store/s3rvertest"
)

// TestOpenArtifactStore: --artifact-store and its companions are checked
// at start-up, naming the flag; a reachable store opens, an unreachable
// one is refused.
func TestOpenArtifactStore(t *testing.T) {
	srv := s3rvertest.Start(t)
	s3rvertest.SetEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" means success
	}{
		{"object store", Config{ArtifactStore: "s3://" + s3rvertest.Bucket + "/app", ArtifactStoreEndpoint: srv.Endpoint}, ""},
		{"no such bucket", Config{ArtifactStore: "s3://nope/app", ArtifactStoreEndpoint: srv.Endpoint}, "--artifact-store s3://nope/app"},
		{"unreachable", Config{ArtifactStore: "s3://" + s3rvertest.Bucket, ArtifactStoreEndpoint: closed}, "cannot be reached"},
		{"bad url", Config{ArtifactStore: "/srv/arts"}, "--artifact-store: "},
		{"bad endpoint", Config{ArtifactStore: "s3://b", ArtifactStoreEndpoint: "ftp://x"}, "--artifact-store: "},
		{"endpoint alone", Config{ArtifactStoreEndpoint: srv.Endpoint}, "--artifact-store-endpoint needs --artifact-store"},
		{"region alone", Config{ArtifactStoreRegion: "eu-west-1"}, "--artifact-store-region needs --artifact-store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.ArtifactDir = t.TempDir()
			store, err := openArtifacts(tc.cfg, t.TempDir(), nil)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer store.Close()
				if err := store.Writable(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
