package obs

import (
	"strings"
	"testing"
)

func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"abc-123": true, "r_0123.x": true, strings.Repeat("a", 128): true,
		"": false, strings.Repeat("a", 129): false, "a b": false, "a\nb": false, "é": false, "a=b": false, "<x>": false,
	} {
		if ValidRequestID(id) != want {
			t.Errorf("ValidRequestID(%q) != %v", id, want)
		}
	}
}
