package catalog

// SetParquetGo turns the parquet-go read path on or off until the returned
// restore is called.
func SetParquetGo(on bool) (restore func()) {
	old := parquetGoEnabled
	parquetGoEnabled = on
	return func() { parquetGoEnabled = old }
}

// ParquetGoRowGroups returns how many row groups the parquet-go path read
// and how many it left to pqarrow so far.
func ParquetGoRowGroups() (parquetGo, pqarrow int64) {
	return parquetGoGroups.Load(), parquetGoFallbacks.Load()
}

// SetParquetReadAhead sets the read-ahead workers of Parquet scans (below
// 2: off) until the returned restore is called.
func SetParquetReadAhead(workers int) (restore func()) {
	old := parquetReadAheadWorkers
	parquetReadAheadWorkers = func() int { return workers }
	return func() { parquetReadAheadWorkers = old }
}

// ParquetReadAheads returns how many scans read ahead so far.
func ParquetReadAheads() int64 { return parquetReadAheads.Load() }
