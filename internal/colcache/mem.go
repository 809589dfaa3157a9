package colcache

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DefaultBudget is 25% of the machine's physical memory (from
// /proc/meminfo), or 1 GiB when that cannot be read.
func DefaultBudget() int64 {
	if total := totalMemory(); total > 0 {
		return total / 4
	}
	return 1 << 30
}

// totalMemory returns MemTotal in bytes, or 0.
func totalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
