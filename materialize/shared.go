package materialize

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/shared"
)

// Result handles shared by replicas.
//
// With Config.ShareHandles, every result put behind a handle is first
// spilled to a Parquet file of the artifact store (if it is not already),
// and SharedHandles publishes the handle — principal, the spill file's URI,
// the Arrow schema, the row count — under "handle:<id>" in the shared
// store. Another replica that gets a page token or a page resource of that
// handle opens the same file (the artifact directory is shared) as a
// spilled Table: the pages are the same bytes on every replica, since a
// spilled Table reads its rows back from the file on all of them. Spill
// files of shared handles are kept after the handle is released locally
// (another replica may still page through it) and deleted by the artifact
// store's TTL, which must therefore be at least the handle TTL.
//
// A result too wide for a Parquet file (more than MaxParquetColumns
// columns) stays in memory and is served by its replica only.

// sharedHandles implements handles.Remote[*Table] over a shared.KV.
type sharedHandles struct {
	kv    shared.KV
	store *artifacts.Store
	log   *slog.Logger
}

// SharedHandles returns the handles.Remote that shares result handles
// through kv, their rows through store's (shared) directory.
func SharedHandles(kv shared.KV, store *artifacts.Store, log *slog.Logger) handles.Remote[*Table] {
	if log == nil {
		log = slog.Default()
	}
	return &sharedHandles{kv: kv, store: store, log: log}
}

// handleMeta is what another replica needs to open a shared handle.
type handleMeta struct {
	Principal string `json:"p"`
	URI       string `json:"uri"`
	Rows      int64  `json:"rows"`
	Schema    []byte `json:"schema"` // an Arrow IPC stream with the schema only
}

func handleKey(id string) string { return "handle:" + id }

func (s *sharedHandles) Save(id, principal string, t *Table, ttl time.Duration) {
	if t.spill == nil {
		s.log.Debug("result handle kept on this replica: the result is not in a file", "handle", id)
		return
	}
	t.spill.publish() // other replicas read the file: never delete it with the local handle
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(t.schema))
	if err := w.Close(); err != nil {
		s.log.Warn("result handle not shared with other replicas", "handle", id, "err", err)
		return
	}
	b, err := json.Marshal(handleMeta{Principal: principal, URI: t.spill.art.URI, Rows: t.rows, Schema: buf.Bytes()})
	if err == nil {
		err = s.kv.Set(context.Background(), handleKey(id), b, ttl)
	}
	if err != nil {
		s.log.Warn("result handle not shared with other replicas", "handle", id, "err", err)
	}
}

func (s *sharedHandles) Load(id, principal string, ttl time.Duration) (*Table, bool) {
	b, ok, err := s.kv.Get(context.Background(), handleKey(id), ttl)
	if err != nil {
		s.log.Warn("shared result handle lookup failed", "handle", id, "err", err)
	}
	if !ok {
		return nil, false
	}
	var m handleMeta
	if err := json.Unmarshal(b, &m); err != nil {
		s.log.Warn("shared result handle unreadable", "handle", id, "err", err)
		return nil, false
	}
	if m.Principal != "" && m.Principal != principal {
		return nil, false
	}
	schema, err := decodeSchema(m.Schema)
	if err != nil {
		s.log.Warn("shared result handle unreadable", "handle", id, "err", err)
		return nil, false
	}
	art, err := s.store.Get(m.URI, m.Principal)
	if err != nil { // the file expired or was never shared
		return nil, false
	}
	sp, err := openSpill(s.store, art, schema)
	if err != nil {
		s.log.Warn("shared result handle unreadable", "handle", id, "err", err)
		return nil, false
	}
	sp.published.Store(true) // not ours to delete
	if sp.starts[len(sp.starts)-1] != m.Rows {
		sp.close()
		return nil, false
	}
	t := &Table{schema: schema, rows: m.Rows, starts: []int64{0}, spill: sp}
	t.refs.Store(1)
	return t, true
}

func (s *sharedHandles) Touch(id string, ttl time.Duration) {
	if _, _, err := s.kv.Get(context.Background(), handleKey(id), ttl); err != nil {
		s.log.Warn("shared result handle lifetime not extended", "handle", id, "err", err)
	}
}

func (s *sharedHandles) Forget(id string) {
	if err := s.kv.Del(context.Background(), handleKey(id)); err != nil {
		s.log.Warn("shared result handle not removed", "handle", id, "err", err)
	}
}

// decodeSchema reads the schema of an Arrow IPC stream.
func decodeSchema(b []byte) (*arrow.Schema, error) {
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}

// shareable returns t as it goes behind a handle, with one reference the
// caller owns: with Config.ShareHandles, an in-memory t is first spilled
// to a file of principal (a result too wide for Parquet stays as it is).
func (m *Materializer) shareable(ctx context.Context, t *Table, principal string) (*Table, error) {
	if !m.shareHandles || t.spill != nil || m.store == nil || t.NumCols() > MaxParquetColumns {
		t.Retain()
		return t, nil
	}
	sw, err := startSpill(m.store, t.schema, principal, m.codec)
	if err != nil {
		return nil, spillError(err)
	}
	for _, b := range t.batches {
		if err := sw.write(ctx, b); err != nil {
			sw.abort()
			return nil, spillError(err)
		}
	}
	st, err := sw.finish(m.store, t.rows)
	if err != nil {
		return nil, spillError(err)
	}
	return st, nil
}
