//go:build linux

package chunk

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// madvise advice values (syscall lacks MADV_POPULATE_READ, Linux 5.14).
const (
	madvWillNeed     = syscall.MADV_WILLNEED
	madvDontNeed     = syscall.MADV_DONTNEED
	madvPopulateRead = 22
)

// adviceDontNeed is the adviseRange mode that drops pages.
const adviceDontNeed = -1

var (
	// errAdviceUnsupported: the kernel does not know the advice.
	errAdviceUnsupported = errors.New("madvise advice not supported")
	// errRangeGone: part of the range is past the end of the file.
	errRangeGone = errors.New("mapped range is past the end of the file")
)

// mapFile maps the first size bytes of f read-only (private: never
// written, so every page stays the file's).
func mapFile(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
}

func unmapFile(b []byte) error { return syscall.Munmap(b) }

// adviseRange applies a prefault mode (or adviceDontNeed) to the
// page-aligned range [lo, hi) of mapping b, which may end past len(b) up
// to the end of b's last page.
func adviseRange(b []byte, lo, hi, mode int) error {
	var advice uintptr
	switch mode {
	case PrefaultPopulate:
		advice = madvPopulateRead
	case PrefaultWillNeed:
		advice = madvWillNeed
	case adviceDontNeed:
		advice = madvDontNeed
	default:
		return nil
	}
	if hi <= lo {
		return nil
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(lo)
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(hi-lo), advice)
	switch e {
	case 0:
		return nil
	case syscall.EINVAL:
		return errAdviceUnsupported
	case syscall.EFAULT:
		return errRangeGone
	}
	return e
}
