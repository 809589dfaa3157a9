package catalog

// SetArrowMmap turns mapped Arrow scans on or off until the returned
// restore is called.
func SetArrowMmap(on bool) (restore func()) {
	old := arrowNoMmap.Swap(!on)
	return func() { arrowNoMmap.Store(old) }
}

// ArrowMappedScans is the number of scans that mapped their file.
func ArrowMappedScans() int64 { return arrowMappedScans.Load() }
