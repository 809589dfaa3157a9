package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"

	"github.com/quarrydb/quarry/internal/shared"
)

// minSharedKey is the least number of secret bytes --shared-key-file must hold.
const minSharedKey = 32

// replicaState is what replicas share: the store of handle metadata and
// artifact owners (nil: none) and the signing key (nil: random per
// process).
type replicaState struct {
	kv  shared.KV
	key []byte
}

// openReplicaState checks and opens the shared state of cfg
// (--redis-url, --shared-key-file).
func openReplicaState(ctx context.Context, cfg Config) (replicaState, error) {
	var st replicaState
	if cfg.SharedKeyFile != "" {
		b, err := os.ReadFile(cfg.SharedKeyFile)
		if err != nil {
			return st, fmt.Errorf("--shared-key-file: %w", err)
		}
		k := strings.TrimSpace(string(b))
		if len(k) < minSharedKey {
			return st, fmt.Errorf("--shared-key-file: %q holds %d bytes of key, want at least %d (e.g. openssl rand -hex 32)", cfg.SharedKeyFile, len(k), minSharedKey)
		}
		st.key = []byte(k)
	}
	if cfg.RedisURL == "" {
		return st, nil
	}
	switch {
	case st.key == nil:
		return st, fmt.Errorf("--redis-url needs --shared-key-file: replicas must sign page tokens with one key")
	case cfg.ArtifactDir == "" && cfg.ArtifactStore == "":
		return st, fmt.Errorf("--redis-url needs --artifact-dir (a directory all replicas share) or --artifact-store (an object store they share): results are paged from its files")
	case cfg.ArtifactTTL > 0 && cfg.HandleTTL > 0 && cfg.ArtifactTTL < cfg.HandleTTL:
		return st, fmt.Errorf("--redis-url: --artifact-ttl (%s) must be at least --handle-ttl (%s): shared handles page from files", cfg.ArtifactTTL, cfg.HandleTTL)
	}
	kv, err := shared.OpenRedis(ctx, cfg.RedisURL)
	if err != nil {
		return st, fmt.Errorf("--redis-url: %w", err)
	}
	st.kv = kv
	return st, nil
}

// subkey derives the key of one purpose from the shared key (nil stays
// nil: a random key per process).
func (st replicaState) subkey(purpose string) []byte {
	if st.key == nil {
		return nil
	}
	m := hmac.New(sha256.New, st.key)
	m.Write([]byte("quarry/" + purpose + "/v1"))
	return m.Sum(nil)
}

func (st replicaState) close() {
	if st.kv != nil {
		_ = st.kv.Close()
	}
}
