package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Schema cards.
//
// A schema card describes a dataset beyond what its file says: a
// description, tags (free key/value pairs such as year or source_type) and,
// per column, a role, a description and a unit. Cards come from two kinds
// of sidecar files, which are read-only inputs (the catalog never writes
// them) and are never datasets themselves:
//
//   - "<data file>.schema.json" (orders.csv.schema.json) or
//     "<stem>.schema.json" (orders.schema.json) next to a data file: the card
//     of that file's datasets;
//   - "_overall.json" in a folder: tags and column defaults for every
//     dataset in the folder and below (a nearer folder wins).
//
// Both hold a CardFile. Merge order, later wins field by field: _overall.json
// from the root down to the dataset's folder, then <stem>.schema.json, then
// <data file>.schema.json. A sidecar that is not valid JSON, has unknown
// fields or invalid values is reported in Diagnostics and ignored; a column
// entry naming a column the dataset does not have is reported and skipped.

// Sidecar file names.
const (
	// CardSuffix ends the name of a per-file schema card sidecar.
	CardSuffix = ".schema.json"
	// FolderCardName is the name of a per-folder card.
	FolderCardName = "_overall.json"
	// MaxCardBytes is the largest sidecar read; bigger ones are reported and ignored.
	MaxCardBytes = 1 << 20
)

// CardFile is the JSON content of a sidecar (<file>.schema.json) or of a
// folder's _overall.json.
type CardFile struct {
	// Description of the dataset (sidecar) or of the folder (_overall.json,
	// informational only).
	Description string `json:"description,omitempty"`
	// Tags are free key/value pairs (values: strings, numbers or booleans,
	// kept as strings) used to filter get_catalog.
	Tags map[string]any `json:"tags,omitempty"`
	// Columns describe columns by name, in any order.
	Columns []ColumnCard `json:"columns,omitempty"`
	// Read holds the read options of delimited text files (readopts.go).
	Read *ReadOptions `json:"read,omitempty"`
}

// ColumnCard is what a card says about one column.
type ColumnCard struct {
	// Name is the column name, exactly as in the file's header.
	Name string `json:"name"`
	// Type, when it differs from the inferred type, overrides it for CSV
	// files (any of OverrideTypes; a value that does not parse makes the
	// file a diagnostic naming row and column). For other formats it must
	// match the inferred type or the card is reported.
	Type string `json:"type,omitempty"`
	// Format is the layout of a date or timestamp Type (strftime style,
	// "%d.%m.%Y"), or epoch_s / epoch_ms for integer seconds or
	// milliseconds since the Unix epoch.
	Format string `json:"format,omitempty"`
	// Role classifies the column: a lower-case identifier such as id,
	// dimension, measure, time, text, flag — or a domain word (allocated,
	// revised, actual).
	Role string `json:"role,omitempty"`
	// Description is free text.
	Description string `json:"description,omitempty"`
	// Unit of the values (EUR, mm, °C, ...).
	Unit string `json:"unit,omitempty"`
}

// Card is the merged schema card of one dataset (Dataset.Card).
type Card struct {
	// Description from the nearest sidecar that has one ("" if none).
	Description string
	// Tags merged from every applicable card; nil when none.
	Tags map[string]string
	// Columns by column name; only columns of the dataset appear.
	Columns map[string]ColumnCard
	// Sources are the sidecars merged, relative paths, in merge order.
	Sources []string
}

// Column returns the card of column name (zero value when none).
func (c *Card) Column(name string) ColumnCard {
	if c == nil {
		return ColumnCard{}
	}
	return c.Columns[name]
}

// IsCardFile reports whether a file name (base name only) is a schema card
// sidecar or a folder card. Such files are never datasets.
func IsCardFile(name string) bool {
	lower := strings.ToLower(name)
	return lower == FolderCardName || (strings.HasSuffix(lower, CardSuffix) && len(lower) > len(CardSuffix))
}

var (
	roleRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	tagRe  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)
)

