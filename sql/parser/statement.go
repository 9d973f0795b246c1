package parser

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Statement is one parsed statement of a script. Exactly one of AST,
// Settings, Reshard, Set, Show, Reset, Txn, Deallocate, Discard,
// DropIndex, Reindex, Unsupported, User, RoleSetting, Grant, AlterOwner, Comment,
// Truncate, Lock, Vacuum, Sequence, Type, Function, Cursor, Job and Copy is set, except that DECLARE CURSOR sets both
// Cursor and AST (its query), and COPY ... TO both Copy and AST.
type Statement struct {
	// Text is this statement's original text: from its first token to its
	// last, without the terminating ';' and without surrounding comments.
	Text string
	// Offset is the byte offset of Text in the script.
	Offset int
	// AST is TiDB's tree for the rewritten text; nil for the YQL-only and
	// session statements below.
	AST ast.StmtNode
	// TiDBText is the rewritten text handed to TiDB's parser ("" when AST
	// is nil). It is for debugging and tests; positions in AST nodes
	// (ParamMarkerExpr.Offset, OriginTextPosition) refer to it.
	TiDBText string
	// Position maps an AST node's offset (OriginTextPosition) to the
	// 1-based character position in the script that errors report; nil for
	// statements without an AST.
	Position func(offset int) int
	// Upsert is set for YQL's UPSERT INTO (also under EXPLAIN), which is
	// handed to TiDB as INSERT INTO: AST is then an *ast.InsertStmt (or an
	// *ast.ExplainStmt around one).
	Upsert bool
	// Explain holds EXPLAIN's options when the statement is an EXPLAIN
	// with an option list or ANALYZE / VERBOSE; AST is then the
	// *ast.ExplainStmt of the statement explained.
	Explain *ExplainOptions
	// NoData is CREATE TABLE ... AS query WITH NO DATA (the trailing WITH
	// [NO] DATA is taken off before TiDB's grammar, which lacks it).
	NoData bool
	// Temp is CREATE TEMP TABLE; OnCommit its ON COMMIT action ("preserve
	// rows", "delete rows", "drop"; "" when not given). The words are taken
	// off before TiDB's grammar.
	Temp     bool
	OnCommit string
	// Returning is the RETURNING list of an INSERT, UPSERT, REPLACE,
	// UPDATE or DELETE (nil: none), parsed as a select list.
	Returning []*ast.SelectField
	// OnConflict is INSERT's ON CONFLICT clause (nil: none).
	OnConflict *OnConflict
	// Identities are the serial and identity columns of CREATE TABLE and
	// ALTER TABLE ... ADD, in order.
	Identities []ColumnIdentity
	// With holds the settings of CREATE TABLE ... WITH (...), in order.
	With []Setting
	// Locking are a query's top-level locking clauses (FOR UPDATE, ...),
	// in order; AsOf its AS OF SYSTEM TIME clause (locking.go). Both are
	// taken off before TiDB parses the rest.
	Locking []LockingClause
	AsOf    *AsOfClause
	// WithDML are the data-modifying queries of the statement's top-level
	// WITH, taken out of AST (with_dml.go); the statement is the rest.
	WithDML []WithDML
	// NumParams is the highest $n in the statement (a gap such as $1, $3
	// still gives 3).
	NumParams int
	// ParamIndex maps a parameter marker to the $n it stands for:
	// ParamIndex[k] = n for the marker whose ParamMarkerExpr.Order is k.
	// Parse sets Order to the marker's position among all markers in text
	// order, so $1 used twice has two markers that both map to 1.
	ParamIndex []int
	// Values, when set, are the rows of an INSERT's (UPSERT's, REPLACE's)
	// VALUES list of literals, read without TiDB's parser (values.go);
	// the list is then VALUES () in AST. The binder takes them instead of
	// InsertStmt.Lists.
	Values *LiteralRows

	// Alter lists the PostgreSQL actions of an ALTER TABLE that TiDB's
	// grammar lacks, by the position of their spec (see AlterAction).
	Alter []AlterAction

	Settings    *AlterSettings
	Reshard     *Reshard
	DropIndex   *DropIndex
	Reindex     *Reindex
	Unsupported *Unsupported
	Set         *SetVar
	Show        *ShowVar
	Reset       *ResetVar
	Txn         *TxnStmt
	Deallocate  *Deallocate
	Discard     *Discard
	User        *UserStmt
	Truncate    *Truncate
	// Lock is LOCK [TABLE] (lock.go).
	Lock     *Lock
	Vacuum   *Vacuum
	Sequence *SequenceStmt
	// Type is CREATE TYPE ... AS ENUM, ALTER TYPE or DROP TYPE (enumtype.go).
	Type *TypeStmt
	// Function is CREATE [OR REPLACE] FUNCTION or DROP FUNCTION (function.go).
	Function    *FunctionStmt
	RoleSetting *RoleSetting
	Grant       *Grant
	AlterOwner  *AlterOwner
	// Comment is COMMENT ON TABLE|COLUMN|INDEX (comment.go).
	Comment *Comment
	// Cursor is DECLARE, FETCH, MOVE or CLOSE; DECLARE's query is in AST.
	Cursor *CursorStmt
	// Job is SHOW JOBS / SHOW JOB, CANCEL, PAUSE or RESUME JOB.
	Job *JobStmt
	// Cluster is ALTER CLUSTER DECOMMISSION NODE n (cluster.go).
	Cluster *ClusterStmt
	// Copy is COPY; the query of COPY ... TO is in AST.
	Copy *CopyStmt
}

