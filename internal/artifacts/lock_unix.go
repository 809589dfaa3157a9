//go:build unix

package artifacts

import (
	"errors"
	"os"
	"syscall"
)

// locksSupported reports whether writers lock their temp files (flock), so
// that a temp file nobody holds locked is known to be a crashed writer's.
const locksSupported = true

// lockTemp takes the writer's exclusive lock on its temp file. The lock
// lives as long as the file descriptor (the kernel drops it when the
// process dies, however it dies).
func lockTemp(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// tempInUse reports whether a live writer (in any process) holds the lock
// on the temp file at path. A file that cannot be opened is not in use.
func tempInUse(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN)
}
