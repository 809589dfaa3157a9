//go:build unix && !linux

package safeopen

import (
	"errors"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory on the way (no O_PATH outside Linux: the
// directory must be readable, as the catalog's scan needs anyway).
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

var errNoOpenat2 = errors.New("openat2 is not available")

func openRoot(root string) (int, error) {
	for {
		fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func openat2Beneath(int, string) (int, error) { return -1, errNoOpenat2 }
