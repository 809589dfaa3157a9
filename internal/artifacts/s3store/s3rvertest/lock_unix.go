//go:build unix

package s3rvertest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockInstall takes an exclusive lock on the install of directory d
// across processes (a lock file under the temporary directory, so the
// checkout stays clean); the lock goes with the process if it dies.
func lockInstall(d string) (unlock func(), err error) {
	sum := sha256.Sum256([]byte(d))
	path := filepath.Join(os.TempDir(), "quarry-s3rver-"+hex.EncodeToString(sum[:6])+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("s3rver install lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("s3rver install lock: %w", err)
	}
	return func() { f.Close() }, nil
}
