package catalog

import (
	"context"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// KindFlightSQL is the kind of datasets that are tables of an Arrow Flight
// SQL remote (catalog/flightsrc).
const KindFlightSQL Kind = "flightsql"

// RemotePrefix starts the id of every remote dataset:
// remote/<remote name>/<table>.
const RemotePrefix = "remote/"

// Remote lists datasets that are not files under the data root: the
// tables of a remote engine (Options.Remotes; catalog/flightsrc). Their
// ids must start with RemotePrefix + Name() + "/"; their Source streams
// the remote's rows. A Remote is safe for concurrent use.
type Remote interface {
	// Name is the remote's configured name.
	Name() string
	// Datasets lists the remote's tables now. An error (unreachable,
	// refused) keeps the previous listing and is reported as a
	// diagnostic of path "remote/<name>".
	Datasets(ctx context.Context) ([]*Dataset, error)
}

// remoteRelist is how long a remote's listing is reused by Refresh
// before the remote is asked again.
var remoteRelist = 10 * time.Second

// remotes holds the datasets of Options.Remotes.
type remotes struct {
	list []Remote
	mu   sync.Mutex // serializes listings
	set  atomic.Pointer[remoteSet]
	// closeOnce closes the remotes once (Catalog.Close).
	closeOnce sync.Once
}

// remoteSet is one immutable view of every remote's datasets.
type remoteSet struct {
	byRemote map[string][]*Dataset
	listed   map[string]time.Time
	diags    map[string]Diagnostic // by remote name; absent: listed fine
	byID     map[string]*Dataset
	sorted   []*Dataset
}

// refresh lists the remotes not listed within remoteRelist (all of them
// when force).
func (r *remotes) refresh(ctx context.Context, force bool) {
	if len(r.list) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.set.Load()
	next := &remoteSet{byRemote: map[string][]*Dataset{}, listed: map[string]time.Time{}, diags: map[string]Diagnostic{}, byID: map[string]*Dataset{}}
	for _, rm := range r.list {
		name := rm.Name()
		if prev != nil {
			next.byRemote[name], next.listed[name] = prev.byRemote[name], prev.listed[name]
			if d, ok := prev.diags[name]; ok {
				next.diags[name] = d
			}
			stale := false
			if st, ok := rm.(interface{ Stale() bool }); ok {
				stale = st.Stale() // a query found a table changed
			}
			if !force && !stale && time.Since(prev.listed[name]) < remoteRelist {
				continue
			}
		}
		ds, err := rm.Datasets(ctx)
		next.listed[name] = time.Now()
		if err != nil {
			next.diags[name] = Diagnostic{Path: RemotePrefix + name, Level: "error", Reason: reason(err)}
			continue
		}
		delete(next.diags, name)
		next.byRemote[name] = ds
	}
	for _, ds := range next.byRemote {
		for _, d := range ds {
			next.byID[d.ID] = d
			next.sorted = append(next.sorted, d)
		}
	}
	sort.Slice(next.sorted, func(i, j int) bool { return next.sorted[i].ID < next.sorted[j].ID })
	r.set.Store(next)
}

// close closes the remotes that are io.Closers.
func (r *remotes) close() {
	for _, rm := range r.list {
		if c, ok := rm.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

// lookup is the remote dataset id, or nil.
func (r *remotes) lookup(id string) *Dataset {
	if !strings.HasPrefix(id, RemotePrefix) {
		return nil
	}
	if s := r.set.Load(); s != nil {
		return s.byID[id]
	}
	return nil
}

// merge returns files (sorted by id) with the remote datasets merged in
// by id; a remote dataset hides a file dataset of the same id.
func (r *remotes) merge(files []*Dataset) []*Dataset {
	s := r.set.Load()
	if s == nil || len(s.sorted) == 0 {
		return append([]*Dataset(nil), files...)
	}
	out := make([]*Dataset, 0, len(files)+len(s.sorted))
	for _, d := range files {
		if s.byID[d.ID] == nil {
			out = append(out, d)
		}
	}
	out = append(out, s.sorted...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// diagnostics are the remotes' listing problems.
func (r *remotes) diagnostics() []Diagnostic {
	s := r.set.Load()
	if s == nil {
		return nil
	}
	out := make([]Diagnostic, 0, len(s.diags))
	for _, d := range s.diags {
		out = append(out, d)
	}
	return out
}

// ExposedSchema maps a schema received from elsewhere (a remote's Arrow
// schema) to the types the engine computes on, as typed files are
// (Parquet, Arrow IPC): kept when the engine reads the type, else widened
// or kept as text, with a note per changed column (nil when none).
func ExposedSchema(sc *arrow.Schema) (*arrow.Schema, map[string]ColumnNote) {
	return exposedSchema(sc)
}

// ExposeArray converts arr to to, a type ExposedSchema chose for it (arr
// itself, retained, when the types agree).
func ExposeArray(mem memory.Allocator, arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	return exposeArray(mem, arr, to)
}
