package app

import (
	"fmt"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/artifacts/s3store"
	"github.com/quarrydb/quarry/internal/shared"
)

// openArtifacts opens the artifact store of cfg: the directory
// (--artifact-dir), and the object store (--artifact-store) when set.
// Artifact owners are shared through kv only without an object store:
// objects carry their owners themselves.
func openArtifacts(cfg Config, dataRoot string, kv shared.KV) (*artifacts.Store, error) {
	opts := artifacts.Options{Dir: cfg.ArtifactDir, TTL: cfg.ArtifactTTL, Quota: cfg.ArtifactQuota, DataRoot: dataRoot,
		Shared: kv, Logger: cfg.Logger}
	switch {
	case cfg.ArtifactStore != "":
		r, err := s3store.Open(s3store.Options{URL: cfg.ArtifactStore, Endpoint: cfg.ArtifactStoreEndpoint, Region: cfg.ArtifactStoreRegion})
		if err != nil {
			return nil, fmt.Errorf("--artifact-store: %w", err)
		}
		opts.Remote, opts.Shared = r, nil
	case cfg.ArtifactStoreEndpoint != "":
		return nil, fmt.Errorf("--artifact-store-endpoint needs --artifact-store")
	case cfg.ArtifactStoreRegion != "":
		return nil, fmt.Errorf("--artifact-store-region needs --artifact-store")
	}
	store, err := artifacts.Open(opts)
	if err != nil {
		if opts.Remote != nil {
			return nil, fmt.Errorf("--artifact-store %s: %w", cfg.ArtifactStore, err)
		}
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	return store, nil
}
