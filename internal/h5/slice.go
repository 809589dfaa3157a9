package h5

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/quarrydb/quarry/internal/qerr"
)

// MaxSliceLen caps the length of a slice string.
const MaxSliceLen = 4096

// Selection is a parsed slice: for every dataset dimension a start, a
// positive stride and a count of selected elements, plus which dimensions
// were indexed by a single integer (and so are dropped from the result
// shape, as in NumPy).
type Selection struct {
	Start   []int64 // first selected index per dimension
	Stride  []int64 // step per dimension (>= 1)
	Count   []int64 // selected elements per dimension
	Dropped []bool  // dimension indexed by a single integer
}

// Hyperslab returns the selection as an HDF5 hyperslab.
func (s Selection) Hyperslab() Hyperslab {
	return Hyperslab{Start: s.Start, Stride: s.Stride, Count: s.Count}
}

// Shape is the result shape: the counts of the dimensions not dropped.
func (s Selection) Shape() []int64 {
	out := make([]int64, 0, len(s.Count))
	for i, c := range s.Count {
		if !s.Dropped[i] {
			out = append(out, c)
		}
	}
	return out
}

// NumElements is the number of selected elements (saturating).
func (s Selection) NumElements() int64 {
	return Hyperslab{Count: s.Count}.NumElements()
}

// Full selects everything of a dataset of the given shape.
func Full(shape []int64) Selection {
	s := Selection{
		Start:   make([]int64, len(shape)),
		Stride:  make([]int64, len(shape)),
		Count:   make([]int64, len(shape)),
		Dropped: make([]bool, len(shape)),
	}
	for i, n := range shape {
		s.Stride[i] = 1
		s.Count[i] = n
	}
	return s
}

type slicePart struct {
	ellipsis bool
	index    bool
	idx      int64
	// slice fields; has* false when omitted
	start, stop, step          int64
	hasStart, hasStop, hasStep bool
	text                       string
}

// ParseSlice parses a NumPy-style slice string against a dataset shape.
// The string is a comma-separated list of parts, one per leading dimension;
// each part is an integer index (negative counts from the end; the dimension
// is dropped from the result), a slice start:stop[:step] with any field
// omitted (or None; negative start/stop count from the end and are clamped
// like NumPy; step must be positive), or "..." (at most once) standing for
// as many full slices as needed. Missing trailing parts select everything;
// an empty string (or "()") selects the whole dataset. One enclosing pair of
// brackets is tolerated. Nothing is ever evaluated. Errors are qerr errors
// with code invalid_slice whose hint names the dataset shape.
func ParseSlice(s string, shape []int64) (Selection, error) {
	rank := len(shape)
	bad := func(format string, args ...any) error {
		return qerr.Invalid(qerr.CodeInvalidSlice, format, args...).
			WithHint("the dataset shape is %s; use NumPy syntax such as \"0:10, :\", \"5\", \"::2\" or \"...\"", fmtShape(shape)).
			With("shape", shape)
	}
	if len(s) > MaxSliceLen {
		return Selection{}, bad("slice string is too long (%d characters, limit %d)", len(s), MaxSliceLen)
	}
	body := strings.TrimSpace(s)
	if len(body) >= 2 && ((body[0] == '[' && body[len(body)-1] == ']') || (body[0] == '(' && body[len(body)-1] == ')')) {
		body = strings.TrimSpace(body[1 : len(body)-1])
	}
	var parts []slicePart
	if body != "" {
		raw := strings.Split(body, ",")
		// A single trailing comma is allowed ("0," is the tuple (0,)).
		if len(raw) > 1 && strings.TrimSpace(raw[len(raw)-1]) == "" {
			raw = raw[:len(raw)-1]
		}
		seenEllipsis := false
		for _, r := range raw {
			p, err := parsePart(strings.TrimSpace(r))
			if err != nil {
				return Selection{}, bad("%v", err)
			}
			if p.ellipsis {
				if seenEllipsis {
					return Selection{}, bad("an index can only have a single ellipsis (\"...\")")
				}
				seenEllipsis = true
			}
			parts = append(parts, p)
		}
	}
	// Expand the ellipsis (or pad at the end) to cover every dimension.
	nonEllipsis := 0
	for _, p := range parts {
		if !p.ellipsis {
			nonEllipsis++
		}
	}
	if nonEllipsis > rank {
		return Selection{}, bad("too many indices: the slice has %d parts but the dataset has %d dimension(s)", nonEllipsis, rank)
	}
	full := make([]slicePart, 0, rank)
	expanded := false
	for _, p := range parts {
		if p.ellipsis {
			for i := 0; i < rank-nonEllipsis; i++ {
				full = append(full, slicePart{text: ":"})
			}
			expanded = true
			continue
		}
		full = append(full, p)
	}
	if !expanded {
		for len(full) < rank {
			full = append(full, slicePart{text: ":"})
		}
	}
	sel := Selection{
		Start:   make([]int64, rank),
		Stride:  make([]int64, rank),
		Count:   make([]int64, rank),
		Dropped: make([]bool, rank),
	}
	for d, p := range full {
		n := shape[d]
		if n < 0 {
			n = 0
		}
		if p.index {
			i := p.idx
			if i < 0 {
				i += n
			}
			if i < 0 || i >= n {
				return Selection{}, bad("index %d is out of bounds for axis %d with size %d", p.idx, d, n)
			}
			sel.Start[d], sel.Stride[d], sel.Count[d], sel.Dropped[d] = i, 1, 1, true
			continue
		}
		step := int64(1)
		if p.hasStep {
			step = p.step
		}
		start := int64(0)
		if p.hasStart {
			start = clampBound(p.start, n)
		}
		stop := n
		if p.hasStop {
			stop = clampBound(p.stop, n)
		}
		count := int64(0)
		if stop > start {
			count = (stop-start-1)/step + 1
		}
		if start > n {
			start = n
		}
		sel.Start[d], sel.Stride[d], sel.Count[d] = start, step, count
		if count == 0 {
			sel.Start[d] = 0
		}
	}
	return sel, nil
}

