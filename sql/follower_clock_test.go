package sql

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestFollowerClockAhead (issue 17 item 6): a follower whose clock runs
// ahead of the serving node's (here by a minute, far beyond any
// --max-offset) never reads past its replica's closed timestamp, which
// the serving node's clock set: follower_read_timestamp() by its own
// clock is past it, so the read waits and fails with 55000; a read at the
// closed timestamp answers.
func TestFollowerClockAhead(t *testing.T) {
	dir, e, _ := followerSource(t)
	closedAt, err := e.storage.Clock().Now() // the serving node's clock
	if err != nil {
		t.Fatal(err)
	}
	e.Close()

	ahead := func() int64 { return time.Now().Add(time.Minute).UnixNano() }
	var closed atomic.Pointer[hlc.Timestamp]
	closed.Store(&closedAt)
	_, fe := openTestFollower(t, dir, ahead, &closed)
	defer fe.Close()
	s := testSession(t, fe)
	defer s.Close()
	if _, err := tryQuery(s, "SELECT count(*) FROM f"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("a follower read by a clock a minute ahead: %s", errCode(err))
	}
	if got := formatRows(query(t, s, "SELECT v FROM f AS OF SYSTEM TIME "+asOfLiteral(closedAt))); got != `"a"` {
		t.Fatalf("at the closed timestamp: %q", got)
	}
}
