package catalog

import (
	"github.com/quarrydb/quarry/catalog/internal/chunk"
)

// OpenChunks opens a text file (confined: FileInfo.Open; decompressed if
// gz, compress.go) for reading in chunks of complete records, cut where
// cfg.Boundary says (catalog/internal/chunk: memory-mapped where it can).
// Reading fails with a resource_exhausted error past lim: a record longer
// than lim.MaxRecordBytes is cfg.TooLong (RecordTooLong when nil).
func OpenChunks(file FileInfo, gz bool, cfg chunk.Config, lim Limits) (*chunk.Reader, error) {
	lim = lim.WithDefaults()
	cfg.MaxRecord = lim.MaxRecordBytes
	if cfg.TooLong == nil {
		cfg.TooLong = RecordTooLong(lim.MaxRecordBytes)
	}
	f, err := file.Open()
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil {
		// Small files: one buffer just big enough (reading hits EOF at once).
		limit := st.Size() + 1
		if gz {
			limit = 4*st.Size() + chunk.MinBytes
		}
		cfg.Size = int(min(int64(cfg.Size), max(limit, 4<<10)))
		if !gz {
			if cr := chunk.Map(f, st, cfg); cr != nil {
				return cr, nil
			}
		}
	}
	if !gz {
		return chunk.NewReader(f, f, cfg), nil
	}
	zr, zc, err := Decompressing(file, f, lim)
	if err != nil {
		f.Close()
		return nil, err
	}
	return chunk.NewReader(zr, MultiCloser{zc, f}, cfg), nil
}
