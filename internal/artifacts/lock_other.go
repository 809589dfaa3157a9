//go:build !unix

package artifacts

import "os"

// locksSupported is false: without flock, crashed writers' temp files are
// recognised by age alone (StaleTempAge).
const locksSupported = false

func lockTemp(*os.File) error { return nil }

func tempInUse(string) bool { return true }
