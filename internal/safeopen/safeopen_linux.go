package safeopen

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory on the way: O_PATH needs no read permission.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

var errNoOpenat2 = errors.New("openat2 is not available")

// noOpenat2 is set once openat2 turned out to be missing (ENOSYS: Linux
// before 5.6).
var noOpenat2 atomic.Bool

func openRoot(root string) (int, error) {
	for {
		fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// openat2Beneath opens rel under dir with the kernel refusing symlinks,
// magic links and escapes. errNoOpenat2 asks the caller to walk instead.
func openat2Beneath(dir int, rel string) (int, error) {
	if noOpenat2.Load() {
		return -1, errNoOpenat2
	}
	how := &unix.OpenHow{
		Flags:   uint64(fileFlags),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(dir, rel, how)
		switch {
		case err == nil:
			return fd, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && tries < 8:
			// A concurrent rename under dir made the kernel give up the
			// lookup (RESOLVE_BENEATH is conservative): try again.
			continue
		case err == unix.ENOSYS:
			noOpenat2.Store(true)
			return -1, errNoOpenat2
		case err == unix.EPERM:
			// A seccomp filter (older container runtimes) rejects the
			// unknown syscall: walk.
			return -1, errNoOpenat2
		case err == unix.ELOOP || err == unix.EXDEV:
			return -1, ErrOutside
		}
		return -1, err
	}
}
