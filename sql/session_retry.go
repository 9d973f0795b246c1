package sql

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Statement retries at READ COMMITTED (issue 16): a conflict that a READ
// COMMITTED statement resolves by running again never reaches the client
// as 40001. Those conflicts are:
//
//   - a schema change that overtook the statement: the table was dropped
//     or rewritten under a new id, or its indexes changed, between the
//     statement's binding and its end (its writes would miss an index, or
//     land in a table that no longer exists) — run again, it binds to the
//     schema as it is now;
//   - ON CONFLICT DO UPDATE whose conflicting row, found through a unique
//     index, kept being deleted before it could be locked.
//
// A statement is run again only when that cannot be told from one run: it
// is a data-modifying statement (INSERT, UPDATE, DELETE, MERGE-like WITH
// queries; not COPY, whose input cannot be read twice, nor DDL), it began
// its transaction (outside a block, the first write of the protocol cycle
// or a statement of its own), so undoing it is rolling that transaction
// back; and nothing of it was sent (retries happen inside Execute, before
// the result is returned). Since such a statement's transaction commits
// at the protocol cycle's Sync, after Execute, the schema check of the
// commit is also run when the statement ends, so that a schema change
// overtaking it is met here, where it can still be run again; one landing
// between the statement's end and Sync still fails the commit with 40001
// (the window is the round trip to Sync, not the statement). Statements in
// an explicit block are not run again: undoing one would need a savepoint
// per statement. REPEATABLE READ and SERIALIZABLE conflicts are the
// application's to retry, as in PostgreSQL.

// A schema change can still land between the statement's end and the
// cycle's Sync, and then the commit fails. When the cycle's implicit
// transaction is that one statement and it returned no rows (so all the
// client has of it is its command tag), Sync runs it again, in a new
// transaction, and commits that one if it gives the same tag: the client
// then holds exactly what committed. A run with another tag (the rows it
// matched changed meanwhile too) is rolled back and tried again; after
// maxTagMismatches of them the commit fails with the conflict after all.

// cycleStatement is the statement Sync may run again: what it ran with,
// and the tag the client was sent.
type cycleStatement struct {
	p      *Prepared
	params []types.Value
	tag    string
	tagged bool
}

// tagRecorder records the command tag the client is sent.
type tagRecorder struct {
	Result
	c *cycleStatement
}

func (r *tagRecorder) Tag() string {
	t := r.Result.Tag()
	r.c.tag, r.c.tagged = t, true
	return t
}

// rerunAtSync handles err, the failed commit of the cycle's implicit
// transaction: when it is a conflict and the transaction is one statement
// that can run again, it runs it again and commits, and returns nil once
// that commit succeeded with the same tag; otherwise the error to report.
func (s *Session) rerunAtSync(err error) error {
	c := s.cycleRetry
	s.cycleRetry = nil
	if c == nil || !c.tagged || !isRetryableConflict(err) {
		return err
	}
	ctx := context.Background()
	mismatches := 0
	for attempt := 1; attempt <= maxStatementRetries; attempt++ {
		s.implicit = true
		res, rerr := s.executeRetrying(ctx, c.p, c.params)
		s.cycleRetry = nil
		tag := ""
		if rerr == nil {
			for {
				row, nerr := res.Next(ctx)
				if nerr != nil || row == nil {
					rerr = nerr
					break
				}
			}
			tag = res.Tag()
			res.Close()
		}
		t := s.txn
		s.txn, s.implicit, s.failed = nil, false, false
		if rerr != nil || tag != c.tag {
			if t != nil {
				s.rollbackTxn(t)
			}
			if rerr != nil {
				return rerr
			}
			// Rows the statement matched were changing under it: a
			// few more runs may agree with what the client has.
			if mismatches++; mismatches >= maxTagMismatches {
				var se *sqlerr.Error
				if errors.As(err, &se) {
					out := *se
					out.Detail = fmt.Sprintf("The statement was run again at commit and reported %q instead of %q.", tag, c.tag)
					return &out
				}
				return err
			}
			time.Sleep(time.Duration(rand.IntN(200*mismatches)) * time.Microsecond)
			continue
		}
		if t == nil {
			return nil
		}
		if err = s.mapError(ctx, s.commitTxn(t)); err == nil || !isRetryableConflict(err) {
			return err
		}
	}
	return err
}

// maxStatementRetries bounds the runs of one statement; maxTagMismatches
// the runs at Sync that come out with another tag than the client has.
const (
	maxStatementRetries = 50
	maxTagMismatches    = 5
)

// executeRetrying is Execute with READ COMMITTED's retries.
func (s *Session) executeRetrying(ctx context.Context, p *Prepared, params []types.Value) (Result, error) {
	// Any statement ends the chance to run an earlier one again at Sync:
	// this one may have read what it wrote.
	s.cycleRetry = nil
	s.beginReadingCycle(p)
	for attempt := 1; ; attempt++ {
		retry := s.mayRetry(p)
		res, err := s.executeOnce(ctx, p, params)
		if !retry {
			return res, err
		}
		if err == nil {
			if s.txn == nil {
				return res, nil // committed already (a statement of its own)
			}
			if err = s.txn.CheckSchema(); err == nil {
				if !s.implicit || res.Columns() != nil {
					return res, nil
				}
				s.cycleRetry = &cycleStatement{p: p, params: slices.Clone(params)}
				return &tagRecorder{Result: res, c: s.cycleRetry}, nil
			}
			res.Close()
			res = nil
		}
		if !isRetryableConflict(err) || attempt >= maxStatementRetries || ctx.Err() != nil {
			if res == nil {
				// The check's failure: the transaction fails as the
				// commit would have failed it.
				s.onError()
			}
			return res, err
		}
		// Undo: the statement's transaction is all it wrote.
		if s.txn != nil {
			s.rollbackTxn(s.txn)
			s.txn = nil
		}
		s.failed = false
		if attempt > 2 {
			// A row that keeps changing under ON CONFLICT: give its
			// writers a moment.
			time.Sleep(time.Duration(rand.IntN(100*attempt)) * time.Microsecond)
		}
	}
}

// beginReadingCycle begins the implicit transaction of a protocol cycle at
// a query that reads, at REPEATABLE READ and SERIALIZABLE (at READ
// COMMITTED the transaction begins at the first write, as before): the
// cycle's statements are one transaction, so a query before a write must
// read its snapshot and, at SERIALIZABLE, be among the reads its commit
// refreshes.
func (s *Session) beginReadingCycle(p *Prepared) {
	if p.Empty || !s.implicit || s.txn != nil || s.failed || s.isolation() == txn.ReadCommitted {
		return
	}
	if _, ok := p.plan.plan.(*bind.Select); ok {
		s.txn = s.beginTxn()
	}
}

// mayRetry reports whether p may run again if it fails with a conflict
// (see above): READ COMMITTED, a data-modifying statement, and no
// transaction open before it.
func (s *Session) mayRetry(p *Prepared) bool {
	if p.Empty || s.txn != nil || s.failed || s.isolation() != txn.ReadCommitted {
		return false
	}
	switch p.plan.plan.(type) {
	case *bind.Insert, *bind.Modify, *bind.WithDML:
		return true
	}
	return false
}

// isRetryableConflict reports whether err is a conflict that running the
// statement again resolves: at READ COMMITTED every 40001 is one.
func isRetryableConflict(err error) bool {
	var se *sqlerr.Error
	return errors.As(err, &se) && se.Code == sqlerr.SerializationFailure
}
