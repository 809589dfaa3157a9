package catalog

// SetBeforeOpen makes f run before each open of a data file (with its path
// relative to the root) until the returned restore is called.
func SetBeforeOpen(f func(relPath string)) (restore func()) {
	testHookBeforeOpen = func(e *fileEntry) { f(e.info.RelPath) }
	return func() { testHookBeforeOpen = nil }
}

// SetMaxReopen sets how often an open follows a replaced file until the
// returned restore is called.
func SetMaxReopen(n int) (restore func()) {
	old := maxReopen
	maxReopen = n
	return func() { maxReopen = old }
}
