package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quarrydb/quarry/catalog/infer"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Read options: how a schema card tells the catalog to read a delimited
// text file (docs/DATA_FORMATS.md, "Read options and type overrides").
//
// They live in the card's "read" object; a column entry's "type" (and
// "format") overrides the inferred type. Like the rest of a card they
// merge field by field, later wins (_overall.json from the root down, then
// <stem>.schema.json, then <file>.schema.json), so a folder card can set
// an encoding for every file below it. The catalog hands the merged
// options to the format when it opens the file (FileInfo.Read); a file
// whose options changed is opened again by the next scan.

// ReadOptions is the "read" object of a schema card. Every field is
// optional; an unset field keeps the default (sniffed or inferred).
type ReadOptions struct {
	// Delimiter is one character ("," ";" "|"; "\t" or "tab" for a tab).
	Delimiter string `json:"delimiter,omitempty"`
	// Quote is the quote character; "" turns quoting off. Unset: '"'.
	Quote *string `json:"quote,omitempty"`
	// Escape is the character that escapes a quote (or itself) inside a
	// quoted field. Unset or equal to Quote: a doubled quote (RFC 4180).
	Escape string `json:"escape,omitempty"`
	// Header: true (the first row, the default), false (no header row:
	// columns are named column_1, column_2, ...) or a row number n ≥ 1
	// (rows before it are skipped).
	Header *HeaderOption `json:"header,omitempty"`
	// SkipRows skips that many lines at the start of the file (before the
	// header).
	SkipRows int `json:"skip_rows,omitempty"`
	// Comment skips every line that starts with this prefix.
	Comment string `json:"comment,omitempty"`
	// NullValues are cells read as null besides the empty cell ("NA", "-").
	NullValues []string `json:"null_values,omitempty"`
	// DecimalComma reads "1,5" as 1.5 in number columns.
	DecimalComma bool `json:"decimal_comma,omitempty"`
	// ThousandsSeparator is removed from numbers: "," "." "'" " " or "_".
	ThousandsSeparator string `json:"thousands_separator,omitempty"`
	// Encoding of the file: utf-8 (the default), utf-16 (with a byte
	// order mark), utf-16le, utf-16be, latin-1 (iso-8859-1), windows-1252.
	Encoding string `json:"encoding,omitempty"`
	// DateFormat and TimestampFormat are strftime-style layouts
	// ("%d.%m.%Y", "%d.%m.%Y %H:%M") for the columns of that type: a
	// column whose every value parses under one becomes a date
	// (timestamp) column.
	DateFormat      string `json:"date_format,omitempty"`
	TimestampFormat string `json:"timestamp_format,omitempty"`
}

// HeaderOption is the "header" read option: a boolean or a row number.
type HeaderOption struct {
	// Row is the 1-based row of the header; 0 means no header row.
	Row int
}

// UnmarshalJSON accepts true, false or a positive integer.
func (h *HeaderOption) UnmarshalJSON(b []byte) error {
	switch s := string(bytes.TrimSpace(b)); s {
	case "true":
		h.Row = 1
	case "false":
		h.Row = 0
	default:
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxSkipRows {
			return fmt.Errorf("header must be true, false or a row number from 1 to %d, not %s", maxSkipRows, s)
		}
		h.Row = n
	}
	return nil
}

// MarshalJSON writes true, false or the row number.
func (h HeaderOption) MarshalJSON() ([]byte, error) {
	switch h.Row {
	case 0:
		return []byte("false"), nil
	case 1:
		return []byte("true"), nil
	}
	return []byte(strconv.Itoa(h.Row)), nil
}

// Bounds of read options.
const (
	maxSkipRows   = 1 << 20
	maxNullValues = 64
	maxOptionText = 64 // bytes of a null value or comment prefix
)

// encodingNames maps the accepted encoding names to their canonical name.
var encodingNames = map[string]string{
	"utf-8": "utf-8", "utf8": "utf-8",
	"utf-16": "utf-16", "utf16": "utf-16",
	"utf-16le": "utf-16le", "utf-16be": "utf-16be",
	"latin-1": "latin-1", "latin1": "latin-1", "iso-8859-1": "latin-1", "iso8859-1": "latin-1",
	"windows-1252": "windows-1252", "cp1252": "windows-1252",
}

// CanonicalEncoding returns the canonical name of an encoding, or "".
func CanonicalEncoding(name string) string {
	return encodingNames[strings.ToLower(strings.TrimSpace(name))]
}

// OneChar checks an option holding exactly one character.
func OneChar(what, s string, allowEmpty bool) (rune, error) {
	if s == "" && allowEmpty {
		return 0, nil
	}
	if what == "delimiter" && strings.EqualFold(s, "tab") {
		return '\t', nil
	}
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || n != len(s) || r == utf8.RuneError {
		return 0, fmt.Errorf("%s must be one character, not %q", what, s)
	}
	if r == '\r' || r == '\n' {
		return 0, fmt.Errorf("%s cannot be a line break", what)
	}
	return r, nil
}

