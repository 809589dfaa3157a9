package app

import (
	"io"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/flightsrc"
)

// openRemotes opens the Flight SQL remotes of cfg (the catalog closes
// them when it is closed).
func openRemotes(cfg Config) ([]catalog.Remote, error) {
	if err := flightsrc.Validate(cfg.FlightSQL); err != nil {
		return nil, err
	}
	var out []catalog.Remote
	for _, rc := range cfg.FlightSQL {
		r, err := flightsrc.Open(rc, cfg.Logger, nil)
		if err != nil {
			closeRemotes(out)
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// closeRemotes closes remotes no catalog owns.
func closeRemotes(list []catalog.Remote) {
	for _, r := range list {
		if c, ok := r.(io.Closer); ok {
			_ = c.Close()
		}
	}
}