// ParseCardFile decodes and validates a sidecar. It returns the card and
// problems that make it unusable (the error); unknown fields, bad roles,
// bad tag keys or values and duplicate column entries are errors.
func ParseCardFile(b []byte) (*CardFile, error) {
	if len(b) > MaxCardBytes {
		return nil, fmt.Errorf("schema card is %d bytes; the limit is %d", len(b), MaxCardBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cf CardFile
	if err := dec.Decode(&cf); err != nil {
		return nil, fmt.Errorf("invalid schema card: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid schema card: trailing data after the JSON object")
	}
	for k, v := range cf.Tags {
		if !tagRe.MatchString(k) {
			return nil, fmt.Errorf("invalid schema card: tag key %q (use letters, digits, _ . -; start with a letter)", k)
		}
		if _, err := tagString(v); err != nil {
			return nil, fmt.Errorf("invalid schema card: tag %q: %v", k, err)
		}
	}
	seen := map[string]bool{}
	for i, c := range cf.Columns {
		if strings.TrimSpace(c.Name) == "" {
			return nil, fmt.Errorf("invalid schema card: columns[%d] has no name", i)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("invalid schema card: column %q is described twice", c.Name)
		}
		seen[c.Name] = true
		if c.Role != "" && !roleRe.MatchString(c.Role) {
			return nil, fmt.Errorf("invalid schema card: column %q: role %q must be a lower-case identifier (e.g. id, dimension, measure, time)", c.Name, c.Role)
		}
		if err := validateOverride(c); err != nil {
			return nil, fmt.Errorf("invalid schema card: %v", err)
		}
	}
	if cf.Read != nil {
		if err := cf.Read.Validate(); err != nil {
			return nil, fmt.Errorf("invalid schema card: read: %v", err)
		}
	}
	return &cf, nil
}

// tagString turns a scalar tag value into its string form.
func tagString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if len(x) > 200 {
			return "", errors.New("value longer than 200 characters")
		}
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	}
	return "", errors.New("values must be strings, numbers or booleans")
}

// TypeName is the type name a card uses for an Arrow type (the same names
// get_schema shows): int64, float64, string, bool, date, timestamp[ms, UTC], ...
func TypeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "string"
	case arrow.DATE32, arrow.DATE64:
		return "date"
	case arrow.TIMESTAMP:
		ts := t.(*arrow.TimestampType)
		if ts.TimeZone != "" {
			return "timestamp[" + ts.Unit.String() + ", " + ts.TimeZone + "]"
		}
		return "timestamp[" + ts.Unit.String() + "]"
	}
	return t.String()
}

// StarterCard returns a card for ds with every column listed (name, type
// and its current role, description and unit, if any) — the starting point
// `quarry schema-card init` writes.
func StarterCard(ds *Dataset) *CardFile {
	cf := &CardFile{Description: ds.Description, Columns: []ColumnCard{}}
	if ds.Card != nil && len(ds.Card.Tags) > 0 {
		cf.Tags = map[string]any{}
		for k, v := range ds.Card.Tags {
			cf.Tags[k] = v
		}
	}
	for _, f := range ds.Schema.Fields() {
		c := ds.Card.Column(f.Name)
		c.Name, c.Type = f.Name, TypeName(f.Type)
		cf.Columns = append(cf.Columns, c)
	}
	return cf
}

// cardEntry is one sidecar found by a scan and what was made of it.
type cardEntry struct {
	info FileInfo
	card *CardFile // nil when err != nil
	err  error
}

func (e *cardEntry) unchanged(f FileInfo) bool {
	return sameVersion(e.info, f)
}

// cardIndex is the set of sidecars of one scan, by relative path.
type cardIndex struct {
	byPath map[string]*cardEntry
}

// loadCards parses the sidecars found by a walk, reusing the entries of
// prev whose file is unchanged. It never fails: unreadable or invalid
// sidecars become entries with an error.
func (c *Catalog) loadCards(files []FileInfo, prev *cardIndex) *cardIndex {
	idx := &cardIndex{byPath: make(map[string]*cardEntry, len(files))}
	for _, f := range files {
		if prev != nil {
			if old, ok := prev.byPath[f.RelPath]; ok && old.unchanged(f) {
				idx.byPath[f.RelPath] = old
				continue
			}
		}
		e := &cardEntry{info: f}
		e.card, e.err = readCard(f)
		if e.err != nil {
			c.log.Warn("catalog: ignoring schema card", "path", f.RelPath, "reason", e.err.Error())
		}
		idx.byPath[f.RelPath] = e
	}
	return idx
}

func readCard(f FileInfo) (*CardFile, error) {
	if f.Size > MaxCardBytes {
		return nil, fmt.Errorf("schema card is %d bytes; the limit is %d", f.Size, MaxCardBytes)
	}
	fh, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("cannot read schema card: %v", reason(unwrapPathErr(err)))
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxCardBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read schema card: %v", unwrapPathErr(err))
	}
	return ParseCardFile(b)
}

// cardMemo keeps the carded copy of a dataset across snapshots, so an
// unchanged dataset with unchanged sidecars stays the same *Dataset.
type cardMemo map[*Dataset]memoEntry

type memoEntry struct {
	sig string // the sidecar entries merged, by identity
	out *Dataset
}

