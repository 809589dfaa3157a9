package service

import (
	"encoding/json"
	"testing"
)

func TestBucketWidth(t *testing.T) {
	cases := []struct {
		min, max string
		want     float64
		ok       bool
	}{
		{"-31.5", "42", 10, true},
		{"0", "100", 10, true},
		{"0", "101", 20, true},
		{"0", "30", 5, true},
		{"0", "0.7", 0.1, true},
		{"1", "1", 0, false},
		{"5", "1", 0, false},
		{`"a"`, `"b"`, 0, false},
		{"-1e308", "1e308", 0, false},
	}
	for _, c := range cases {
		w, ok := bucketWidth(ColumnProfile{Min: json.RawMessage(c.min), Max: json.RawMessage(c.max)})
		if ok != c.ok || (ok && w != c.want) {
			t.Errorf("[%s, %s]: %v %v, want %v %v", c.min, c.max, w, ok, c.want, c.ok)
		}
	}
}