// Validate checks the options and returns the first problem.
func (o *ReadOptions) Validate() error {
	d, err := OneChar("delimiter", o.Delimiter, true)
	if err != nil {
		return err
	}
	var q rune = '"'
	if o.Quote != nil {
		if q, err = OneChar("quote", *o.Quote, true); err != nil {
			return err
		}
	}
	e, err := OneChar("escape", o.Escape, true)
	if err != nil {
		return err
	}
	if d != 0 && (d == q || d == e) {
		return errors.New("delimiter, quote and escape must differ")
	}
	if o.SkipRows < 0 || o.SkipRows > maxSkipRows {
		return fmt.Errorf("skip_rows must be from 0 to %d", maxSkipRows)
	}
	if len(o.Comment) > maxOptionText || strings.ContainsAny(o.Comment, "\r\n") {
		return fmt.Errorf("comment must be at most %d bytes on one line", maxOptionText)
	}
	if len(o.NullValues) > maxNullValues {
		return fmt.Errorf("at most %d null_values", maxNullValues)
	}
	for _, v := range o.NullValues {
		if v == "" || len(v) > maxOptionText {
			return fmt.Errorf("null value %q must be 1 to %d bytes", v, maxOptionText)
		}
	}
	switch o.ThousandsSeparator {
	case "", ",", ".", "'", " ", "_":
	default:
		return fmt.Errorf("thousands_separator must be one of , . ' space _ (not %q)", o.ThousandsSeparator)
	}
	if o.DecimalComma && o.ThousandsSeparator == "," {
		return errors.New("thousands_separator cannot be \",\" with decimal_comma")
	}
	if !o.DecimalComma && o.ThousandsSeparator == "." {
		return errors.New("thousands_separator \".\" needs decimal_comma")
	}
	if o.Encoding != "" && CanonicalEncoding(o.Encoding) == "" {
		return fmt.Errorf("encoding %q is not supported (use utf-8, utf-16, utf-16le, utf-16be, latin-1 or windows-1252)", o.Encoding)
	}
	if o.DateFormat != "" {
		if _, err := infer.CompileTimeFormat(o.DateFormat, false); err != nil {
			return fmt.Errorf("date_format: %v", err)
		}
	}
	if o.TimestampFormat != "" {
		if _, err := infer.CompileTimeFormat(o.TimestampFormat, true); err != nil {
			return fmt.Errorf("timestamp_format: %v", err)
		}
	}
	return nil
}

// mergeFrom sets every field n sets (later wins).
func (o *ReadOptions) mergeFrom(n *ReadOptions) {
	if n == nil {
		return
	}
	for _, f := range [][2]*string{{&o.Delimiter, &n.Delimiter}, {&o.Escape, &n.Escape}, {&o.Comment, &n.Comment},
		{&o.ThousandsSeparator, &n.ThousandsSeparator}, {&o.Encoding, &n.Encoding},
		{&o.DateFormat, &n.DateFormat}, {&o.TimestampFormat, &n.TimestampFormat}} {
		if *f[1] != "" {
			*f[0] = *f[1]
		}
	}
	if n.Quote != nil {
		q := *n.Quote
		o.Quote = &q
	}
	if n.Header != nil {
		h := *n.Header
		o.Header = &h
	}
	if n.SkipRows != 0 {
		o.SkipRows = n.SkipRows
	}
	if n.NullValues != nil {
		o.NullValues = append([]string(nil), n.NullValues...)
	}
	o.DecimalComma = o.DecimalComma || n.DecimalComma
}

// ReadSpec is what the schema cards of a file say about reading it: the
// merged read options and the columns' type overrides. The catalog sets
// FileInfo.Read; nil means no card has any.
type ReadSpec struct {
	// Options merged from the cards ("read" objects).
	Options ReadOptions
	// Types are the type overrides by column name.
	Types map[string]TypeOverride
	// Sources are the cards that contributed, relative paths.
	Sources []string
}

// TypeOverride is a column's type as a card sets it.
type TypeOverride struct {
	// Type is a type name as get_schema shows it (int64, string, date,
	// timestamp[ms, UTC], ...).
	Type string `json:"type"`
	// Format is a strftime layout for date/timestamp columns, or
	// epoch_s / epoch_ms for integers counting from the Unix epoch.
	Format string `json:"format,omitempty"`
}

// key identifies a spec's content (a changed card changes it).
func (s *ReadSpec) key() string {
	if s == nil {
		return ""
	}
	b, _ := json.Marshal(struct {
		O ReadOptions
		T map[string]TypeOverride
	}{s.Options, s.Types}) // map keys are sorted by encoding/json
	return string(b)
}