// applyCards returns ds with its card merged in (a copy), or ds itself
// when no card applies. used collects the sidecars that matched a dataset;
// diags receives column problems (reported once per sidecar and column).
func (idx *cardIndex) applyCards(ds *Dataset, prev, next cardMemo, used map[string]bool, diags map[Diagnostic]bool) *Dataset {
	if idx == nil || len(idx.byPath) == 0 {
		return ds
	}
	chain, nFolder := idx.chain(ds.Path, used)
	if len(chain) == 0 {
		return ds
	}
	var sig strings.Builder
	for _, e := range chain {
		fmt.Fprintf(&sig, "%p;", e)
	}
	if m, ok := prev[ds]; ok && m.sig == sig.String() {
		next[ds] = m
		return m.out
	}

	card := &Card{Columns: map[string]ColumnCard{}}
	for i, e := range chain {
		folder := i < nFolder
		card.Sources = append(card.Sources, e.info.RelPath)
		if !folder && e.card.Description != "" {
			card.Description = e.card.Description
		}
		for k, v := range e.card.Tags {
			s, _ := tagString(v)
			if card.Tags == nil {
				card.Tags = map[string]string{}
			}
			card.Tags[k] = s
		}
		if e.card.Read != nil && ds.Kind != KindCSV && !folder {
			diags[Diagnostic{Path: e.info.RelPath, Level: "warning",
				Reason: "schema card has read options, which apply to CSV/TSV files only; " + ds.Path + " is read without them"}] = true
		}
		for _, cc := range e.card.Columns {
			f, ok := fieldByName(ds.Schema, cc.Name)
			if !ok {
				if !folder { // folder cards describe many datasets: unknown names are expected
					diags[Diagnostic{Path: e.info.RelPath, Level: "warning",
						Reason: "schema card describes column " + quote(cc.Name) + " which " + ds.Path + " does not have; entry ignored"}] = true
				}
				continue
			}
			if cc.Type != "" && !cardTypesApply(ds.Kind) && !SameTypeName(cc.Type, f.Type) {
				diags[Diagnostic{Path: e.info.RelPath, Level: "warning",
					Reason: fmt.Sprintf("schema card says column %s is %s but %s infers %s; the card's type is ignored (type overrides apply to CSV, JSON and Excel files)", quote(cc.Name), cc.Type, ds.Path, TypeName(f.Type))}] = true
			}
			cur := card.Columns[cc.Name]
			cur.Name = cc.Name
			cur.Type = TypeName(f.Type)
			if cc.Role != "" {
				cur.Role = cc.Role
			}
			if cc.Description != "" {
				cur.Description = cc.Description
			}
			if cc.Unit != "" {
				cur.Unit = cc.Unit
			}
			card.Columns[cc.Name] = cur
		}
	}
	out := *ds
	out.Card = card
	if card.Description != "" {
		out.Description = card.Description
	}
	next[ds] = memoEntry{sig: sig.String(), out: &out}
	return &out
}

// chain lists the valid sidecars that apply to the data file at rel, in
// merge order, and how many of them are folder cards; used (when not
// nil) collects every sidecar that matched, valid or not.
func (idx *cardIndex) chain(rel string, used map[string]bool) ([]*cardEntry, int) {
	if idx == nil || len(idx.byPath) == 0 {
		return nil, 0
	}
	var chain []*cardEntry
	dir := path.Dir(rel)
	// Folder cards from the root down to the dataset's folder.
	var dirs []string
	for d := dir; ; d = path.Dir(d) {
		dirs = append(dirs, d)
		if d == "." || d == "/" || d == "" {
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		p := FolderCardName
		if dirs[i] != "." {
			p = dirs[i] + "/" + FolderCardName
		}
		if e, ok := idx.byPath[p]; ok {
			if used != nil {
				used[p] = true
			}
			if e.err == nil {
				chain = append(chain, e)
			}
		}
	}
	nFolder := len(chain)
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	stem, _ := splitExt(path.Base(rel))
	for _, p := range []string{prefix + stem + CardSuffix, rel + CardSuffix} {
		if e, ok := idx.byPath[p]; ok {
			if used != nil {
				used[p] = true
			}
			if e.err == nil {
				chain = append(chain, e)
			}
		}
	}
	return chain, nFolder
}

// readSpec is the read options and type overrides the sidecars give the
// data file at rel (nil when none).
func (idx *cardIndex) readSpec(rel string) *ReadSpec {
	chain, _ := idx.chain(rel, nil)
	return readSpecOf(chain)
}

// diagnostics reports invalid sidecars, sidecars that describe no
// dataset and the column problems applyCards collected (extra), sorted.
func (idx *cardIndex) diagnostics(used map[string]bool, extra map[Diagnostic]bool) []Diagnostic {
	if idx == nil {
		return nil
	}
	var out []Diagnostic
	for d := range extra {
		out = append(out, d)
	}
	for p, e := range idx.byPath {
		switch {
		case e.err != nil:
			out = append(out, Diagnostic{Path: p, Level: "warning", Reason: e.err.Error() + "; the card is ignored"})
		case !used[p] && path.Base(p) != FolderCardName:
			out = append(out, Diagnostic{Path: p, Level: "warning", Reason: "schema card matches no data file next to it"})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

func fieldByName(s *arrow.Schema, name string) (arrow.Field, bool) {
	idx := s.FieldIndices(name)
	if len(idx) == 0 {
		return arrow.Field{}, false
	}
	return s.Field(idx[0]), true
}
