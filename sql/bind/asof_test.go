package bind

import (
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestAsOfTimestamp resolves bound AS OF SYSTEM TIME clauses at run time:
// an offset from the statement's start, an absolute time, and a time in
// the future, which CockroachDB refuses.
func TestAsOfTimestamp(t *testing.T) {
	stmt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := stmt.Add(time.Millisecond)
	rel := &AsOf{Relative: true, Offset: -10 * time.Second}
	wall, logical, err := rel.Timestamp(stmt, now)
	if err != nil || wall != stmt.Add(-10*time.Second).UnixNano() || logical != 0 {
		t.Fatalf("relative: %d.%d %v", wall, logical, err)
	}
	abs := &AsOf{Wall: stmt.Add(-time.Hour).UnixNano(), Logical: 7}
	if wall, logical, err = abs.Timestamp(stmt, now); err != nil || wall != abs.Wall || logical != 7 {
		t.Fatalf("absolute: %d.%d %v", wall, logical, err)
	}
	future := &AsOf{Wall: now.Add(time.Second).UnixNano()}
	if _, _, err := future.Timestamp(stmt, now); sqlerr.As(err).Code != sqlerr.InvalidParameterValue {
		t.Fatalf("future: %v", err)
	}
}