// clampBound resolves a NumPy slice bound (negative from the end) into [0, n].
func clampBound(v, n int64) int64 {
	if v < 0 {
		v += n
		if v < 0 {
			return 0
		}
		return v
	}
	if v > n {
		return n
	}
	return v
}

func parsePart(t string) (slicePart, error) {
	p := slicePart{text: t}
	switch {
	case t == "":
		return p, fmt.Errorf("empty index between commas")
	case t == "..." || t == "Ellipsis":
		p.ellipsis = true
		return p, nil
	}
	if !strings.Contains(t, ":") {
		v, err := parseInt(t)
		if err != nil {
			return p, err
		}
		p.index, p.idx = true, v
		return p, nil
	}
	fields := strings.Split(t, ":")
	if len(fields) > 3 {
		return p, fmt.Errorf("%q has too many colons (use start:stop:step)", t)
	}
	get := func(i int) (int64, bool, error) {
		if i >= len(fields) {
			return 0, false, nil
		}
		f := strings.TrimSpace(fields[i])
		if f == "" || f == "None" {
			return 0, false, nil
		}
		v, err := parseInt(f)
		return v, err == nil, err
	}
	var err error
	if p.start, p.hasStart, err = get(0); err != nil {
		return p, err
	}
	if p.stop, p.hasStop, err = get(1); err != nil {
		return p, err
	}
	if p.step, p.hasStep, err = get(2); err != nil {
		return p, err
	}
	if p.hasStep && p.step <= 0 {
		if p.step == 0 {
			return p, fmt.Errorf("slice step cannot be zero in %q", t)
		}
		return p, fmt.Errorf("negative slice steps are not supported (in %q); read forward and reverse on the client", t)
	}
	return p, nil
}

func parseInt(t string) (int64, error) {
	s := t
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return 0, fmt.Errorf("%q is not an integer", t)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not an integer, a start:stop:step slice or \"...\"", t)
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", t)
	}
	return v, nil
}

func fmtShape(shape []int64) string {
	if len(shape) == 0 {
		return "() (a scalar)"
	}
	var sb strings.Builder
	sb.WriteString("(")
	for i, d := range shape {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatInt(d, 10))
	}
	if len(shape) == 1 {
		sb.WriteString(",")
	}
	sb.WriteString(")")
	return sb.String()
}
