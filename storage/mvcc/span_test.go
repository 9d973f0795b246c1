package mvcc

import (
	"errors"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestInvertedSpans: every span operation reports an inverted span as
// storage.ErrInvertedSpan instead of reading it as empty.
func TestInvertedSpans(t *testing.T) {
	db := openTestDB(t)
	b := db.NewIndexedBatch()
	defer b.Close()
	bad := storage.Span{Start: []byte("b"), End: []byte("a")}
	ts := hlc.Timestamp{WallTime: 10}
	_, scanErr := NewScanner(db, bad, ts, ReadOptions{})
	_, gcErr := GC(b, bad, ts)
	_, _, resolveErr := ResolveSpan(b, bad, Resolution{Status: Aborted})
	_, rollbackErr := RollbackSpanToSeq(b, bad, TxnID{}, 0, 0)
	_, statsErr := ComputeStats(db, bad)
	refreshErr := CheckRefresh(db, bad, nil, ts, ts)
	for name, err := range map[string]error{"scan": scanErr, "gc": gcErr, "resolve": resolveErr,
		"rollback": rollbackErr, "stats": statsErr, "refresh": refreshErr} {
		if !errors.Is(err, storage.ErrInvertedSpan) {
			t.Errorf("%s of an inverted span: %v", name, err)
		}
	}
}
