package server

import (
	"context"

	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Engine is what the server needs from the SQL layer: a way to open one
// session per client connection. The server never imports the executor's
// internals; it programs against this interface so that tests can plug in a
// small fake and so that the wire protocol can be read without the engine.
type Engine interface {
	// NewSession opens a session on database for user. An error ends the
	// connection with severity FATAL (for example 3D000 for a database that
	// does not exist); its SQLSTATE is taken from a *sqlerr.Error.
	NewSession(database, user string) (Session, error)
}

// Session is one client's SQL session. It has exactly the methods of
// *sql.Session; see that type for the contract of each. The server calls a
// session from the connection's goroutine only, except that the context of a
// running call may be cancelled from another goroutine (CancelRequest,
// shutdown).
//
// Beyond the method contracts the server relies on:
//
//   - Errors a client should see are *sqlerr.Error; anything else is reported
//     as XX000.
//   - A call whose context is cancelled returns promptly; the error may be
//     context.Canceled or a 57014 *sqlerr.Error (the server rewords both).
//   - FailTransaction is idempotent and a no-op outside a transaction block:
//     the server calls it after every error it reports while a command runs,
//     whoever raised the error.
//   - A Result stays usable across calls of Next with different contexts: a
//     portal suspended by a row limit is resumed by a later Execute message.
type Session interface {
	Prepare(ctx context.Context, text string, paramOIDs []uint32) (*sql.Prepared, error)
	PrepareScript(ctx context.Context, text string) ([]*sql.Prepared, error)
	Execute(ctx context.Context, p *sql.Prepared, params []types.Value) (sql.Result, error)
	TxStatus() byte
	FailTransaction()
	InitialParameters() []sql.ParameterStatus
	TakeParameterChanges() []sql.ParameterStatus
	TakeNotices() []sql.Notice
	// BeginImplicit and Sync bracket a protocol cycle (a simple Query, or
	// the extended-protocol messages up to Sync): outside a transaction
	// block the cycle's statements commit together at Sync, as in
	// PostgreSQL's implicit transactions. Sync's error is reported before
	// ReadyForQuery.
	BeginImplicit()
	// SetScript marks the simple Query running as holding several
	// statements: PostgreSQL's implicit transaction block, in which
	// schema changes are transactional and some statements are refused.
	SetScript(several bool)
	Sync() error
	Close()
}

// The real session must satisfy the interface; this line fails to compile
// when the two drift apart.
var _ Session = (*sql.Session)(nil)

// FromSQL adapts the real engine to Engine.
func FromSQL(e *sql.Engine) Engine { return sqlEngine{e} }

type sqlEngine struct{ e *sql.Engine }

// PasswordVerifier makes the real engine the server's PasswordStore (New
// picks it up when Config.Passwords is nil).
func (a sqlEngine) PasswordVerifier(user string) (string, bool) { return a.e.PasswordVerifier(user) }

func (a sqlEngine) NewSession(database, user string) (Session, error) {
	s, err := a.e.NewSession(database, user)
	if err != nil {
		// Return a nil interface, not an interface holding a nil pointer.
		return nil, err
	}
	return s, nil
}
