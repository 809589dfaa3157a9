package flightsql

import (
	"errors"
	"flag"
)

// EnvAddr is the environment variable of --flightsql-addr (the serve
// flags' QUARRY_<FLAG> rule).
const EnvAddr = "QUARRY_FLIGHTSQL_ADDR"

// Flags are the `quarry serve` flags of the Flight SQL facade.
type Flags struct {
	// Addr is --flightsql-addr; "" (the default) leaves the facade off.
	Addr string
	// TLSCert and TLSKey are --flightsql-tls-cert and --flightsql-tls-key:
	// PEM files of the certificate (chain) and its private key; both or
	// neither ("": plaintext gRPC).
	TLSCert, TLSKey string
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Addr, "flightsql-addr", "", "also serve the catalog over Arrow Flight SQL (gRPC) on this address, e.g. 127.0.0.1:32010 "+
		"(read-only SQL, same tokens as HTTP; not loopback: tokens required; default: off)")
	fs.StringVar(&f.TLSCert, "flightsql-tls-cert", "", "PEM certificate (chain) of the Flight SQL endpoint: serve grpc+tls (with --flightsql-tls-key; default: plaintext)")
	fs.StringVar(&f.TLSKey, "flightsql-tls-key", "", "PEM private key of --flightsql-tls-cert")
}

// Check reports flags that do not go together.
func (f *Flags) Check() error {
	switch {
	case (f.TLSCert == "") != (f.TLSKey == ""):
		return errors.New("--flightsql-tls-cert and --flightsql-tls-key go together")
	case f.TLSCert != "" && f.Addr == "":
		return errors.New("--flightsql-tls-cert needs --flightsql-addr")
	}
	return nil
}
