package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/materialize"
)

// ServerInfo returns what the service knows of get_server_info: limits,
// the data root (display form), the dataset count and the features. The
// MCP layer adds name, version, protocol versions and capabilities.
func (s *Service) ServerInfo(_ context.Context) *ServerInfo {
	caps := s.cfg.Materializer.Caps()
	rows, bytes := s.ConfirmThresholds()
	var files []string
	for _, f := range s.cfg.Materializer.Formats() {
		if f != materialize.FormatJSON {
			files = append(files, f)
		}
	}
	features := []string{"result_handles", "file_exports:" + strings.Join(files, ","), "estimates", "distinct_values", "aggregate",
		"schema_cards", "dataset_summaries", "progress", "cancellation"}
	if s.confirmEnabled() {
		features = append(features, "confirmation")
	}
	return &ServerInfo{
		Limits: Limits{
			MaxRows: caps.MaxRows, MaxBytes: caps.MaxBytes, MaxCells: caps.MaxCells, PageRows: caps.PageRows, MaxCellChars: caps.MaxCellChars,
			HandleTTLSeconds: int64(s.cfg.HandleTTL.Seconds()), MaxHandles: s.cfg.MaxHandles,
			ArtifactTTLSeconds: int64(s.cfg.ArtifactTTL.Seconds()), ArtifactQuotaBytes: s.cfg.ArtifactQuota,
			QueryTimeoutMS: s.cfg.QueryTimeout.Milliseconds(), QueryMemoryBytes: s.cfg.QueryMemory,
			ResourceReadLimitBytes: s.cfg.ResourceReadLimit,
			ConfirmRows:            rows, ConfirmBytes: bytes,
			SampleRows: s.cfg.SampleRows, DistinctLimit: MaxDistinctLimit,
		},
		DataRoot:     s.DataRootLabel(),
		DatasetCount: len(s.cfg.Catalog.Datasets()),
		Features:     features,
	}
}

// DataRootLabel is the data root as shown to clients: "bundled demo data",
// a home-relative path ("~/data/budget"), or only the base name
// (".../budget") so absolute paths do not leak.
func (s *Service) DataRootLabel() string {
	if s.cfg.Demo {
		return "bundled demo data"
	}
	root := s.cfg.Catalog.Root()
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, root); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			if rel == "." {
				return "~"
			}
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return ".../" + filepath.Base(root)
}

// CatalogDatasets returns the catalog's current datasets (no rescan),
// sorted by id.
func (s *Service) CatalogDatasets() []*catalog.Dataset { return s.cfg.Catalog.Datasets() }
