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
	head := *r
	head.Data, head.Preview = nil, nil
	b, err := json.Marshal(&head)
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
