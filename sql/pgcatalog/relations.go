package pgcatalog

import (
	"fmt"
	"github.com/pivotdb/pivotdb/activity"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Object identifiers and the View that relations are computed from; the
// relations themselves are in tables.go.

const (
	oidPgCatalog         = 11
	oidPublic            = 2200
	oidInformationSchema = 13000
	oidBootstrapUser     = 10
	// oidPgDatabaseOwner is PostgreSQL's built-in role that stands for
	// the owner of the current database; it owns schema public.
	oidPgDatabaseOwner   = 6171
	oidHeapAM            = 2
	oidBtreeAM           = 403
	oidDefaultTablespace = 1663
	oidDefaultCollation  = 100
	oidCCollation        = 950
	// systemViewOID numbers the virtual tables themselves in pg_class.
	systemViewOID = 12000
	// pkIndexOID and pkConstraintOID set bits above any table ID to
	// number a table's primary key index and constraint.
	pkIndexBit      = 1 << 30
	pkConstraintBit = 1 << 29
)

func pkIndexOID(t *catalog.Table) int64 { return int64(t.ID) | pkIndexBit }

// checkConstraintOID numbers CHECK constraint k of t: bit 28, the
// constraint's position in bits 20-26, the table id below.
func checkConstraintOID(t *catalog.Table, k int) int64 {
	return 1<<28 | int64(k&0x7f)<<20 | int64(t.ID&0xfffff)
}

// fkConstraintOID numbers FOREIGN KEY k of t: bit 27, the position in
// bits 20-26, the table id below.
func fkConstraintOID(t *catalog.Table, k int) int64 {
	return 1<<27 | int64(k&0x7f)<<20 | int64(t.ID&0xfffff)
}

// notNullName is the name PostgreSQL 15's information_schema gives the
// NOT NULL constraint of column i: <namespace oid>_<table oid>_<attnum>_not_null.
func notNullName(t *catalog.Table, i int) string {
	return fmt.Sprintf("%d_%d_%d_not_null", oidPublic, t.ID, attnum(t, i))
}

// exprUsesColumn reports whether stored expression text names a column
// (as a word, outside string literals, compared case-insensitively).
func exprUsesColumn(text, name string) bool {
	lower, name := strings.ToLower(text), strings.ToLower(name)
	inQuote := false
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		if c == '\'' {
			inQuote = !inQuote
			continue
		}
		if inQuote || !strings.HasPrefix(lower[i:], name) {
			continue
		}
		before := i == 0 || !isWordByte(lower[i-1])
		after := i+len(name) >= len(lower) || !isWordByte(lower[i+len(name)])
		if before && after {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
func pkConstraintOID(t *catalog.Table) int64 { return int64(t.ID) | pkConstraintBit }

// View is what a statement's virtual tables and session functions are
// computed from: the catalog snapshot the statement was bound against, the
// session's database and user, and its settings (read when a row is
// computed, so current_setting sees a SET earlier in the same transaction).
type View struct {
	Snapshot *catalog.Snapshot
	Database *catalog.Database
	User     string
	Settings *sessionvars.Vars
	// Backend is the session's entry in the registry of live sessions
	// (package activity), which pg_stat_activity lists and
	// pg_cancel_backend looks targets up in; nil for a session no server
	// registered (it then sees no sessions).
	Backend *activity.Backend
	// TableStats reads a table's counters for pg_stat_user_tables; nil:
	// the view has no rows.
	TableStats func(tableID uint64) (TableStats, error)
	// RelationSize is the size in bytes of a table's or a secondary
	// index's data (its shards' data sizes), for pg_relation_size and its
	// kind (funcs_size.go); nil: sizes are NULL.
	RelationSize func(id uint64) (int64, error)
	// ViewColumns plans a view's query for its result columns (the
	// pg_attribute rows of a view); nil: views list no columns.
	ViewColumns func(vw *catalog.View) ([]planner.Column, error)
	// TableOptions lists a table's settings as "name=value" items, its
	// current shard boundaries as partition_at_keys (pg_class.reloptions);
	// nil: none are listed.
	TableOptions func(t *catalog.Table) ([]string, error)
	// Notice sends a NOTICE to the client (set_config's, as SET's); nil:
	// none is sent.
	Notice func(msg string)
	// Locks lists the locks held and awaited (pg_locks); nil: none.
	Locks func() ([]LockRow, error)
	// Cursors lists the session's open cursors (pg_cursors), read when
	// the statement runs; nil: none.
	Cursors func() []Cursor
	// TempPrefix starts the catalog names of the session's temporary
	// tables (sql/bind/temp.go): they are listed under the name the
	// session gave them; other sessions' temporary tables are not listed.
	TempPrefix string
}

// Cursor is one open cursor as pg_cursors shows it.
type Cursor struct {
	Name, Statement              string
	Holdable, Binary, Scrollable bool
	Created                      types.Value // a Timestamp
}

// tempNamePrefix starts every temporary table's catalog name
// (bind.TempNamePrefix; bind imports this package).
const tempNamePrefix = "pg_temp_"

// Table is one pg_catalog or information_schema relation.
type Table struct {
	Schema string
	Name   string
	Cols   []planner.Column
	rows   func(v *View) [][]types.Value
	// rowsErr is rows for a relation whose source can fail (pg_locks
	// reads the store's lock records); used when set.
	rowsErr func(v *View) ([][]types.Value, error)
	// oid is the relation's own OID (systemOID), its rows' tableoid.
	oid int64
}

// cols parses "name type, ..." with PostgreSQL catalog type names.
func cols(spec string) []planner.Column {
	var out []planner.Column
	for _, f := range strings.Split(spec, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(f), " ")
		var t types.Type
		switch typ {
		case "oid", "int8", "xid", "regproc":
			t = types.TypeInt64
		case "int4":
			t = types.TypeInt32
		case "int2":
			t = types.T(types.Int16)
		case "float4":
			t = types.T(types.Float)
		case "bool":
			t = types.TypeBool
		case "timestamp":
			t = types.TypeTimestamp
		case "name", "text", "char":
			t = types.TypeUtf8
		case "text[]", "name[]", "char[]", "aclitem[]":
			// aclitem has no type of its own: its elements are the
			// text PostgreSQL prints for them.
			t = types.ArrayOf(types.TypeUtf8)
		case "int2[]", "int2vector":
			// int2vector and oidvector are arrays whose values (given
			// as "1 2") print as PostgreSQL's do (types.NewVector):
			// SQLAlchemy splits indkey::varchar on blanks, and unnest and
			// subscripts see the elements. RowDescription says int2[].
			t = types.ArrayOf(types.T(types.Int16))
		case "oid[]", "oidvector", "regtype[]":
			t = types.ArrayOf(types.TypeInt64)
		default:
			panic("sql: unknown catalog column type " + typ)
		}
		out = append(out, planner.Column{Name: name, Type: t})
	}
	return out
}

// row converts Go values to a row of the table's column types: nil is
// NULL, integers become the column's integer family.
func row(cs []planner.Column, vals ...any) []types.Value {
	if len(vals) != len(cs) {
		panic(fmt.Sprintf("sql: catalog row has %d values for %d columns", len(vals), len(cs)))
	}
	out := make([]types.Value, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			out[i] = types.NullValue
		case bool:
			out[i] = types.NewBool(v)
		case string:
			if cs[i].Type.IsArray() {
				// Array columns are produced in PostgreSQL's text form;
				// a malformed one is a bug in this package. int2vector
				// and oidvector values come space-separated ("1 2"), as
				// PostgreSQL writes them, and print so again.
				var a types.Value
				var err error
				if v == "" || v[0] != '{' && v[0] != '[' {
					fields := strings.Fields(v)
					elems := make([]types.Value, len(fields))
					for k, f := range fields {
						if elems[k], err = types.ParseText(cs[i].Type.ElemType(), f); err != nil {
							break
						}
					}
					a = types.NewVector(cs[i].Type.ElemType(), elems)
				} else {
					a, err = types.ParseText(cs[i].Type, v)
				}
				if err != nil {
					panic(fmt.Sprintf("sql: catalog array %q for %s: %v", v, cs[i].Name, err))
				}
				out[i] = a
				continue
			}
			out[i] = types.NewUtf8(v)
		case int:
			out[i] = intValue(cs[i].Type, int64(v))
		case int64:
			out[i] = intValue(cs[i].Type, v)
		case uint64:
			out[i] = intValue(cs[i].Type, int64(v))
		case float64:
			out[i] = types.NewFloat(v)
		case time.Time:
			if v.IsZero() {
				out[i] = types.NullValue
			} else {
				out[i] = types.NewTimestamp(v.UnixMicro())
			}
		case types.Value:
			out[i] = v
		default:
			panic(fmt.Sprintf("sql: catalog value %T", v))
		}
	}
	return out
}

func intValue(t types.Type, i int64) types.Value {
	if t.Family == types.Float {
		return types.NewFloat(float64(i))
	}
	return types.NewInt(t.Family, i)
}

// virtualTables indexes pgCatalogTables and informationSchemaTables by
// "schema.name".
var virtualTables = map[string]*Table{}

// virtualTableLists are pgCatalogTables and informationSchemaTables, set
// in init because the rows of pg_class and pg_attribute list the virtual
// tables themselves (a package-level initializer would be a cycle).
var virtualTableLists [][]*Table

func init() {
	virtualTableLists = [][]*Table{pgCatalogTables, informationSchemaTables}
	for _, list := range virtualTableLists {
		for i, t := range list {
			virtualTables[t.Schema+"."+t.Name] = t
			t.oid = systemOID(t, i)
		}
	}
}

// Lookup resolves a table name to a system catalog relation, nil when it
// is none. pg_catalog is searched before the user's tables, as in
// PostgreSQL, where it is implicitly first on the search path;
// information_schema must be named.
func Lookup(schema, name string) *Table {
	schema = strings.ToLower(schema)
	name = strings.ToLower(name)
	if schema == "" {
		schema = "pg_catalog"
	}
	return virtualTables[schema+"."+name]
}

// Node plans a read of the relation: its rows are computed from v when the
// statement runs. After the relation's columns comes PostgreSQL's system
// column tableoid, hidden from SELECT *: the OID of the relation itself
// (pg_dump reads it to tell which catalog an object's row came from).
func (t *Table) Node(v *View) *planner.Generate {
	cols := append(slices.Clip(t.Cols), planner.Column{Name: "tableoid", Type: types.TypeInt64, Hidden: true})
	oid := types.NewInt64(t.oid)
	return &planner.Generate{Name: t.Schema + "." + t.Name, Cols: cols, Rows: func() ([][]types.Value, error) {
		var rows [][]types.Value
		if t.rowsErr != nil {
			var err error
			if rows, err = t.rowsErr(v); err != nil {
				return nil, err
			}
		} else {
			rows = t.rows(v)
		}
		for i, r := range rows {
			rows[i] = append(r, oid)
		}
		return rows, nil
	}}
}

// catalogOIDs are the OIDs PostgreSQL gives its system catalogs (fixed in
// its source since they are bootstrapped); pg_class lists those
// relations under them, and the tableoid of their rows is the same
// number, as clients expect ('pg_class'::regclass = 1259). The other
// virtual relations (views such as pg_roles) are numbered from
// systemViewOID.
var catalogOIDs = map[string]int64{
	"pg_class": 1259, "pg_namespace": 2615, "pg_type": 1247, "pg_proc": 1255, "pg_attribute": 1249,
	"pg_constraint": 2606, "pg_index": 2610, "pg_attrdef": 2604, "pg_extension": 3079, "pg_database": 1262,
	"pg_authid": 1260, "pg_am": 2601, "pg_cast": 2605, "pg_collation": 3456, "pg_description": 2609,
	"pg_depend": 2608, "pg_sequence": 2224, "pg_trigger": 2620, "pg_rewrite": 2618, "pg_inherits": 2611,
	"pg_policy": 3256, "pg_publication": 6104, "pg_tablespace": 1213, "pg_enum": 3501,
	"pg_statistic_ext": 3381, "pg_auth_members": 1261, "pg_db_role_setting": 2964, "pg_foreign_table": 3118,
	"pg_partitioned_table": 3350, "pg_publication_rel": 6106, "pg_publication_namespace": 6237,
	"pg_shdescription": 2396, "pg_init_privs": 3394, "pg_language": 2612, "pg_amop": 2602, "pg_amproc": 2603, "pg_range": 3541, "pg_operator": 2617, "pg_opclass": 2616, "pg_opfamily": 2753, "pg_conversion": 2607,
	"pg_aggregate": 2600, "pg_event_trigger": 3466, "pg_ts_parser": 3601, "pg_ts_dict": 3600, "pg_ts_template": 3764,
	"pg_ts_config": 3602, "pg_foreign_data_wrapper": 2328, "pg_foreign_server": 1417, "pg_default_acl": 826,
	"pg_subscription": 6100, "pg_largeobject_metadata": 2995, "pg_transform": 3576, "pg_shseclabel": 3592, "pg_seclabel": 3596,
}

// tables lists the session database's tables by name.
func (v *View) tables() []*catalog.Table {
	var ts []*catalog.Table
	for _, t := range v.Snapshot.Tables(v.Database.ID) {
		if strings.HasPrefix(t.Name, tempNamePrefix) {
			if v.TempPrefix == "" || !strings.HasPrefix(t.Name, v.TempPrefix) {
				continue
			}
			c := *t
			c.Name = strings.TrimPrefix(t.Name, v.TempPrefix)
			t = &c
		}
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts
}

// visibleTableColumns are a table's columns as clients see them, numbered from 1
// (attnum); the hidden key of a table without PRIMARY KEY is left out.
func visibleTableColumns(t *catalog.Table) []int {
	var out []int
	for i, c := range t.Columns {
		if !c.Hidden {
			out = append(out, i)
		}
	}
	return out
}

// attnum is the 1-based position of column i among the visible ones, 0 for
// a hidden column.
func attnum(t *catalog.Table, i int) int {
	for k, j := range visibleTableColumns(t) {
		if j == i {
			return k + 1
		}
	}
	return 0
}

// hasVisibleKey reports whether the table has a primary key a client can
// see (not the hidden key of a table declared without one).
func hasVisibleKey(t *catalog.Table) bool {
	if len(t.PrimaryKey) == 0 {
		return false
	}
	for _, k := range t.PrimaryKey {
		if t.Columns[k].Hidden {
			return false
		}
	}
	return true
}

// typeOID is the pg_type of a column: its wire type, except that a
// bounded Utf8 is varchar so that format_type prints its width, and that
// the YQL types PostgreSQL lacks are their domains (yqlDomains).
func typeOID(t types.Type) int64 {
	if t.Family == types.Array {
		// Arrays of the YQL-only types are arrays of their wire types
		// (PostgreSQL has no arrays of a domain).
		e := t.ElemType()
		if e.Family == types.Enum {
			return int64(t.OID())
		}
		eo := e.OID()
		if e.Family == types.Utf8 && e.Width > 0 && !e.Blank {
			eo = types.OIDVarchar
		}
		return int64(types.ArrayOID(eo))
	}
	if t.Family == types.Utf8 && t.Width > 0 && !t.Blank {
		return int64(types.OIDVarchar)
	}
	if d, ok := yqlDomains[t.Family]; ok {
		return d.oid
	}
	return int64(t.OID())
}

// typmod is PostgreSQL's atttypmod of a column type.
func typmod(t types.Type) int64 {
	switch {
	case t.Family == types.Array:
		return typmod(t.ElemType())
	case t.Family == types.Utf8 && t.Width > 0:
		return int64(t.Width) + 4
	case t.Family == types.Decimal && t.Precision > 0:
		return int64(t.Precision)<<16 | int64(t.Scale) + 4
	case t.Family == types.Interval && t.Qual != 0:
		return int64(types.IntervalTypmod(t.Qual))
	case t.Family == types.Time || t.Family == types.TimeTZ || t.Family == types.Timestamp || t.Family == types.TimestampTZ:
		return int64(types.TimeTypmod(t.Qual))
	}
	return -1
}

// pgTypeInfo describes one row of pg_type.
type pgTypeInfo struct {
	oid      int64
	typname  string
	len      int
	byVal    bool
	category string
	align    string
	// base and baseMod are a domain's base type and typmod (typtype 'd');
	// base is 0 for a base type.
	base, baseMod int64
}

// yqlDomains describe the YQL types that PostgreSQL has no type for as
// domains over the type they travel as on the wire (design §3.1), as
// PostgreSQL describes a domain: a Uint64 column's atttypid is the domain
// uint64 over numeric(20,0), and its values are sent as numeric.
// format_type prints the domain's name, a type name PivotDB reads back
// (so pg_dump's CREATE TABLE restores a Uint64 column as Uint64); clients
// that look domains up (JDBC's getColumns, SQLAlchemy's reflection) see
// the base type.
var yqlDomains = map[types.Family]pgTypeInfo{
	types.Int8:     {14002, "tinyint", 2, true, "N", "s", int64(types.OIDInt2), -1},
	types.Uint8:    {14006, "uint8", 2, true, "N", "s", int64(types.OIDInt2), -1},
	types.Uint16:   {14007, "uint16", 4, true, "N", "i", int64(types.OIDInt4), -1},
	types.Uint32:   {14008, "uint32", 8, true, "N", "d", int64(types.OIDInt8), -1},
	types.Uint64:   {14009, "uint64", -1, false, "N", "i", int64(types.OIDNumeric), 20<<16 + 4},
	types.Datetime: {14017, "datetime", 8, true, "D", "d", int64(types.OIDTimestamp), 0 + 4},
}

func init() {
	for _, d := range yqlDomains {
		pgTypes = append(pgTypes, d)
	}
	sort.Slice(pgTypes, func(i, j int) bool { return pgTypes[i].oid < pgTypes[j].oid })
}

var pgTypes = []pgTypeInfo{
	{16, "bool", 1, true, "B", "c", 0, 0},
	{17, "bytea", -1, false, "U", "i", 0, 0},
	{18, "char", 1, true, "Z", "c", 0, 0},
	{19, "name", 64, false, "S", "c", 0, 0},
	{20, "int8", 8, true, "N", "d", 0, 0},
	{21, "int2", 2, true, "N", "s", 0, 0},
	{23, "int4", 4, true, "N", "i", 0, 0},
	{25, "text", -1, false, "S", "i", 0, 0},
	{26, "oid", 4, true, "N", "i", 0, 0},
	{114, "json", -1, false, "U", "i", 0, 0},
	{700, "float4", 4, true, "N", "i", 0, 0},
	{701, "float8", 8, true, "N", "d", 0, 0},
	{705, "unknown", -2, false, "X", "c", 0, 0},
	{1042, "bpchar", -1, false, "S", "i", 0, 0},
	{1043, "varchar", -1, false, "S", "i", 0, 0},
	{1082, "date", 4, true, "D", "i", 0, 0},
	{1083, "time", 8, true, "D", "d", 0, 0},
	{1266, "timetz", 12, false, "D", "d", 0, 0},
	{1114, "timestamp", 8, true, "D", "d", 0, 0},
	{1184, "timestamptz", 8, true, "D", "d", 0, 0},
	{1186, "interval", 16, false, "T", "d", 0, 0},
	{1700, "numeric", -1, false, "N", "i", 0, 0},
	{2205, "regclass", 4, true, "N", "i", 0, 0},
	{2950, "uuid", 16, false, "U", "c", 0, 0},
	{3802, "jsonb", -1, false, "U", "i", 0, 0},
}

// arrayTypeName is pg_type's name of the array type whose element type
// has OID elem ("_int4"), or "" when it has none.
func arrayTypeName(elem int64) string {
	if types.ArrayOID(uint32(elem)) == 0 {
		return ""
	}
	for _, t := range pgTypes {
		if t.oid == elem {
			return "_" + t.typname
		}
	}
	return ""
}

// enumByOID finds an enum type of the view's database by its type OID.
func (v *View) enumByOID(oid int64) (*catalog.EnumType, bool) {
	if v == nil || v.Snapshot == nil || v.Database == nil {
		return nil, false
	}
	for _, e := range v.Snapshot.EnumTypes(v.Database.ID) {
		if int64(e.Def.OID()) == oid {
			return e, true
		}
	}
	return nil, false
}

// enumArrayByOID finds the enum type of the view's database whose array
// type has the OID.
func (v *View) enumArrayByOID(oid int64) (*catalog.EnumType, bool) {
	if v == nil || v.Snapshot == nil || v.Database == nil {
		return nil, false
	}
	for _, e := range v.Snapshot.EnumTypes(v.Database.ID) {
		if int64(e.Def.ArrayOID()) == oid {
			return e, true
		}
	}
	return nil, false
}

// formatType is format_type(oid, typmod) with the database's own types
// (enums) known.
func (v *View) formatType(oid, mod int64) string {
	if e, ok := v.enumByOID(oid); ok {
		return e.Def.Name
	}
	if e, ok := v.enumArrayByOID(oid); ok {
		return e.Def.Name + "[]"
	}
	return formatType(oid, mod)
}

// formatType is format_type(oid, typmod): the SQL name of a built-in type.
func formatType(oid, mod int64) string {
	if e := types.ElemOID(uint32(oid)); e != 0 {
		return formatType(int64(e), mod) + "[]"
	}
	switch oid {
	case 16:
		return "boolean"
	case 20:
		return "bigint"
	case 21:
		return "smallint"
	case 23:
		return "integer"
	case 700:
		return "real"
	case 701:
		return "double precision"
	case 1042:
		if mod > 4 {
			return fmt.Sprintf("character(%d)", mod-4)
		}
		return "bpchar"
	case 1043:
		if mod > 4 {
			return fmt.Sprintf("character varying(%d)", mod-4)
		}
		return "character varying"
	case 1114:
		return types.TimestampTypmodText(mod, false)
	case 1184:
		return types.TimestampTypmodText(mod, true)
	case 1186:
		return types.IntervalTypmodText(mod)
	case 1083:
		return types.TimeTypmodText(mod)
	case 1266:
		return types.TimeTZTypmodText(mod)
	case 1700:
		if mod >= 4 {
			return fmt.Sprintf("numeric(%d,%d)", (mod-4)>>16, (mod-4)&0xffff)
		}
		return "numeric"
	}
	for _, t := range pgTypes {
		if t.oid == oid {
			return t.typname
		}
	}
	return "???"
}

// keyColumnNames lists the primary key columns for index and constraint
// definitions.
func keyColumnNames(t *catalog.Table) string {
	names := make([]string, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		names[i] = quoteIdent(t.Columns[k].Name)
	}
	return strings.Join(names, ", ")
}

// quoteIdent is PostgreSQL's quote_ident: double quotes unless the name is
// a lower-case identifier.
func quoteIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain && !reservedWords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

var reservedWords = map[string]bool{
	"all": true, "and": true, "any": true, "as": true, "by": true, "case": true, "check": true, "column": true,
	"create": true, "default": true, "desc": true, "distinct": true, "else": true, "end": true, "false": true,
	"for": true, "from": true, "group": true, "having": true, "in": true, "into": true, "limit": true, "not": true,
	"null": true, "on": true, "or": true, "order": true, "primary": true, "select": true, "table": true,
	"then": true, "to": true, "true": true, "union": true, "unique": true, "user": true, "where": true, "with": true,
}

// pkIndexName is the name PostgreSQL gives a primary key's index.
func pkIndexName(t *catalog.Table) string { return t.Name + "_pkey" }

func pkIndexDef(t *catalog.Table) string {
	return fmt.Sprintf("CREATE UNIQUE INDEX %s ON public.%s USING btree (%s)",
		quoteIdent(pkIndexName(t)), quoteIdent(t.Name), keyColumnNames(t))
}

// indexColumnNames lists a secondary index's columns for its definition.
func indexColumnNames(t *catalog.Table, ix *catalog.Index) []string {
	names := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		names[i] = quoteIdent(t.Columns[c].Name)
		if i < len(ix.Desc) && ix.Desc[i] {
			names[i] += " DESC"
		}
	}
	return names
}

// indexDef is pg_get_indexdef of a secondary index.
func indexDef(t *catalog.Table, ix *catalog.Index) string {
	unique := ""
	if ix.Unique {
		unique = "UNIQUE "
	}
	return fmt.Sprintf("CREATE %sINDEX %s ON public.%s USING btree (%s)", unique, quoteIdent(ix.Name),
		quoteIdent(t.Name), strings.Join(indexColumnNames(t, ix), ", "))
}

// arrayText spells PostgreSQL's text form of a one-dimensional array.
func arrayText[T any](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// relationOID finds the OID of a relation by name: a user table, its
// primary key index, or a system catalog relation.
func (v *View) relationOID(name string) (int64, bool) {
	schema, rel, ok := strings.Cut(name, ".")
	if !ok {
		rel, schema = schema, ""
	}
	rel = strings.Trim(rel, `"`)
	schema = strings.Trim(schema, `"`)
	if schema == "" || schema == "public" {
		for _, t := range v.tables() {
			if t.Name == rel {
				return int64(t.ID), true
			}
			if hasVisibleKey(t) && pkIndexName(t) == rel {
				return pkIndexOID(t), true
			}
			for _, ix := range t.Indexes {
				if ix.Name == rel {
					return int64(ix.ID), true
				}
			}
		}
		for _, vw := range v.Snapshot.Views(v.Database.ID) {
			if vw.Name == rel {
				return int64(vw.ID), true
			}
		}
		if q, ok := v.Snapshot.Sequence(v.Database.ID, rel); ok {
			return int64(q.ID), true
		}
	}
	if schema == "" {
		schema = "pg_catalog"
	}
	for _, list := range virtualTableLists {
		for i, vt := range list {
			if vt.Schema == schema && vt.Name == rel {
				return systemOID(vt, i), true
			}
		}
	}
	return 0, false
}

func systemOID(vt *Table, i int) int64 {
	if oid, ok := catalogOIDs[vt.Name]; ok && vt.Schema == "pg_catalog" {
		return oid
	}
	if vt.Schema == "information_schema" {
		return systemViewOID + 500 + int64(i)
	}
	return systemViewOID + int64(i)
}

// relationName is the inverse of relationOID.
func (v *View) relationName(oid int64) (string, bool) {
	for _, t := range v.tables() {
		switch oid {
		case int64(t.ID):
			return t.Name, true
		case pkIndexOID(t):
			if hasVisibleKey(t) {
				return pkIndexName(t), true
			}
		}
		for _, ix := range t.Indexes {
			if int64(ix.ID) == oid {
				return ix.Name, true
			}
		}
	}
	for _, vw := range v.Snapshot.Views(v.Database.ID) {
		if int64(vw.ID) == oid {
			return vw.Name, true
		}
	}
	if q, ok := v.Snapshot.SequenceByID(uint64(oid)); ok && q.DatabaseID == v.Database.ID {
		return q.Name, true
	}
	for _, list := range virtualTableLists {
		for i, vt := range list {
			if systemOID(vt, i) == oid {
				if vt.Schema == "information_schema" {
					return vt.Schema + "." + vt.Name, true
				}
				return vt.Name, true
			}
		}
	}
	return "", false
}

// tableByOID finds a user table by OID.
func (v *View) tableByOID(oid int64) (*catalog.Table, bool) {
	for _, t := range v.tables() {
		if int64(t.ID) == oid {
			return t, true
		}
	}
	return nil, false
}

// roles are the roles a client can see: the built-in pivotdb, the roles
// of CREATE USER/ROLE, and the view's user if it is none of them (sessions
// only open for existing roles, but the binder's tests fill a View by
// hand).
func (v *View) roles() []string {
	out := []string{catalog.BootstrapUser}
	seen := map[string]bool{catalog.BootstrapUser: true}
	for _, u := range v.Snapshot.Users() {
		if !seen[u.Name] {
			seen[u.Name] = true
			out = append(out, u.Name)
		}
	}
	if v.User != "" && !seen[v.User] {
		out = append(out, v.User)
	}
	return out
}

// role is a role's record; a session user that is not in the catalog has
// no attributes.
func (v *View) role(name string) *catalog.User {
	if u, ok := v.Snapshot.User(name); ok {
		return u
	}
	return &catalog.User{Name: name}
}

// nullIfEmpty is NULL for "", else the string.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// roleOID numbers roles: the built-in user is 10, as PostgreSQL's bootstrap
// superuser.
func roleOID(i int) int64 { return oidBootstrapUser + int64(i)*1000 }

// userName is pg_get_userbyid.
func (v *View) userName(oid int64) string {
	if oid == oidPgDatabaseOwner {
		return "pg_database_owner"
	}
	for i, r := range v.roles() {
		if roleOID(i) == oid {
			return r
		}
	}
	return fmt.Sprintf("unknown (OID=%d)", oid)
}

// storedExprText shows a DEFAULT, CHECK or computed-column expression as
// the catalog stores it (TiDB's restored SQL) the way a PostgreSQL user
// writes it: without the charset introducer TiDB puts before string
// literals, and with `quoted` names spelled as PostgreSQL's quote_ident
// spells them (bare when they need no quotes).
func storedExprText(s string) string {
	s = strings.ReplaceAll(s, "_UTF8MB4'", "'")
	if !strings.Contains(s, "`") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			// A string literal ('' inside is a quote): copied as it is.
			j := i + 1
			for j < len(s) && !(s[j] == '\'' && (j+1 >= len(s) || s[j+1] != '\'')) {
				if s[j] == '\'' {
					j++
				}
				j++
			}
			b.WriteString(s[i:min(j+1, len(s))])
			i = j
		case '`':
			var name strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						name.WriteByte('`')
						j++
						continue
					}
					break
				}
				name.WriteByte(s[j])
			}
			b.WriteString(quoteIdent(name.String()))
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// viewColumns are a view's visible result columns; none when the view
// cannot be planned any more (a table it reads was dropped), which reading
// the view reports.
func (v *View) viewColumns(vw *catalog.View) []planner.Column {
	if v.ViewColumns == nil {
		return nil
	}
	cs, err := v.ViewColumns(vw)
	if err != nil {
		return nil
	}
	var out []planner.Column
	for _, c := range cs {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

// tableOptions is pg_class.reloptions of a table: its settings in the
// text form of an array, NULL when it has none (as PostgreSQL shows a
// table without storage parameters) or they cannot be read.
func (v *View) tableOptions(t *catalog.Table) any {
	if v.TableOptions == nil {
		return nil
	}
	opts, err := v.TableOptions(t)
	if err != nil || len(opts) == 0 {
		return nil
	}
	elems := make([]*string, len(opts))
	for i := range opts {
		elems[i] = &opts[i]
	}
	return expr.FormatArrayText(elems)
}
