package engine

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// plainKernel evaluates a case-sensitive contains, starts_with or
// ends_with directly on a plain string array's offsets and data buffer,
// without building a string header per row. Like strKernel it ANDs into
// mask and leaves null handling to the caller.
type plainKernel struct {
	op     planner.Op
	needle []byte
	sel    []int32 // scratch: the rows left
}

// newPlainKernel returns the offsets kernel for p, or nil when p has none
// (other ops, case-insensitive matching).
func newPlainKernel(p planner.Predicate) *plainKernel {
	if p.CaseInsensitive || p.Value == nil {
		return nil
	}
	switch p.Op {
	case planner.OpContains, planner.OpStartsWith, planner.OpEndsWith:
	default:
		return nil
	}
	s, ok := p.Value.Value.(string)
	if !ok {
		return nil
	}
	return &plainKernel{op: p.Op, needle: []byte(s)}
}

// eval runs the kernel on a plain string or large_string array.
func (k *plainKernel) eval(col arrow.Array, mask []bool) {
	n := col.Len()
	if n == 0 || len(k.needle) == 0 { // every string contains, starts and ends with ""
		return
	}
	d := col.Data()
	var data []byte
	if b := d.Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	if col.DataType().ID() == arrow.LARGE_STRING {
		plainEval(k, arrow.GetOffsets[int64](d, 1)[:n+1], data, mask[:n])
		return
	}
	plainEval(k, arrow.GetOffsets[int32](d, 1)[:n+1], data, mask[:n])
}

func plainEval[O int32 | int64](k *plainKernel, offs []O, data []byte, mask []bool) {
	m := maskBytes(mask)
	needle := k.needle
	l := len(needle)
	if k.op == planner.OpContains && l > 1 && countTrue(mask)*8 >= len(m) {
		// Many rows left and a multi-byte needle: search the data buffer
		// once from row to row (sparse matches cost one SIMD scan).
		containsScan(offs, data, needle, m)
		return
	}
	// Test each row left, through a selection (no branch per row on the
	// mask); one-byte needles a word at a time.
	k.sel = selectRows(mask, k.sel)
	sel := k.sel
	switch {
	case k.op == planner.OpStartsWith:
		for _, i := range sel {
			lo, hi := int(offs[i]), int(offs[i+1])
			m[i] = b2u(hi-lo >= l && string(data[lo:lo+l]) == string(needle))
		}
	case k.op == planner.OpEndsWith:
		for _, i := range sel {
			lo, hi := int(offs[i]), int(offs[i+1])
			m[i] = b2u(hi-lo >= l && string(data[hi-l:hi]) == string(needle))
		}
	case l == 1:
		c := needle[0]
		for _, i := range sel {
			m[i] = b2u(hasByte(data[offs[i]:offs[i+1]], c))
		}
	default:
		for _, i := range sel {
			m[i] = b2u(bytes.Contains(data[offs[i]:offs[i+1]], needle))
		}
	}
}

// hasByte reports whether s contains c, eight bytes at a time (short
// values do not amortize a SIMD search's setup).
func hasByte(s []byte, c byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	bc := uint64(c) * lo
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:]) ^ bc
		if (x-lo)&^x&hi != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// containsScan keeps the rows of m (0/1 bytes) whose value contains
// needle (non-empty), searching the data buffer forward from each row
// still in m: a match at pos belongs to the row q holding pos, rows between
// the search start and q have no match starting inside them, and a match
// crossing q's end means q has none either (any later match in q would
// cross it too). Each byte of data is searched at most once.
func containsScan[O int32 | int64](offs []O, data []byte, needle []byte, m []uint8) {
	n := len(m)
	end := int(offs[n])
	for r := nextSet(m, 0); r < n; r = nextSet(m, r+1) {
		start := int(offs[r])
		j := bytes.Index(data[start:end], needle)
		if j < 0 {
			clear(m[r:])
			return
		}
		pos := start + j
		q := r
		if int(offs[r+1]) <= pos { // first row (after r) whose end is past pos
			q = r + 1 + sort.Search(n-r-1, func(x int) bool { return int(offs[r+2+x]) > pos })
			clear(m[r:q])
		}
		if pos+len(needle) > int(offs[q+1]) {
			m[q] = 0
		}
		r = q
	}
}

// nextSet returns the first index >= i of a non-zero byte of m, or len(m).
func nextSet(m []uint8, i int) int {
	for ; i < len(m) && i&7 != 0; i++ {
		if m[i] != 0 {
			return i
		}
	}
	for ; i+8 <= len(m); i += 8 {
		if w := binary.LittleEndian.Uint64(m[i:]); w != 0 {
			for ; m[i] == 0; i++ {
			}
			return i
		}
	}
	for ; i < len(m); i++ {
		if m[i] != 0 {
			return i
		}
	}
	return len(m)
}
