package flightsql

import "flag"

// EnvAddr is the environment variable of --flightsql-addr (the serve
// flags' QUARRY_<FLAG> rule).
const EnvAddr = "QUARRY_FLIGHTSQL_ADDR"

// Flags are the `quarry serve` flags of the Flight SQL facade.
type Flags struct {
	// Addr is --flightsql-addr; "" (the default) leaves the facade off.
	Addr string
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Addr, "flightsql-addr", "", "also serve the catalog over Arrow Flight SQL (gRPC) on this address, e.g. 127.0.0.1:32010 "+
		"(read-only SQL, same tokens as HTTP; not loopback: tokens required; default: off)")
}