// Setting is one "name = value" of CREATE TABLE ... WITH (...) or
// ALTER TABLE ... SET.
type Setting struct {
	// Name is the setting name as written; compare it case-insensitively.
	Name string
	// Pos is the 1-based character position of Name in the script.
	Pos   int
	Value Value
}

// ValueKind is the shape of a setting value.
type ValueKind uint8

// The shapes a setting value can take.
const (
	// ValueIdent is a bare word such as ENABLED; Str is it as written.
	ValueIdent ValueKind = iota + 1
	// ValueNumber is a numeric literal; Str is its text with any sign
	// ("-5", "1.5").
	ValueNumber
	// ValueString is a string literal; Str is the decoded string.
	ValueString
	// ValueTyped is a YQL typed literal such as Interval("PT1H"); Type is
	// its type name as written (with "(p,s)" for Decimal("1.5", 10, 2)),
	// Str the decoded string.
	ValueTyped
	// ValueTuple is "(v, ...)"; Items holds the elements, which may be
	// tuples themselves: ((10), (100, "abc")).
	ValueTuple
)

func (k ValueKind) String() string {
	switch k {
	case ValueIdent:
		return "ident"
	case ValueNumber:
		return "number"
	case ValueString:
		return "string"
	case ValueTyped:
		return "typed"
	case ValueTuple:
		return "tuple"
	}
	return "invalid"
}

// Value is a setting value: its original text plus a small tree of its
// shape. Values are literals only; parameters and expressions are syntax
// errors.
type Value struct {
	Kind ValueKind
	// Text is the value's original source text ("Interval(\"PT1H\") ON ts").
	Text string
	// Pos is the 1-based character position of the value in the script.
	Pos   int
	Str   string
	Type  string
	Items []Value
	// SingleQuoted marks a ValueString written '...' (not "..." or a
	// dollar quote): pg_dump writes reloptions values so.
	SingleQuoted bool
	// On is the column after ON, Unit the word after AS (as written; ""
	// when absent). A scalar that is a setting's whole value may have them
	// (never a tuple or its elements); only TTL accepts them.
	On, Unit string
}

// AlterSettings is YQL's ALTER TABLE t SET (k = v, ...), ALTER TABLE t SET
// k v and ALTER TABLE t RESET (k, ...).
type AlterSettings struct {
	Table *ast.TableName
	// Set holds the settings to change; Reset the names to reset. One of
	// them is empty.
	Set   []Setting
	Reset []SettingName
}

// SettingName is a setting named in ALTER TABLE ... RESET.
type SettingName struct {
	Name string // as written
	Pos  int    // 1-based character position in the script
}

// SetVar is a session SET: SET [SESSION|LOCAL] name {=|TO} value[, ...],
// SET TIME ZONE value (Name "timezone") and SET NAMES value (Name
// "client_encoding").
type SetVar struct {
	// Name is the lowercased variable name, dotted for custom variables.
	Name string
	// Values are the values as written; strings are unquoted and decoded,
	// numbers keep their sign ("-1").
	Values []string
	// Default is set for "= DEFAULT", "TO DEFAULT" and SET TIME ZONE
	// LOCAL/DEFAULT; Values is then empty.
	Default bool
	// Local is set for SET LOCAL (for the current transaction only).
	Local bool
}

// ShowVar is SHOW name, SHOW ALL, SHOW TIME ZONE ("timezone") and SHOW
// TRANSACTION ISOLATION LEVEL ("transaction_isolation").
type ShowVar struct {
	Name string // lowercased; "" with All
	All  bool
}

// ResetVar is RESET name and RESET ALL.
type ResetVar struct {
	Name string // lowercased; "" with All
	All  bool
}

// TxnKind is the kind of a transaction control statement.
type TxnKind uint8

// The transaction statements.
const (
	// TxnBegin is BEGIN [WORK|TRANSACTION] [modes] or START TRANSACTION
	// [modes].
	TxnBegin TxnKind = iota + 1
	// TxnCommit is COMMIT or END [WORK|TRANSACTION] [AND [NO] CHAIN].
	TxnCommit
	// TxnRollback is ROLLBACK or ABORT [WORK|TRANSACTION] [AND [NO] CHAIN].
	TxnRollback
	// TxnSavepoint is SAVEPOINT name.
	TxnSavepoint
	// TxnRelease is RELEASE [SAVEPOINT] name.
	TxnRelease
	// TxnRollbackTo is ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] name.
	TxnRollbackTo
	// TxnSetCharacteristics is SET TRANSACTION modes (Session false) or SET
	// SESSION CHARACTERISTICS AS TRANSACTION modes (Session true).
	TxnSetCharacteristics
)

