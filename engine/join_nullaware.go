package engine

// Null-aware anti join (planner.Join.NullAware): SQL's x NOT IN (SELECT y
// ...) in one join. The right side is the build side; what the rule needs
// of it, its row count and whether any y is null, is known once it is
// read (in memory, or counted while it is partitioned to disk, and shared
// with the partitions' joins). Then a probe row is kept when the build
// side is empty; otherwise no row is kept if some y is null, and a row
// with a null x is not kept (a plain anti join keeps it).

// nullAwareState is what a null-aware join knows of its whole build side.
type nullAwareState struct {
	rows  int64 // build rows
	nulls bool  // some build key is null
}

// keepsNone: a null in a non-empty build side keeps no probe row.
func (s *nullAwareState) keepsNone() bool { return s != nil && s.rows > 0 && s.nulls }

// dropsNullProbe: a probe row with a null key is not kept (the build side
// has rows).
func (s *nullAwareState) dropsNullProbe() bool { return s != nil && s.rows > 0 }

// countBuildNulls records the in-memory build side of a null-aware join
// (the plan's join; partitions share their parent's state).
func (j *joinOp) countBuildNulls() {
	if !j.p.nullAware || j.level > 0 {
		return
	}
	j.na = &nullAwareState{rows: int64(len(j.build.refs))}
	for _, ok := range j.build.keys.ok {
		if !ok {
			j.na.nulls = true
			break
		}
	}
}

// count adds one partitioned batch's rows and null keys (after load).
func (s *nullAwareState) count(ok []bool) {
	s.rows += int64(len(ok))
	for _, k := range ok {
		if !k {
			s.nulls = true
			break
		}
	}
}
