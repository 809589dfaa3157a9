//go:build unix

package safeopen

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func identityOf(fi fs.FileInfo) Identity {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Identity{}
	}
	return Identity{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}

// fileFlags open the final component: never following a symlink, never
// blocking on a FIFO (cleared by ready once the file is known regular).
const fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY

// openBeneath opens rel (slash separated, local) under root without
// following any symlink: openat2 where the kernel has it (Linux), else a
// component-by-component walk.
func openBeneath(root, rel string) (*os.File, error) {
	dir, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	fd, err := openat2Beneath(dir, rel)
	if errors.Is(err, errNoOpenat2) {
		fd, err = walk(dir, rel)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// walk opens rel from dir one component at a time with O_NOFOLLOW.
func walk(dir int, rel string) (int, error) {
	if rel == "." {
		return -1, ErrNotRegular // the root itself
	}
	comps := strings.Split(rel, "/")
	cur := dir
	for i, c := range comps {
		if c == "" || c == "." || c == ".." {
			closeOwned(cur, dir)
			return -1, ErrOutside
		}
		flags := dirFlags
		if i == len(comps)-1 {
			flags = fileFlags
		}
		fd, err := openatRetry(cur, c, flags)
		if err != nil {
			err = classify(cur, c, err)
		}
		closeOwned(cur, dir)
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

func closeOwned(fd, dir int) {
	if fd != dir {
		unix.Close(fd)
	}
}

func openatRetry(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// classify maps a failed O_NOFOLLOW open of name in dir: a symlink there
// (ELOOP on Linux and macOS, EMLINK on FreeBSD, ENOTDIR with O_DIRECTORY on
// some systems) is ErrOutside.
func classify(dir int, name string, err error) error {
	switch err {
	case unix.ELOOP, unix.EMLINK, unix.ENOTDIR:
		var st unix.Stat_t
		if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return ErrOutside
		}
	}
	return err
}

// ready switches the file back to blocking reads.
func ready(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
