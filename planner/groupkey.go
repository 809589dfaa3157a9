package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// GroupKeys is Spec.GroupBy: the group keys, each in the string form of a
// columns entry (a column name, or an expression with an optional trailing
// "AS name"). In JSON an element is either that string or an object
// {"expr": ..., "as": ...} (GroupKey), which UnmarshalJSON turns into the
// string form; MarshalJSON writes strings. A []string literal converts
// implicitly.
type GroupKeys []string

// GroupKey is the object form of a group_by element.
type GroupKey struct {
	// Expr is a column name or an expression, as in columns (without AS).
	Expr string `json:"expr"`
	// As names the key's output column; default the column name or the
	// expression's normalized text.
	As string `json:"as,omitempty"`
}

// Text is the string form of k: Expr, with " AS as" when As is set (a
// bare column name that is not an identifier is then double-quoted, so
// that the text parses).
func (k GroupKey) Text() string {
	if k.As == "" {
		return k.Expr
	}
	e := k.Expr
	if !LooksLikeExpr(e) {
		e = quoteIdent(strings.TrimSpace(e))
	}
	return e + " AS " + quoteIdent(k.As)
}

// UnmarshalJSON accepts a JSON array of strings and {expr, as?} objects
// (null is an empty list).
func (g *GroupKeys) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*g = nil
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return fmt.Errorf("group_by: want a list of column names, expressions or {\"expr\", \"as\"} objects: %w", err)
	}
	out := make(GroupKeys, 0, len(raws))
	for i, r := range raws {
		r = bytes.TrimSpace(r)
		if len(r) > 0 && r[0] == '"' {
			var s string
			if err := json.Unmarshal(r, &s); err != nil {
				return fmt.Errorf("group_by[%d]: %w", i, err)
			}
			out = append(out, s)
			continue
		}
		if len(r) == 0 || r[0] != '{' {
			return fmt.Errorf("group_by[%d]: want a string (column or expression) or an object {\"expr\": ..., \"as\": ...}, got %s", i, r)
		}
		var k GroupKey
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&k); err != nil {
			return fmt.Errorf("group_by[%d]: %w", i, err)
		}
		if strings.TrimSpace(k.Expr) == "" {
			return fmt.Errorf("group_by[%d]: expr is required in {\"expr\": ..., \"as\": ...}", i)
		}
		out = append(out, k.Text())
	}
	*g = out
	return nil
}

// ItemSchema returns the JSON schema of one group_by element, a string or
// a GroupKey object (a fresh value each call); the tool schemas use it for
// the items of every GroupKeys field.
func (GroupKeys) ItemSchema() map[string]any {
	return map[string]any{
		"anyOf": []any{
			map[string]any{"type": "string", "description": "Column or expression [AS name]."},
			map[string]any{
				"type":     "object",
				"required": []any{"expr"},
				"properties": map[string]any{
					"expr": map[string]any{"type": "string", "description": "Column or expression."},
					"as":   map[string]any{"type": "string"},
				},
			},
		},
	}
}

// QuoteIdent returns name as it must be written inside an expression: as
// is when it is an identifier, double-quoted otherwise.
func QuoteIdent(name string) string { return quoteIdent(name) }
