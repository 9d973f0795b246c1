package tablesettings

import (
	"fmt"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// The SQLSTATEs of this package's errors, one per kind of mistake (doc.go
// lists which message has which):
const (
	// codeSyntax: the value has the wrong shape for its setting (an
	// identifier where an integer belongs, TTL without an Interval
	// literal, a malformed PARTITION_AT_KEYS list).
	codeSyntax = sqlerr.SyntaxError // 42601
	// codeValue: the value has the right shape but is out of range or not
	// one of the allowed words (size 0, count 0, min > max, a negative
	// interval, an unknown feature flag, an unknown or repeated setting).
	codeValue = sqlerr.InvalidParameterValue // 22023
	// codeUnsupported: the setting cannot be altered or reset.
	codeUnsupported = sqlerr.FeatureNotSupported // 0A000
	// codeColumn: TTL names a column the table does not have.
	codeColumn = sqlerr.UndefinedColumn // 42703
	// codeTable: the setting does not fit the table's columns (a boundary
	// longer than the key or of the wrong type, boundaries out of order,
	// UNIFORM_PARTITIONS on a non-integral key, a TTL column of the wrong
	// type or unit) or contradicts another setting.
	codeTable = sqlerr.InvalidTableDefinition // 42P16
)

// errorf returns a client error positioned at pos (a 1-based character
// position in the script, as the parser reports it; 0 when unknown).
func errorf(code string, pos int, format string, args ...any) *sqlerr.Error {
	return &sqlerr.Error{Code: code, Message: fmt.Sprintf(format, args...), Position: pos}
}

// withDetail sets the detail of e and returns it.
func withDetail(e *sqlerr.Error, format string, args ...any) *sqlerr.Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// withHint sets the hint of e and returns it.
func withHint(e *sqlerr.Error, format string, args ...any) *sqlerr.Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}
