package sql

import (
	"context"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// runWithDML runs a statement headed by data-modifying WITH queries
// (bind.WithDML), with PostgreSQL's semantics: each query runs exactly
// once, in the order written, in the statement's transaction, whether or
// not anything reads it; its RETURNING rows are what its name reads. A
// main SELECT reads the tables as they were when the statement started
// (a copy of the transaction's writes taken first), so it does not see
// the queries' own changes, only their RETURNING rows. So does every
// query: an INSERT's source, and the scan that finds the rows an UPDATE or
// DELETE changes, read that view (session.readView); the rows found are
// then locked and re-read as they are now, as any UPDATE or DELETE does.
//
// Not PostgreSQL's: a row changed by an earlier query of the statement
// and found again by a later UPDATE or DELETE is changed again (a row the
// earlier one deleted is skipped), where PostgreSQL leaves it as the
// first change left it.
func (s *Session) runWithDML(ctx context.Context, p *bind.WithDML, params []types.Value) (res Result, err error) {
	// own: no transaction and no protocol cycle (a caller of the Go API
	// that never called BeginImplicit): the statement is its own
	// transaction, committed when it succeeds.
	own := s.txn == nil && !s.implicit
	if own {
		s.txn = s.beginTxn()
		s.txn.StartStatement()
		defer func() {
			t := s.txn
			s.txn = nil
			if err != nil {
				t.Rollback()
				return
			}
			if err = t.Commit(); err != nil {
				res = nil
			}
		}()
	}
	var view storage.Reader = s.e.storage
	if s.snap != nil {
		view = s.snap
	}
	closeView := func() {}
	if s.txn != nil {
		v, done, err := s.txn.NewReadView()
		if err != nil {
			return nil, err
		}
		view, closeView = v, done
	}
	s.readView = view
	for _, q := range p.Queries {
		q.Rows = nil
		rows, err := s.drain(ctx, q.Plan, params)
		if err != nil {
			s.readView = nil
			closeView()
			return nil, err
		}
		q.Rows = rows
	}
	res, err = s.run(ctx, p.Main, params)
	s.readView = nil
	if err != nil {
		closeView()
		return nil, err
	}
	if own {
		// The transaction commits before the caller reads: the rows are
		// read now.
		defer closeView()
		cols := res.Columns()
		var rows [][]types.Value
		for {
			row, err := res.Next(ctx)
			if err != nil {
				res.Close()
				return nil, err
			}
			if row == nil {
				break
			}
			rows = append(rows, append([]types.Value(nil), row...))
		}
		tag := res.Tag()
		res.Close()
		return staticRows(cols, rows, tag), nil
	}
	return &closingResult{Result: res, close: closeView}, nil
}

// drain runs a statement and returns its rows.
func (s *Session) drain(ctx context.Context, st bind.Statement, params []types.Value) ([][]types.Value, error) {
	res, err := s.run(ctx, st, params)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	var rows [][]types.Value
	for {
		row, err := res.Next(ctx)
		if err != nil || row == nil {
			return rows, err
		}
		rows = append(rows, append([]types.Value(nil), row...))
	}
}

// closingResult calls close after closing its Result.
type closingResult struct {
	Result
	close func()
}

func (r *closingResult) Close() {
	r.Result.Close()
	if r.close != nil {
		r.close()
		r.close = nil
	}
}
