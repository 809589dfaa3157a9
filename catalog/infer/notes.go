package infer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// kindStep is one change of a column's kind during inference: with the
// cell val of data row row (1-based, header excluded), the column's kind
// became kind.
type kindStep struct {
	row  int64
	val  string
	kind Kind
}

// Trace is a column's kind changes in file order: its first non-empty
// cell, then every cell that changed the kind. The last step's kind is the
// column's kind. Because kinds join (joinKinds), the trace of a file is the
// traces of its chunks merged in order (merge).
type Trace []kindStep

// maxStepVal bounds the bytes of a cell a trace keeps. Numbers and dates
// are shorter, so a cut value is only ever shown, never classified.
const maxStepVal = 64

// Step appends a step for cell f of row row that made the kind k. f may
// alias a reused buffer: it is copied.
func (t *Trace) Step(row int64, f string, k Kind) {
	if len(f) > maxStepVal {
		n := maxStepVal
		for n > 0 && !utf8.RuneStart(f[n]) {
			n--
		}
		f = f[:n] + "…"
	} else {
		f = strings.Clone(f)
	}
	*t = append(*t, kindStep{row: row, val: f, kind: k})
}

// kind is the kind the trace ends at.
func (t Trace) Kind() Kind {
	if len(t) == 0 {
		return KindNull
	}
	return t[len(t)-1].kind
}

// Merge appends the steps of the trace of the next part of the file,
// whose rows start after off rows, that change the running kind.
func (t Trace) Merge(next Trace, off int64) Trace {
	run := t.Kind()
	for _, s := range next {
		if k := JoinKinds(run, s.kind); k != run {
			t = append(t, kindStep{row: s.row + off, val: s.val, kind: k})
			run = k
		}
	}
	return t
}

// ColumnNote is what type inference tells about a column beyond its type.
type ColumnNote struct {
	// Format is the layout of a date or timestamp column ("YYYY/MM/DD",
	// "Mon D YYYY", ...).
	Format string `json:"format,omitempty"`
	// Hint says why a column that looks numeric or date-like is text.
	Hint string `json:"hint,omitempty"`
	// Warning names the first value of a date-like column that did not
	// parse (the column is then text).
	Warning string `json:"warning,omitempty"`
}

// Note derives the column note from a column's trace; the zero note when
// there is nothing to tell.
func (t Trace) Note() ColumnNote {
	var n ColumnNote
	k := t.Kind()
	if len(t) == 0 {
		return n
	}
	if !k.Textual() {
		n.Format = k.layout()
		return n
	}
	last := t[len(t)-1]
	switch k {
	case KindNumNoDot, KindNumText:
		n.Hint = "looks numeric, but " + t.numReason() + "; kept as text so nothing is lost"
	case KindDateAmbig, KindTSAmbig:
		n.Hint = fmt.Sprintf("looks like dates, but every value (like %q) reads both as month/day and as day/month; kept as text so nothing is misread", t[0].val)
	case KindString:
		if len(t) > 1 && t[len(t)-2].kind.IsDateLike() {
			prev := t[len(t)-2].kind
			n.Warning = fmt.Sprintf("looks like dates (%s) but did not parse in full: row %d holds %q; kept as text", prev.layout(), last.row, last.val)
		}
	}
	return n
}

// numReason says why a column of numeric text is not a number column, from
// the cell that made it so (the last step) and, when an integer too long
// for a float64 meets a non-integer, both.
func (t Trace) numReason() string {
	v := t[len(t)-1].val
	ck := Classify(v)
	switch {
	case ck == KindNumText:
		d := v
		if d[0] == '-' || d[0] == '+' {
			d = d[1:]
		}
		switch {
		case v[0] == '+':
			return fmt.Sprintf("values like %q carry a leading \"+\"", v)
		case len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9':
			return fmt.Sprintf("values like %q have leading zeros", v)
		case digits(d):
			return fmt.Sprintf("values like %q are beyond the int64 range and have more digits than a float64 keeps", v)
		}
		return fmt.Sprintf("values like %q have more significant digits than a float64 keeps", v)
	case t.Kind() == KindNumNoDot:
		d := v
		if d[0] == '-' {
			d = d[1:]
		}
		switch {
		case v == "-0":
			return `values like "-0" are not integers (as an integer it prints as 0)`
		case digits(d):
			return fmt.Sprintf("values like %q are beyond the int64 range", v)
		}
		return fmt.Sprintf("values like %q use exponent notation in a column without decimals", v)
	}
	// An integer float64 cannot hold exactly, and a value that is no integer.
	wide, other := v, ""
	if ck == KindIntWide {
		if len(t) > 1 {
			other = t[len(t)-2].val
		}
	} else {
		other = v
		for _, s := range t {
			if s.kind == KindIntWide {
				wide = s.val
				break
			}
		}
	}
	return fmt.Sprintf("integers like %q have more digits than a float64 keeps while values like %q are not integers", wide, other)
}
