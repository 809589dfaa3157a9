// Package demodata bundles Quarry's demo datasets (weather, sales, sensor,
// survey and Armenian budget tables; see docs/DEMO_DATA.md) into the binary
// and extracts them to a cache directory on demand, so a user can try Quarry
// without data of their own:
//
//	dir, err := demodata.Extract(demodata.DefaultDir())
//	// point a catalog at dir
//
// The files are produced by the deterministic generator in ./gen
// ("go run ./demodata/gen") and committed; they are never generated at run
// time.
package demodata
