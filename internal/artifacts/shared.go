package artifacts

import (
	"context"
	"os"
	"path/filepath"
)

// Sharing a directory between replicas.
//
// With Options.Shared, replicas that share one store directory (a common
// volume) serve each other's artifacts: Commit publishes the artifact's
// owner under "artifact:<id>" for the store's TTL, and Get, for an
// artifact this Store did not write (unknown, or adopted at Open without a
// known owner), asks the shared store for the owner and adopts the file if
// it is there. Each replica's quota counts the artifacts it knows; the
// sweeper of every replica deletes expired files by their age, which is
// the same for all (the TTL must be the same on every replica).

func sharedKey(id string) string { return "artifact:" + id }

// publish records a's owner in the shared store; a failure leaves the
// artifact usable on this replica only (logged).
func (s *Store) publish(a Artifact, owner string) {
	if s.shared == nil {
		return
	}
	if err := s.shared.Set(context.Background(), sharedKey(a.ID), []byte(owner), s.ttl); err != nil {
		s.log.Warn("artifact not shared with other replicas", "artifact", a.URI, "err", err)
	}
}

// adoptShared makes artifact id (extension ext) written by another replica
// known to this Store, with its owner, before Get looks it up.
func (s *Store) adoptShared(id, ext string) {
	if s.shared == nil {
		return
	}
	s.mu.Lock()
	r := s.arts[id]
	known := r != nil && !r.adopted
	s.mu.Unlock()
	if known {
		return
	}
	owner, ok, err := s.shared.Get(context.Background(), sharedKey(id), 0)
	if err != nil {
		s.log.Warn("shared artifact owner lookup failed", "artifact", id, "err", err)
		return
	}
	if !ok {
		return
	}
	fi, err := os.Stat(filepath.Join(s.dir, id+"."+ext))
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r := s.arts[id]; {
	case r == nil:
		s.seq++
		s.arts[id] = &record{a: s.artifact(id, ext, fi.Size(), fi.ModTime()), seq: s.seq, owner: string(owner)}
		s.used += fi.Size()
	case r.adopted:
		r.owner, r.adopted = string(owner), false
	}
}
