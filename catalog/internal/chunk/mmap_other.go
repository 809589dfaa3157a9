//go:build !linux

package chunk

import (
	"errors"
	"os"
)

// Elsewhere files are read, never mapped.

const adviceDontNeed = -1

var (
	errAdviceUnsupported = errors.New("madvise advice not supported")
	errRangeGone         = errors.New("mapped range is past the end of the file")
	errNoMmap            = errors.New("memory-mapped input is only used on Linux")
)

func mapFile(*os.File, int64) ([]byte, error) { return nil, errNoMmap }

func unmapFile([]byte) error { return nil }

func adviseRange([]byte, int, int, int) error { return nil }
