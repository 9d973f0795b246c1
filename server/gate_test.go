package server

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql/memory"
)

// TestMemoryGate runs messages against a 4 MB budget: a Query or Parse too
// large for it is answered with 53200 without being read into memory, the
// connection goes on, statements within the budget run (a large result row
// is reserved while it is sent), and every reservation is given back.
func TestMemoryGate(t *testing.T) {
	mon := memory.NewMonitor("--max-memory", 4<<20)
	ts := startServer(t, Config{Memory: mon}, nil)
	rc := ts.rawStartup(t)
	// oomFor reads through ReadyForQuery and reports whether the answer
	// was a 53200 reserving for what (its detail says for what).
	oomFor := func(what string) (bool, []string) {
		var got []string
		ok := false
		for {
			m := rc.receive()
			got = append(got, describeMsg(m))
			if e, isErr := m.(*pgproto3.ErrorResponse); isErr && len(got) == 1 {
				ok = e.Code == "53200" && strings.Contains(e.Detail, " for "+what+":")
			}
			if _, done := m.(*pgproto3.ReadyForQuery); done {
				return ok && len(got) == 2, got
			}
		}
	}

	// 6 MB of Query: over the budget before a byte of it is read.
	huge := "SELECT '" + strings.Repeat("x", 6<<20) + "'"
	rc.send(&pgproto3.Query{String: huge})
	if ok, got := oomFor("a protocol message"); !ok {
		t.Fatalf("huge Query: %v", got)
	}
	// The same through Parse: the rest of the pipeline is skipped to Sync.
	rc.send(&pgproto3.Parse{Query: huge}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	if ok, got := oomFor("a protocol message"); !ok {
		t.Fatalf("huge Parse: %v", got)
	}
	// 1 MB of text fits as a message but not with its parse estimate.
	rc.send(&pgproto3.Query{String: "SELECT '" + strings.Repeat("y", 1<<20) + "'"})
	if ok, got := oomFor("parsing"); !ok {
		t.Fatalf("1 MB Query: %v", got)
	}
	// 200 KB fits: message, parse estimate, and its result row.
	val := strings.Repeat("z", 200<<10)
	rc.send(&pgproto3.Query{String: "SELECT '" + val + "'"})
	got := rc.expectUntilReady()
	if len(got) != 4 || got[1] != "DataRow "+val || got[3] != "ReadyForQuery I" {
		t.Fatalf("200 KB Query: %d messages, first %.60q", len(got), got[0])
	}
	rc.send(&pgproto3.Query{String: "SELECT 1"})
	if got := rc.expectUntilReady(); len(got) != 4 || got[1] != "DataRow 1" {
		t.Fatalf("after: %v", got)
	}
	// A client that goes away in the middle of a reserved message leaves
	// nothing reserved.
	cut := ts.rawStartup(t)
	msg, err := (&pgproto3.Query{String: strings.Repeat("c", 2<<20)}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cut.nc.Write(msg[:100<<10]); err != nil {
		t.Fatal(err)
	}
	cut.nc.Close()

	// The connection closes a message's account after ReadyForQuery.
	deadline := time.Now().Add(testTimeout)
	for mon.Used() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if mon.Used() != 0 {
		t.Fatalf("the budget holds %d bytes with no statement running", mon.Used())
	}
	if mon.Peak() < 200<<10 || mon.Peak() > 4<<20 {
		t.Fatalf("peak reservation %d", mon.Peak())
	}
}
