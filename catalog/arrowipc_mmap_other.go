//go:build !(linux || darwin || freebsd)

package catalog

import (
	"errors"
	"os"
)

// mapFile is not supported here: Arrow files are read with ReadAt.
func mapFile(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) error { return nil }
