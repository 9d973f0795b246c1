package sqlerr

import (
	"errors"
	"fmt"
)

// SQLSTATE codes used by PivotDB. Names follow PostgreSQL's errcodes.txt.
const (
	SuccessfulCompletion             = "00000"
	Warning                          = "01000"
	FeatureNotSupported              = "0A000"
	CardinalityViolation             = "21000"
	DataException                    = "22000"
	StringDataRightTruncation        = "22001"
	NumericValueOutOfRange           = "22003"
	InvalidDatetimeFormat            = "22007"
	DatetimeFieldOverflow            = "22008"
	InvalidTimeZoneDisplacementValue = "22009"
	DivisionByZero                   = "22012"
	InvalidParameterValue            = "22023"
	InvalidTextRepresentation        = "22P02"
	InvalidBinaryRepresentation      = "22P03"
	BadCopyFileFormat                = "22P04"
	NotNullViolation                 = "23502"
	UniqueViolation                  = "23505"
	InvalidCursorState               = "24000"
	InvalidTransactionState          = "25000"
	ActiveSQLTransaction             = "25001"
	NoActiveSQLTransaction           = "25P01"
	InFailedSQLTransaction           = "25P02"
	InvalidSQLStatementName          = "26000"
	InvalidAuthorizationSpec         = "28000"
	InvalidPassword                  = "28P01"
	InvalidSavepointSpecification    = "3B001"
	SerializationFailure             = "40001"
	DeadlockDetected                 = "40P01"
	SyntaxError                      = "42601"
	InsufficientPrivilege            = "42501"
	UndefinedColumn                  = "42703"
	UndefinedFunction                = "42883"
	AmbiguousFunction                = "42725"
	UndefinedTable                   = "42P01"
	UndefinedParameter               = "42P02"
	UndefinedObject                  = "42704"
	DuplicateColumn                  = "42701"
	DuplicateDatabase                = "42P04"
	DuplicateTable                   = "42P07"
	DuplicateObject                  = "42710"
	DuplicateFunction                = "42723"
	InvalidFunctionDefinition        = "42P13"
	WrongObjectType                  = "42809"
	AmbiguousColumn                  = "42702"
	DatatypeMismatch                 = "42804"
	GroupingError                    = "42803"
	InvalidColumnReference           = "42P10"
	InvalidTableDefinition           = "42P16"
	InvalidColumnDefinition          = "42611"
	InvalidObjectDefinition          = "42P17"
	UndefinedDatabase                = "3D000"
	ProtocolViolation                = "08P01"
	ConnectionException              = "08000"
	TooManyConnections               = "53300"
	OutOfMemory                      = "53200"
	DiskFull                         = "53100"
	ProgramLimitExceeded             = "54000"
	StatementTooComplex              = "54001"
	TooManyColumns                   = "54011"
	QueryCanceled                    = "57014"
	LockNotAvailable                 = "55P03"
	IdleSessionTimeout               = "57P05"
	ReservedName                     = "42939"
	AdminShutdown                    = "57P01"
	InternalError                    = "XX000"
	CantChangeRuntimeParam           = "55P02"
	GeneratedAlways                  = "428C9"
	InvalidPreparedStatementDef      = "42P14"
	DuplicatePreparedStatement       = "42P05"
	IndeterminateDatatype            = "42P18"
	InvalidSchemaName                = "3F000"
	ObjectInUse                      = "55006"
	CheckViolation                   = "23514"
	ForeignKeyViolation              = "23503"
	InvalidForeignKey                = "42830"
	InvalidRegularExpression         = "2201B"
	ReadOnlySQLTransaction           = "25006"
	InvalidCatalogName               = "3D000"
	ConfigurationLimitExceeded       = "53400"
	IdleInTransactionTimeout         = "25P03"
	InvalidEscapeSequence            = "22025"
	CharacterNotInRepertoire         = "22021"
	InvalidDatetimeFormatOverflw     = "22008"
	DependentObjectsStillExist       = "2BP01"
	InvalidGrantOperation            = "0LP01"
	PrivilegeNotGranted              = "01007"
	PrivilegeNotRevoked              = "01006"
	SequenceGeneratorLimitExceeded   = "2200H"
	ObjectNotInPrerequisiteState     = "55000"
	InvalidCursorName                = "34000"
	DuplicateCursor                  = "42P03"
	ArraySubscriptError              = "2202E"
)

// Window functions and WITH RECURSIVE.
const (
	NullValueNotAllowed             = "22004"
	InvalidPrecedingOrFollowingSize = "22013"
	InvalidArgumentForNtile         = "22014"
	InvalidArgumentForNthValue      = "22016"
	WindowingError                  = "42P20"
	InvalidRecursion                = "42P19"
	DuplicateAlias                  = "42712"
)

// Error is an error with a SQLSTATE. It is what the wire protocol turns into
// an ErrorResponse.
type Error struct {
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int // 1-based character offset into the statement; 0 if unknown
	// Where is the CONTEXT line: where the error happened inside the
	// statement ("COPY t, line 3, column x: \"abc\"").
	Where string
	// Fatal makes the server report severity FATAL and close the connection.
	Fatal bool
}

func (e *Error) Error() string { return e.Message }

// New returns an error with the given code and formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotSupported is the error for a feature PivotDB does not have yet.
func NotSupported(format string, args ...any) *Error {
	return &Error{Code: FeatureNotSupported, Message: fmt.Sprintf(format, args...) + " is not supported yet"}
}

// WithPosition returns a copy of err positioned at pos when err is an *Error
// without a position; other errors are returned unchanged.
func WithPosition(err error, pos int) error {
	var e *Error
	if errors.As(err, &e) && e.Position == 0 && pos > 0 {
		c := *e
		c.Position = pos
		return &c
	}
	return err
}

// As returns err as an *Error. Errors without a code become XX000 so that
// they are reported, never swallowed; their text keeps the original message.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InternalError, Message: err.Error()}
}

// Code returns the SQLSTATE of err (XX000 for errors without one).
func Code(err error) string {
	if err == nil {
		return SuccessfulCompletion
	}
	return As(err).Code
}

// Date, time and interval values (types/interval.go).
const (
	IntervalFieldOverflow = "22015"
	// DatetimeValueOutOfRange is PostgreSQL's ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
	// the same code as DatetimeFieldOverflow.
	DatetimeValueOutOfRange = "22008"
)
