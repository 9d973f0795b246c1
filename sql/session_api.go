package sql

import (
	"context"

	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/types"
)

// ResultColumn describes one column of a statement's result, as RowDescription
// reports it.
type ResultColumn struct {
	Name string
	Type types.Type
	// TableOID and ColumnNumber identify the source column when the result
	// column is a plain column reference; zero otherwise.
	TableOID     uint32
	ColumnNumber int16
}

// Prepared is a parsed, bound statement ready to be executed any number of
// times with different parameters. It is owned by one session.
type Prepared struct {
	// SQL is the text of this one statement.
	SQL string
	// ParamTypes has one entry per $n parameter (n = index+1), inferred from
	// context where the client did not declare it.
	ParamTypes []types.Type
	// Columns describes the result rows; nil when the statement returns none.
	Columns []ResultColumn
	// Empty is true for a statement with no SQL in it ("", "-- ping", ";"),
	// which the protocol answers with EmptyQueryResponse.
	Empty bool

	plan preparedPlan
	// deferred marks a statement of a simple-protocol script whose binding
	// waits until it runs, after the statements before it.
	deferred bool
}

// Result is the outcome of executing a statement: a stream of rows (possibly
// none) followed by a command tag. The caller must Close it.
type Result interface {
	// Columns describes the rows; nil when the statement returns no rows.
	Columns() []ResultColumn
	// Next returns the next row, or nil at the end. The slice is only valid
	// until the following call.
	Next(ctx context.Context) ([]types.Value, error)
	// Tag is the command tag ("SELECT 3", "INSERT 0 1", "CREATE TABLE"),
	// valid once Next has returned nil.
	Tag() string
	Close()
}

// Notice is an informational message sent to the client (NoticeResponse).
type Notice struct {
	Severity string // "NOTICE", "WARNING"
	Code     string
	Message  string
}

// ParameterStatus is a run-time parameter reported to the client at startup
// and whenever SET changes it.
type ParameterStatus = sessionvars.Param
