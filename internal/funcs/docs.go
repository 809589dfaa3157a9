package funcs

import (
	"fmt"
	"strings"
)

// The function tables of docs/QUERY.md are generated from the registry.
// Each sits between a begin and an end marker:
//
//	<!-- generated: NAME (go test ./internal/funcs -update) -->
//	...
//	<!-- end generated: NAME -->
//
// and ReplaceDocSections rewrites them; the test of this package fails when
// the document differs from the registry.

// DocSection is one generated table: its marker name and its Markdown text.
type DocSection struct {
	Name, Text string
}

// DocSections returns the generated tables: "filter-ops", "aggregates",
// "operators" and "functions".
func DocSections() []DocSection {
	return []DocSection{
		{"filter-ops", opTable()},
		{"aggregates", aggTable()},
		{"operators", operatorTable()},
		{"functions", scalarTable()},
		{"window-functions", windowTable()},
	}
}

func opTable() string {
	var b strings.Builder
	b.WriteString("| op | value | matches | null / NaN | `case_insensitive` |\n| --- | --- | --- | --- | --- |\n")
	for _, d := range Ops() {
		ci := ""
		if d.CaseInsensitive {
			ci = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Op, d.operandDoc(), d.Doc, d.Nulls, ci)
	}
	return b.String()
}

func (d *OpDecl) operandDoc() string {
	switch d.Operand {
	case OperandNone:
		return "none"
	case OperandPattern:
		return fmt.Sprintf("RE2 pattern, ≤ %s characters", thousands(MaxPatternLen))
	case OperandList:
		return "non-empty list"
	case OperandRange:
		return "`{\"min\": a, \"max\": b}` (either may be omitted; also `[a, b]`)"
	}
	if d.StringOnly {
		return "string"
	}
	return "scalar"
}

func aggTable() string {
	var b strings.Builder
	b.WriteString("| fn | input | output | semantics |\n| --- | --- | --- | --- |\n")
	for _, d := range Aggs() {
		in := d.Input.Doc
		if d.Star {
			in += ", or `*`"
		}
		if d.Param {
			in += ", `q` in [0, 1] required"
		}
		if a := d.Arg; a != nil {
			in += "; `arg` (" + a.Name + "; " + a.Doc + "): "
			switch {
			case a.Input != nil:
				in += a.Input.Doc + " column"
			case a.Default != nil:
				in += fmt.Sprintf("text, default `%s`", *a.Default)
			default:
				in += "text, required"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", d.Fn, in, d.ResultDoc, d.Doc)
	}
	return b.String()
}

func scalarTable() string {
	var b strings.Builder
	b.WriteString("| function | arguments | result | semantics |\n| --- | --- | --- | --- |\n")
	for _, d := range Scalars() {
		if d.Operator {
			continue
		}
		args, res, doc := "x: number", "type of x (int64 or float64)", d.Doc
		if d.Digits {
			args += fmt.Sprintf("; digits: integer literal in [-%d, %d]", MaxDigits, MaxDigits)
		}
		if d.FloatResult {
			res = "float64"
		}
		if d.General() {
			args, res, doc = d.argsDoc(), d.ResultDoc, d.Doc+"; null: "+d.nullsDoc()
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", cell(d.Signature), args, res, cell(doc))
	}
	return b.String()
}

func operatorTable() string {
	var b strings.Builder
	b.WriteString("| syntax | operands | result | semantics | null |\n| --- | --- | --- | --- | --- |\n")
	for _, d := range Scalars() {
		if d.Operator {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", cell(d.Signature), d.argsDoc(), d.ResultDoc, cell(d.Doc), d.nullsDoc())
		}
	}
	return b.String()
}

// argsDoc lists the distinct argument classes of a general function.
func (d *ScalarDecl) argsDoc() string {
	n := d.MaxArgs
	if n < 0 {
		n = d.MinArgs + 1
	}
	if d.ArgsDoc != "" {
		return d.ArgsDoc
	}
	var parts []string
	seen := map[Arg]bool{}
	for i := range max(n, 1) {
		if a := d.Param(i, n); !seen[a] {
			seen[a] = true
			parts = append(parts, a.Doc())
		}
	}
	if d.MaxArgs == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// cell escapes the pipes of a table cell (also inside code spans).
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (d *ScalarDecl) nullsDoc() string {
	if d.Nulls == "" {
		return "a null argument gives null"
	}
	return d.Nulls
}

// thousands formats n with comma separators: 1000 -> "1,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func beginMarker(name string) string {
	return "<!-- generated: " + name + " (go test ./internal/funcs -update) -->\n"
}

func endMarker(name string) string { return "<!-- end generated: " + name + " -->" }

// ReplaceDocSections returns doc with the text between every pair of
// generated-section markers replaced by the current DocSections. A missing
// marker is an error.
func ReplaceDocSections(doc string) (string, error) {
	for _, s := range DocSections() {
		begin, end := beginMarker(s.Name), endMarker(s.Name)
		i := strings.Index(doc, begin)
		j := strings.Index(doc, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("funcs: generated section %q not found (want the line %q and, after it, %q)", s.Name, strings.TrimSpace(begin), end)
		}
		doc = doc[:i+len(begin)] + s.Text + doc[j:]
	}
	return doc, nil
}
