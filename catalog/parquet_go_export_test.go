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
