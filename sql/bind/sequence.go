package bind

import (
	"fmt"
	"math"
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// DefaultSequenceCache is the CACHE of a sequence that does not give one:
// how many values one synced write of the metadata store reserves.
// PostgreSQL's default is 1; PivotDB's is larger so that nextval does not
// wait for the disk, at the price of a larger gap after a restart.
const DefaultSequenceCache = 1000

// CreateSequence is CREATE SEQUENCE: Sequence is the validated descriptor
// (ID unset); OwnedBy, when set, is the [table, column] that will own it.
type CreateSequence struct {
	noRows
	Sequence    *catalog.Sequence
	IfNotExists bool
	OwnedBy     []string
}

// AlterSequence is ALTER SEQUENCE: the options are applied to the
// descriptor as it is when the statement runs (AlterSequenceOptions).
type AlterSequence struct {
	noRows
	Name     string
	IfExists bool
	Options  parser.SequenceOptions
}

// DropSequences is DROP SEQUENCE [IF EXISTS] s, ...
type DropSequences struct {
	noRows
	Names    []string
	IfExists bool
}

// planSequence binds the sequence statements.
func (a *binder) planSequence(st *parser.SequenceStmt) (Statement, error) {
	var names []string
	for _, parts := range st.Names {
		if len(parts) == 2 && !strings.EqualFold(parts[0], a.env.Database.Name) && !strings.EqualFold(parts[0], "public") {
			return nil, sqlerr.NotSupported("sequences of another database (%s)", parts[0])
		}
		names = append(names, parts[len(parts)-1])
	}
	switch st.Kind {
	case parser.SequenceCreate:
		if a.snap.RelationExists(a.env.Database.ID, names[0]) && !st.IfNotExists {
			return nil, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", names[0])
		}
		q, err := SequenceOptions(&catalog.Sequence{DatabaseID: a.env.Database.ID, Name: names[0]}, st.Options, true)
		if err != nil {
			return nil, err
		}
		return &CreateSequence{Sequence: q, IfNotExists: st.IfNotExists, OwnedBy: st.Options.OwnedBy}, nil
	case parser.SequenceAlter:
		if q, ok := a.snap.Sequence(a.env.Database.ID, names[0]); ok {
			// Check the options now, so that a bad ALTER fails before it
			// runs; it is applied again to the descriptor of that time.
			if _, err := SequenceOptions(q, st.Options, false); err != nil {
				return nil, err
			}
		}
		return &AlterSequence{Name: names[0], IfExists: st.IfExists, Options: st.Options}, nil
	}
	return &DropSequences{Names: names, IfExists: st.IfExists}, nil
}

// typeBounds are the smallest and largest values of a sequence type.
func typeBounds(t types.Type) (lo, hi int64, ok bool) {
	switch t.Family {
	case types.Int16:
		return math.MinInt16, math.MaxInt16, true
	case types.Int32:
		return math.MinInt32, math.MaxInt32, true
	case types.Int64:
		return math.MinInt64, math.MaxInt64, true
	}
	return 0, 0, false
}

// SequenceOptions applies options to a copy of base (a new sequence when
// create is set: the defaults fill what is not given) and checks the
// result by PostgreSQL's rules (22023).
func SequenceOptions(base *catalog.Sequence, o parser.SequenceOptions, create bool) (*catalog.Sequence, error) {
	q := *base
	bad := func(format string, args ...any) error {
		return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
	}
	if create {
		q.Type, q.Increment, q.Cache = types.TypeInt64, 1, DefaultSequenceCache
	}
	oldType := q.Type
	if o.Type != nil {
		q.Type = *o.Type
	}
	lo, hi, ok := typeBounds(q.Type)
	if !ok {
		return nil, bad("sequence type must be smallint, integer, or bigint")
	}
	if o.Increment != nil {
		q.Increment = *o.Increment
	}
	if q.Increment == 0 {
		return nil, bad("INCREMENT must not be zero")
	}
	// MINVALUE and MAXVALUE default by the direction; a changed type
	// moves a bound that was the old type's limit (PostgreSQL does so).
	oldLo, oldHi, _ := typeBounds(oldType)
	switch {
	case o.MinValue != nil:
		q.MinValue = *o.MinValue
	case create || o.NoMinValue || (o.Type != nil && q.MinValue == oldLo):
		q.MinValue = 1
		if q.Increment < 0 {
			q.MinValue = lo
		}
	}
	switch {
	case o.MaxValue != nil:
		q.MaxValue = *o.MaxValue
	case create || o.NoMaxValue || (o.Type != nil && q.MaxValue == oldHi):
		q.MaxValue = hi
		if q.Increment < 0 {
			q.MaxValue = -1
		}
	}
	typeName := map[types.Family]string{types.Int16: "smallint", types.Int32: "integer", types.Int64: "bigint"}[q.Type.Family]
	if q.MinValue < lo || q.MinValue > hi {
		return nil, bad("MINVALUE (%d) is out of range for sequence data type %s", q.MinValue, typeName)
	}
	if q.MaxValue < lo || q.MaxValue > hi {
		return nil, bad("MAXVALUE (%d) is out of range for sequence data type %s", q.MaxValue, typeName)
	}
	if q.MinValue >= q.MaxValue {
		return nil, bad("MINVALUE (%d) must be less than MAXVALUE (%d)", q.MinValue, q.MaxValue)
	}
	switch {
	case o.Start != nil:
		q.Start = *o.Start
	case create:
		q.Start = q.MinValue
		if q.Increment < 0 {
			q.Start = q.MaxValue
		}
	}
	if q.Start < q.MinValue {
		return nil, bad("START value (%d) cannot be less than MINVALUE (%d)", q.Start, q.MinValue)
	}
	if q.Start > q.MaxValue {
		return nil, bad("START value (%d) cannot be greater than MAXVALUE (%d)", q.Start, q.MaxValue)
	}
	if o.RestartWith != nil {
		if *o.RestartWith < q.MinValue {
			return nil, bad("RESTART value (%d) cannot be less than MINVALUE (%d)", *o.RestartWith, q.MinValue)
		}
		if *o.RestartWith > q.MaxValue {
			return nil, bad("RESTART value (%d) cannot be greater than MAXVALUE (%d)", *o.RestartWith, q.MaxValue)
		}
	}
	if o.Cache != nil {
		if *o.Cache < 1 {
			return nil, bad("CACHE (%d) must be greater than zero", *o.Cache)
		}
		q.Cache = *o.Cache
	}
	if o.Cycle != nil {
		q.Cycle = *o.Cycle
	}
	return &q, nil
}

// identityColumns turns the serial and identity columns of CREATE TABLE
// into NOT NULL columns whose DEFAULT takes the next value of a sequence
// each owns, named <table>_<column>_seq (with a number appended when the
// name is taken, as PostgreSQL does).
func (a *binder) identityColumns(t *catalog.Table, ids []parser.ColumnIdentity) ([]*catalog.Sequence, error) {
	var seqs []*catalog.Sequence
	taken := map[string]bool{}
	for _, id := range ids {
		i := t.ColumnIndex(id.Column)
		if i < 0 {
			return nil, sqlerr.New(sqlerr.InternalError, "bind: identity column %q not found", id.Column)
		}
		col := &t.Columns[i]
		if _, _, ok := typeBounds(col.Type); !ok {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
		}
		if col.Default != "" {
			if id.Kind == parser.IdentitySerial {
				return nil, sqlerr.New(sqlerr.SyntaxError, "multiple default values specified for column %q of table %q", col.Name, t.Name)
			}
			return nil, sqlerr.New(sqlerr.SyntaxError, "both default and identity specified for column %q of table %q", col.Name, t.Name)
		}
		if col.Computed != "" {
			return nil, sqlerr.New(sqlerr.SyntaxError, "both identity and generation expression specified for column %q of table %q", col.Name, t.Name)
		}
		opts := id.Options
		if opts.Type == nil {
			opts.Type = &col.Type
		}
		base := fmt.Sprintf("%s_%s_seq", t.Name, col.Name)
		name := base
		for n := 1; a.snap.RelationExists(a.env.Database.ID, name) || taken[strings.ToLower(name)] || strings.EqualFold(name, t.Name); n++ {
			name = fmt.Sprintf("%s%d", base, n)
		}
		taken[strings.ToLower(name)] = true
		q, err := SequenceOptions(&catalog.Sequence{DatabaseID: a.env.Database.ID, Name: name}, opts, true)
		if err != nil {
			return nil, err
		}
		q.OwnerColumn = col.Name
		switch id.Kind {
		case parser.IdentityAlways:
			col.Identity, q.Identity = catalog.IdentityAlways, true
		case parser.IdentityByDefault:
			col.Identity, q.Identity = catalog.IdentityByDefault, true
		}
		col.NotNull = true
		col.Default = "nextval(" + quoteLiteral(name) + ")"
		seqs = append(seqs, q)
	}
	return seqs, nil
}

// quoteLiteral spells s as a SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// identityAlwaysError refuses a value written into a GENERATED ALWAYS
// identity column.
func identityAlwaysError(col string, update bool) error {
	msg := fmt.Sprintf("cannot insert a non-DEFAULT value into column %q", col)
	hint := "Use OVERRIDING SYSTEM VALUE to override."
	if update {
		msg, hint = fmt.Sprintf("column %q can only be updated to DEFAULT", col), ""
	}
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways, Message: msg,
		Detail: fmt.Sprintf("Column %q is an identity column defined as GENERATED ALWAYS.", col), Hint: hint}
}
