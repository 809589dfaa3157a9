package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/shared/redistest"
)

func TestOpenReplicaState(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("k", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := redistest.Start(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" means success
	}{
		{"nothing shared", Config{}, ""},
		{"key only", Config{SharedKeyFile: key}, ""},
		{"short key", Config{SharedKeyFile: short}, "at least 32"},
		{"missing key file", Config{SharedKeyFile: filepath.Join(dir, "none")}, "--shared-key-file"},
		{"redis without key", Config{RedisURL: url, ArtifactDir: dir}, "needs --shared-key-file"},
		{"redis without artifact dir", Config{RedisURL: url, SharedKeyFile: key}, "needs --artifact-dir"},
		{"artifacts die before handles", Config{RedisURL: url, SharedKeyFile: key, ArtifactDir: dir, ArtifactTTL: time.Minute, HandleTTL: time.Hour}, "--artifact-ttl"},
		{"redis unreachable", Config{RedisURL: "redis://127.0.0.1:1/0", SharedKeyFile: key, ArtifactDir: dir}, "--redis-url"},
		{"replica", Config{RedisURL: url, SharedKeyFile: key, ArtifactDir: dir}, ""},
		{"replica with an object store", Config{RedisURL: url, SharedKeyFile: key, ArtifactStore: "s3://b/p"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := openReplicaState(context.Background(), tc.cfg)
			defer st.close()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if (st.kv != nil) != (tc.cfg.RedisURL != "") || (st.key != nil) != (tc.cfg.SharedKeyFile != "") {
					t.Fatalf("state %+v for %+v", st, tc.cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestSubkeys(t *testing.T) {
	if (replicaState{}).subkey("x") != nil {
		t.Fatal("no shared key must mean a random key per process (nil)")
	}
	st := replicaState{key: []byte(strings.Repeat("k", 32))}
	a, b := st.subkey("page-tokens"), st.subkey("tokens")
	if len(a) != 32 || bytes.Equal(a, b) || bytes.Equal(a, st.key) || !bytes.Equal(a, st.subkey("page-tokens")) {
		t.Fatal("subkeys must be distinct per purpose, stable, and not the key itself")
	}
}