// HasOptions reports whether the read object sets anything.
func (s *ReadSpec) HasOptions() bool {
	return s != nil && s.Options.key() != ""
}

func (o ReadOptions) key() string {
	b, _ := json.Marshal(o)
	if string(b) == "{}" {
		return ""
	}
	return string(b)
}

// SourcesPhrase lists the cards as one phrase, for messages.
func (s *ReadSpec) SourcesPhrase() string {
	if s == nil || len(s.Sources) == 0 {
		return "its schema card"
	}
	return strings.Join(s.Sources, ", ")
}

// validateOverride checks a column card's type and format.
func validateOverride(c ColumnCard) error {
	if c.Type == "" {
		if c.Format != "" {
			return fmt.Errorf("column %q has a format but no type", c.Name)
		}
		return nil
	}
	t, err := infer.OverrideType(c.Type)
	if err != nil {
		return fmt.Errorf("column %q: %v", c.Name, err)
	}
	if c.Format == "" {
		return nil
	}
	switch t.ID {
	case infer.OvDate, infer.OvTimestamp:
	default:
		return fmt.Errorf("column %q: a format applies to date and timestamp columns only", c.Name)
	}
	if c.Format == "epoch_s" || c.Format == "epoch_ms" {
		if t.ID != infer.OvTimestamp {
			return fmt.Errorf("column %q: %s applies to timestamp columns", c.Name, c.Format)
		}
		return nil
	}
	if _, err := infer.CompileTimeFormat(c.Format, t.ID == infer.OvTimestamp); err != nil {
		return fmt.Errorf("column %q: format: %v", c.Name, err)
	}
	return nil
}

// readSpecOf merges the read options and type overrides of a card chain.
func readSpecOf(chain []*cardEntry) *ReadSpec {
	var spec ReadSpec
	found := false
	for _, e := range chain {
		used := false
		if e.card.Read != nil {
			spec.Options.mergeFrom(e.card.Read)
			used = true
		}
		for _, c := range e.card.Columns {
			if c.Type == "" {
				continue
			}
			if spec.Types == nil {
				spec.Types = map[string]TypeOverride{}
			}
			spec.Types[c.Name] = TypeOverride{Type: c.Type, Format: c.Format}
			used = true
		}
		if used {
			spec.Sources = append(spec.Sources, e.info.RelPath)
			found = true
		}
	}
	if !found {
		return nil
	}
	return &spec
}

// Describe lists the options in effect for get_schema: the sniffed or
// default ones with the card's on top.
func (o ReadOptions) Describe(delim rune, header int, sniffed []string, cards []string) map[string]any {
	m := map[string]any{"delimiter": string(delim)}
	if header == 0 {
		m["header"] = false
	} else if header == 1 {
		m["header"] = true
	} else {
		m["header"] = header
	}
	if o.Quote != nil && *o.Quote != `"` { // defaults are not shown
		m["quote"] = *o.Quote
	}
	if enc := CanonicalEncoding(o.Encoding); enc != "" && enc != "utf-8" {
		m["encoding"] = enc
	}
	if o.Escape != "" {
		m["escape"] = o.Escape
	}
	if o.SkipRows > 0 {
		m["skip_rows"] = o.SkipRows
	}
	if o.Comment != "" {
		m["comment"] = o.Comment
	}
	if len(o.NullValues) > 0 {
		m["null_values"] = o.NullValues
	}
	if o.DecimalComma {
		m["decimal_comma"] = true
	}
	if o.ThousandsSeparator != "" {
		m["thousands_separator"] = o.ThousandsSeparator
	}
	if o.DateFormat != "" {
		m["date_format"] = o.DateFormat
	}
	if o.TimestampFormat != "" {
		m["timestamp_format"] = o.TimestampFormat
	}
	if len(sniffed) > 0 {
		sort.Strings(sniffed)
		m["sniffed"] = sniffed
	}
	if len(cards) > 0 {
		m["from_cards"] = cards
	}
	return m
}

// Overrides reports whether the spec has type overrides.
func (s *ReadSpec) Overrides() bool { return s != nil && len(s.Types) > 0 }

// SameTypeName reports whether a card's type name names t.
func SameTypeName(name string, t arrow.DataType) bool {
	ov, err := infer.OverrideType(name)
	return err == nil && arrow.TypeEqual(ov.DT, t)
}

// CardReadPrefix starts the diagnostic of a data file that does not read
// under its schema card (IsCardReadProblem).
const CardReadPrefix = "does not read as its schema card says"

// IsCardReadProblem reports whether a diagnostic is about a data file
// that does not read under its schema card's options or type overrides
// (`quarry schema-card check` lists them).
func IsCardReadProblem(d Diagnostic) bool { return strings.HasPrefix(d.Reason, CardReadPrefix) }