var txnKindNames = map[TxnKind]string{
	TxnBegin: "begin", TxnCommit: "commit", TxnRollback: "rollback", TxnSavepoint: "savepoint",
	TxnRelease: "release", TxnRollbackTo: "rollback to", TxnSetCharacteristics: "set characteristics",
}

func (k TxnKind) String() string {
	if s, ok := txnKindNames[k]; ok {
		return s
	}
	return "invalid"
}

// TxnAccess is a transaction's access mode.
type TxnAccess uint8

// Access modes; AccessDefault means the statement did not say.
const (
	AccessDefault TxnAccess = iota
	AccessReadWrite
	AccessReadOnly
)

func (a TxnAccess) String() string {
	switch a {
	case AccessReadWrite:
		return "read write"
	case AccessReadOnly:
		return "read only"
	}
	return "default"
}

// TxnDeferrable is a transaction's [NOT] DEFERRABLE mode;
// DeferrableDefault means the statement did not say.
type TxnDeferrable uint8

const (
	DeferrableDefault TxnDeferrable = iota
	Deferrable
	NotDeferrable
)

func (d TxnDeferrable) String() string {
	switch d {
	case Deferrable:
		return "deferrable"
	case NotDeferrable:
		return "not deferrable"
	}
	return "default"
}

// TxnStmt is a transaction control statement.
type TxnStmt struct {
	Kind TxnKind
	// Isolation is the requested isolation level, lowercased and single
	// spaced ("serializable", "repeatable read", "read committed", "read
	// uncommitted"); "" when not given.
	Isolation  string
	Access     TxnAccess
	Deferrable TxnDeferrable
	// AsOf is CockroachDB's AS OF SYSTEM TIME mode of BEGIN and SET
	// TRANSACTION (nil: none).
	AsOf *AsOfClause
	// Chain is set for COMMIT/ROLLBACK AND CHAIN.
	Chain bool
	// Savepoint is the savepoint name (lowercased unless quoted).
	Savepoint string
	// Session distinguishes SET SESSION CHARACTERISTICS from SET
	// TRANSACTION.
	Session bool
}

// ReshardMode says how ALTER TABLE ... RESHARD picks the new pivots.
type ReshardMode uint8

// The resharding modes (YTsaurus reshard-table: pivot keys, tablet_count,
// --uniform).
const (
	// ReshardAtKeys replaces the pivots with the given keys.
	ReshardAtKeys ReshardMode = iota + 1
	// ReshardBySize cuts the table into Count shards of about equal data size.
	ReshardBySize
	// ReshardUniform cuts the first key column's range into Count equal parts.
	ReshardUniform
)

// Reshard is PivotDB's ALTER TABLE t RESHARD AT ((k1), (k2, 'x')) |
// RESHARD INTO n [BY SIZE | UNIFORM].
type Reshard struct {
	Table *ast.TableName
	Mode  ReshardMode
	// Keys is the tuple list of RESHARD AT, shaped like PARTITION_AT_KEYS.
	Keys  Value
	Count int64
	Pos   int // position of the RESHARD word
}

// Deallocate is DEALLOCATE [PREPARE] name | ALL.
type Deallocate struct {
	// Name is the prepared statement's name: a bare name lowercased (as
	// PostgreSQL folds identifiers), a quoted one as written.
	Name string
	All  bool
}

// Discard is DISCARD ALL | PLANS | SEQUENCES | TEMP | TEMPORARY.
type Discard struct {
	Target string // lowercased; "temporary" is reported as "temp"
}

// AlterActionKind is a PostgreSQL ALTER TABLE action TiDB cannot parse.
type AlterActionKind uint8

const (
	// AlterSetNotNull is ALTER [COLUMN] c SET NOT NULL (TiDB sees FORCE).
	AlterSetNotNull AlterActionKind = iota + 1
	// AlterDropNotNull is ALTER [COLUMN] c DROP NOT NULL (TiDB sees FORCE).
	AlterDropNotNull
	// AlterSetType is ALTER [COLUMN] c [SET DATA] TYPE t [USING e] (TiDB
	// sees FORCE).
	AlterSetType
	// AlterNotValid marks ADD CONSTRAINT ... NOT VALID (TiDB sees the
	// ADD without NOT VALID).
	AlterNotValid
	// AlterIfExists marks DROP CONSTRAINT IF EXISTS (TiDB sees DROP
	// CONSTRAINT).
	AlterIfExists
	// AlterTableIfExists is ALTER TABLE IF EXISTS t (TiDB sees ALTER
	// TABLE t); its Spec is -1.
	AlterTableIfExists
)

// AlterAction is one PostgreSQL ALTER TABLE action; Spec is the index of
// the TiDB spec (AlterTableStmt.Specs) it stands for or qualifies.
type AlterAction struct {
	Spec   int
	Kind   AlterActionKind
	Column string
	Type   types.Type
	// Using is the text of SET TYPE's USING expression ("" for none).
	Using string
}
