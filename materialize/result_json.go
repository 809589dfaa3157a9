package materialize

import (
	"bytes"
	"encoding/json"
)

// AppendJSON appends r's JSON (the same object json.Marshal produces, with
// data and preview last) to dst. Unlike json.Marshal it copies the
// pre-encoded data and preview as they are instead of re-scanning them:
// they come from this package's encoder and are valid, compact JSON, and
// for big inline answers that second pass is a measurable share of a
// tool call (docs/BENCHMARKS.md).
func (r *Result) AppendJSON(dst []byte) ([]byte, error) {
	b, err := r.Envelope()
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("}"))
	dst = append(dst, b...)
	if r.Data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, r.Data...)
	}
	if r.Preview != nil {
		dst = append(dst, `,"preview":`...)
		dst = append(dst, r.Preview...)
	}
	return append(dst, '}'), nil
}

// Envelope is r's JSON without the bulk fields data and preview: every
// field a tool's output schema constrains (the bulk fields are "any JSON"),
// cheap to validate however many rows r carries.
func (r *Result) Envelope() ([]byte, error) {
	head := *r
	head.Data, head.Preview = nil, nil
	return json.Marshal(&head)
}
