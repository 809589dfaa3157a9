package flightsrc_test

import (
	"testing"

	"github.com/quarrydb/quarry/catalog/flightsrc"
)

// FuzzParseConfig: any config file either parses into remotes that pass
// Validate, or is an error; never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("max-rows = 3\n"))
	f.Add([]byte("[[flightsql]]\nname = \"a\"\nuri = \"grpc://h:1\"\n"))
	f.Add([]byte("[[flightsql]]\nname = \"d\"\nuri = \"grpc+tls://h:9\"\nca_file = \"c\"\nallow = [\"s.*\", \"t?\"]\ntimeout = \"5s\"\ncount_rows = false\nheaders = { db = \"x\" }\n"))
	f.Add([]byte("flightsql = [1, 2]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := flightsrc.ParseConfig("f.toml", data)
		if err != nil {
			return
		}
		if err := flightsrc.Validate(list); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		for _, c := range list {
			if c.Name == "" || c.URI == "" {
				t.Fatalf("empty name or uri: %+v", c)
			}
		}
	})
}
