package catalog

// SetParquetWorkers makes Parquet scans decode n row groups at once (1:
// one after the other) until the returned restore is called.
func SetParquetWorkers(n int) (restore func()) {
	old := parquetWorkers
	parquetWorkers = func() int { return n }
	return func() { parquetWorkers = old }
}
