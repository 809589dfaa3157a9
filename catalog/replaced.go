package catalog

import (
	"context"
	"errors"

	"github.com/quarrydb/quarry/internal/safeopen"
)

// maxReopen bounds how often opening a file follows it being replaced
// (renamed over) between the stat that described it and the open (a
// variable for tests).
var maxReopen = 8

// testHookBeforeOpen, set by tests only, runs before each open of a file.
var testHookBeforeOpen func(e *fileEntry)

// openVersion opens e's file with its format. When the confined open finds
// another file than the one stat'ed (safeopen.ErrReplaced: a new version
// was renamed over it in between), it re-stats the path and opens that
// version instead, updating e.info, up to maxReopen times. So a rescan or
// a lookup that races an atomic replacement catalogs the old or the new
// version of the file, never neither (which made the dataset briefly
// dataset_not_found). e must not be published yet.
func (c *Catalog) openVersion(ctx context.Context, e *fileEntry) ([]*Dataset, error) {
	for attempt := 0; ; attempt++ {
		if testHookBeforeOpen != nil {
			testHookBeforeOpen(e)
		}
		ds, err := e.format.Open(ctx, e.info)
		if err == nil || attempt == maxReopen || !errors.Is(err, safeopen.ErrReplaced) || ctx.Err() != nil {
			return ds, err
		}
		info, serr := c.restat(e.info)
		if serr != nil {
			return ds, err
		}
		e.info = info
	}
}
