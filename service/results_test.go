package service

import "testing"

func TestParseResultPageURI(t *testing.T) {
	for _, tc := range []struct {
		uri    string
		handle string
		n      int64
		ok     bool
	}{
		{"quarry://results/h_abc/pages/0", "h_abc", 0, true},
		{"quarry://results/h_abc/pages/17", "h_abc", 17, true},
		{ResultPageURI("h_x", 3), "h_x", 3, true},
		{"quarry://results/h_abc/pages/-1", "", 0, false},
		{"quarry://results/h_abc/pages/01", "", 0, false},
		{"quarry://results/h_abc/pages/", "", 0, false},
		{"quarry://results//pages/1", "", 0, false},
		{"quarry://results/a/b/pages/1", "", 0, false},
		{"quarry://results/h_abc/pages/1x", "", 0, false},
		{"quarry://artifacts/h_abc/pages/1", "", 0, false},
		{"quarry://results/h_abc/pages/99999999999999999999", "", 0, false},
	} {
		h, n, ok := ParseResultPageURI(tc.uri)
		if ok != tc.ok || h != tc.handle || n != tc.n {
			t.Errorf("%q: %q %d %v, want %q %d %v", tc.uri, h, n, ok, tc.handle, tc.n, tc.ok)
		}
	}
}
