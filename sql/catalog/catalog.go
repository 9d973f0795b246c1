package catalog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// DefaultDatabase is created on first start and is what `make run` serves.
const DefaultDatabase = "pivotdb"

// Database is a namespace of tables.
type Database struct {
	ID   uint64 `json:"id"`
	Name string `json:"name"`
	// Owner and ACL: see Owned.
	Owned
}

// BootstrapUser is the built-in user every data directory has: the one
// `psql -U pivotdb` logs in as, whose first password comes from
// --initial-password or PIVOTDB_PASSWORD. It cannot be dropped, so that a
// server with SCRAM authentication always has someone who can log in.
const BootstrapUser = "pivotdb"

// User is a role. Password is a SCRAM-SHA-256 verifier in PostgreSQL's
// text form (package sql/auth), never a password; empty for a user without
// a password, who cannot log in with SCRAM authentication.
type User struct {
	Name     string `json:"name"`
	Password string `json:"password,omitempty"`
	// The role attributes of CREATE/ALTER ROLE. NoLogin is stored negated
	// because roles recorded before attributes existed could all log in.
	Superuser  bool `json:"superuser,omitempty"`
	NoLogin    bool `json:"nologin,omitempty"`
	CreateDB   bool `json:"createdb,omitempty"`
	CreateRole bool `json:"createrole,omitempty"`
	// MemberOf lists the roles this one was granted (GRANT role TO this);
	// it holds their privileges as well as its own (INHERIT).
	MemberOf []string `json:"member_of,omitempty"`
}

// Column is one column of a table.
type Column struct {
	// ID is stable for the life of the column and is what row values are
	// keyed by, so columns can be added and dropped without rewriting rows.
	ID      int        `json:"id"`
	Name    string     `json:"name"`
	Type    types.Type `json:"type"`
	NotNull bool       `json:"not_null,omitempty"`
	// Default is the SQL text of the DEFAULT expression; empty for none.
	Default string `json:"default,omitempty"`
	// Computed is the SQL text of a computed column's expression.
	Computed string `json:"computed,omitempty"`
	// Hidden columns (the generated key of a table without PRIMARY KEY) are
	// not returned by SELECT *.
	Hidden bool `json:"hidden,omitempty"`
	// Missing is the value that rows written before the column was added
	// (ALTER TABLE ADD COLUMN ... DEFAULT) read for it: an encoded value
	// entry of this column (rowenc.EncodeMissing); nil reads NULL. Rows
	// written since store the column explicitly, NULL included, so that
	// only an absent entry means "older than the column".
	Missing []byte `json:"missing,omitempty"`
	// Identity is IdentityAlways or IdentityByDefault for an identity
	// column (GENERATED ... AS IDENTITY), whose Default calls nextval of
	// the sequence it owns; "" otherwise.
	Identity string `json:"identity,omitempty"`
	// Comment is the column's COMMENT ON COLUMN text; empty for none.
	Comment string `json:"comment,omitempty"`
}

// Check is a CHECK constraint: Expr is its SQL text over the table's
// columns; a row for which it is false violates it (NULL passes, as in
// PostgreSQL). NotValid marks one added with NOT VALID, which rows
// written before it were not checked against.
type Check struct {
	Name     string `json:"name"`
	Expr     string `json:"expr"`
	NotValid bool   `json:"not_valid,omitempty"`
}

// The kinds of identity column.
const (
	// IdentityAlways refuses values written by INSERT and UPDATE (428C9).
	IdentityAlways = "always"
	// IdentityByDefault takes the next value only when none is given.
	IdentityByDefault = "by default"
)

// Table describes a table.
type Table struct {
	ID         uint64   `json:"id"`
	DatabaseID uint64   `json:"database_id"`
	Name       string   `json:"name"`
	Columns    []Column `json:"columns"`
	// PrimaryKey lists indexes into Columns, in key order.
	PrimaryKey   []int `json:"primary_key"`
	NextColumnID int   `json:"next_column_id"`
	// Settings are the YQL table settings of CREATE TABLE ... WITH and
	// ALTER TABLE ... SET (design.md §3.2).
	Settings tablesettings.Settings `json:"settings"`
	// Indexes are the table's secondary indexes, in creation order.
	Indexes []Index `json:"indexes,omitempty"`
	// Checks are the table's CHECK constraints, in creation order.
	Checks []Check `json:"checks,omitempty"`
	// ForeignKeys are the table's FOREIGN KEY constraints (this table is
	// the referencing one), in creation order.
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"`
	// Version counts the ALTER TABLEs that changed the table; writers
	// record it (with the index ids) so that a transaction that wrote rows
	// under an older definition fails at commit instead of storing rows
	// the new one forbids.
	Version int `json:"version,omitempty"`
	// Comment is the table's COMMENT ON TABLE text, PrimaryKeyComment its
	// primary key index's (COMMENT ON INDEX t_pkey); empty for none. A
	// comment changes no row, so it leaves Version alone.
	Comment           string `json:"comment,omitempty"`
	PrimaryKeyComment string `json:"primary_key_comment,omitempty"`
	// Owner and ACL: see Owned.
	Owned
}

// ForeignKey is a FOREIGN KEY constraint: the values of Columns (all
// non-NULL) must be the primary key of a row of table RefTable (always
// its primary key, so the referenced columns are not stored: they are the
// referenced table's PrimaryKey, wherever its columns move). Actions
// use pg_constraint's letters: 'a' no action, 'r' restrict, 'c' cascade,
// 'n' set null, 'd' set default.
type ForeignKey struct {
	Name     string `json:"name"`
	Columns  []int  `json:"columns"` // indexes into the table's Columns
	RefTable uint64 `json:"ref_table"`
	OnDelete byte   `json:"on_delete"`
	OnUpdate byte   `json:"on_update"`
	// NotValid marks one added with NOT VALID: rows stored before it were
	// not checked.
	NotValid bool `json:"not_valid,omitempty"`
}

// ReferencingKeys lists the foreign keys of the snapshot's tables that
// reference table id, with their tables.
func (s *Snapshot) ReferencingKeys(id uint64) (tables []*Table, fks []*ForeignKey) {
	ids := make([]uint64, 0, len(s.tables))
	for tid := range s.tables {
		ids = append(ids, tid)
	}
	slices.Sort(ids)
	for _, tid := range ids {
		t := s.tables[tid]
		for i := range t.ForeignKeys {
			if t.ForeignKeys[i].RefTable == id {
				tables = append(tables, t)
				fks = append(fks, &t.ForeignKeys[i])
			}
		}
	}
	return tables, fks
}

// Check returns the named CHECK constraint of the table, or nil.
func (t *Table) Check(name string) *Check {
	for i := range t.Checks {
		if strings.EqualFold(t.Checks[i].Name, name) {
			return &t.Checks[i]
		}
	}
	return nil
}

// HasMissing reports whether a column reads a value other than NULL in
// rows written before it was added.
func (t *Table) HasMissing() bool {
	for i := range t.Columns {
		if t.Columns[i].Missing != nil {
			return true
		}
	}
	return false
}

// Index is a secondary index. Its entries form a table of their own (see
// IndexTable): same columns as the indexed table, keyed by the index
// columns followed by the table's primary key columns not already among
// them, with an empty value. Entries live at <index id><index key> in the
// same Pebble as the rows and have their own key-range shard map, so an
// index is sharded, split and merged like any table (design.md §4, §5).
type Index struct {
	// ID names the index's key space and shard map; it is allocated from
	// the same sequence as table ids, so it never collides with one.
	ID   uint64 `json:"id"`
	Name string `json:"name"`
	// Columns are indexes into the table's Columns, in index key order.
	Columns []int `json:"columns"`
	// Desc marks index columns declared DESC. It is kept for SHOW CREATE
	// TABLE; entries are stored ascending, which serves the same lookups
	// (a descending read is the ascending one reversed by the Sort above).
	Desc []bool `json:"desc,omitempty"`
	// Unique indexes reject two live rows with equal, non-NULL values in
	// every index column (NULLs are distinct, as in PostgreSQL).
	Unique bool `json:"unique,omitempty"`
	// Comment is the index's COMMENT ON INDEX text; empty for none.
	Comment string `json:"comment,omitempty"`
}

// IndexTable returns the descriptor of an index's entries: the table's
// columns (so that rows, conditions and range programs of the table apply
// to it unchanged) keyed by the index columns, then the primary key
// columns that are not index columns. Its settings are the table's
// partitioning settings without TTL: entries expire with their rows.
func (t *Table) IndexTable(ix *Index) *Table {
	it := &Table{ID: ix.ID, DatabaseID: t.DatabaseID, Name: t.Name + "/" + ix.Name,
		Columns: t.Columns, NextColumnID: t.NextColumnID, Settings: t.Settings}
	it.Settings.TTL = nil
	it.PrimaryKey = append([]int(nil), ix.Columns...)
	for _, k := range t.PrimaryKey {
		if !slices.Contains(ix.Columns, k) {
			it.PrimaryKey = append(it.PrimaryKey, k)
		}
	}
	return it
}

// Index returns the named index of the table, or nil.
func (t *Table) Index(name string) *Index {
	for i := range t.Indexes {
		if strings.EqualFold(t.Indexes[i].Name, name) {
			return &t.Indexes[i]
		}
	}
	return nil
}

// SettingsInfo describes the table for settings validation.
func (t *Table) SettingsInfo() tablesettings.TableInfo {
	info := tablesettings.TableInfo{KeyColumns: t.PrimaryKey}
	for _, c := range t.Columns {
		info.Columns = append(info.Columns, tablesettings.ColumnInfo{Name: c.Name, Type: c.Type, Hidden: c.Hidden})
	}
	return info
}

// ColumnIndex returns the position of the named column, or -1.
func (t *Table) ColumnIndex(name string) int {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// HiddenKeyColumn is the index of the generated key column of a table
// created without PRIMARY KEY (design.md §3.2), -1 for a table with one.
func (t *Table) HiddenKeyColumn() int {
	if len(t.PrimaryKey) == 1 && t.Columns[t.PrimaryKey[0]].Hidden {
		return t.PrimaryKey[0]
	}
	return -1
}

// IsKeyColumn reports whether column i is part of the primary key.
func (t *Table) IsKeyColumn(i int) bool {
	for _, k := range t.PrimaryKey {
		if k == i {
			return true
		}
	}
	return false
}

// KeyTypes returns the types of the primary key columns in key order.
func (t *Table) KeyTypes() []types.Type {
	out := make([]types.Type, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		out[i] = t.Columns[k].Type
	}
	return out
}

// KeyColumnNames returns the names of the primary key columns in key order.
func (t *Table) KeyColumnNames() []string {
	out := make([]string, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		out[i] = t.Columns[k].Name
	}
	return out
}

// Snapshot is an immutable view of the whole catalog.
type Snapshot struct {
	databases map[string]*Database // by lower-case name
	users     map[string]*User     // by name (role names are case-sensitive)
	tables    map[uint64]*Table
	byName    map[uint64]map[string]*Table // database id -> lower-case name -> table
	views     map[uint64]map[string]*View  // database id -> lower-case name -> view
	// sequences: database id -> lower-case name -> sequence
	sequences map[uint64]map[string]*Sequence
	// enums: database id -> lower-case name -> enum type (enum.go)
	enums map[uint64]map[string]*EnumType
	// functions: database id -> id -> function (function.go)
	functions map[uint64]map[uint64]*Function
	// roleSettings are the ALTER DATABASE/ROLE ... SET records.
	roleSettings map[roleSettingID]*RoleSetting
	// indexes maps an index id to its entries' descriptor (IndexTable).
	indexes map[uint64]indexRef
	nextID  uint64
}

// indexRef locates an index: its table and its entries' descriptor.
type indexRef struct {
	table *Table
	entry *Table
}

// Database returns the named database.
func (s *Snapshot) Database(name string) (*Database, bool) {
	d, ok := s.databases[strings.ToLower(name)]
	return d, ok
}

// Databases lists every database ordered by name.
func (s *Snapshot) Databases() []*Database {
	out := make([]*Database, 0, len(s.databases))
	for _, d := range s.databases {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// User returns the named user. Names are case-sensitive, as PostgreSQL's
// role names are (the parser folds unquoted names to lower case).
func (s *Snapshot) User(name string) (*User, bool) {
	u, ok := s.users[name]
	return u, ok
}

// Users lists every user ordered by name.
func (s *Snapshot) Users() []*User {
	out := make([]*User, 0, len(s.users))
	for _, u := range s.users {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Table returns the named table of a database.
func (s *Snapshot) Table(dbID uint64, name string) (*Table, bool) {
	t, ok := s.byName[dbID][strings.ToLower(name)]
	return t, ok
}

// TableByID returns a table by id. An index id gives the descriptor of the
// index's entries (Table.IndexTable), which is what the shard manager and
// the balancer need to cut and size its shards.
func (s *Snapshot) TableByID(id uint64) (*Table, bool) {
	if t, ok := s.tables[id]; ok {
		return t, true
	}
	if r, ok := s.indexes[id]; ok {
		return r.entry, true
	}
	return nil, false
}

// IndexByID returns the table of an index and the index's entries'
// descriptor.
func (s *Snapshot) IndexByID(id uint64) (table, entries *Table, ok bool) {
	r, ok := s.indexes[id]
	return r.table, r.entry, ok
}

// IndexByName finds an index of a database by name (index names share the
// database's namespace, as in PostgreSQL).
func (s *Snapshot) IndexByName(dbID uint64, name string) (*Table, *Index, bool) {
	for _, t := range s.byName[dbID] {
		if ix := t.Index(name); ix != nil {
			return t, ix, true
		}
	}
	return nil, nil, false
}

func (s *Snapshot) addIndexes(t *Table) {
	for i := range t.Indexes {
		ix := &t.Indexes[i]
		s.indexes[ix.ID] = indexRef{table: t, entry: t.IndexTable(ix)}
	}
}

func (s *Snapshot) removeIndexes(t *Table) {
	for _, ix := range t.Indexes {
		delete(s.indexes, ix.ID)
	}
}

// Tables lists the tables of a database ordered by name.
func (s *Snapshot) Tables(dbID uint64) []*Table {
	out := make([]*Table, 0, len(s.byName[dbID]))
	for _, t := range s.byName[dbID] {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Snapshot) clone() *Snapshot {
	c := &Snapshot{
		databases: make(map[string]*Database, len(s.databases)),
		users:     make(map[string]*User, len(s.users)),
		tables:    make(map[uint64]*Table, len(s.tables)),
		byName:    make(map[uint64]map[string]*Table, len(s.byName)),
		indexes:   make(map[uint64]indexRef, len(s.indexes)),
		nextID:    s.nextID,
	}
	for k, v := range s.indexes {
		c.indexes[k] = v
	}
	for k, v := range s.databases {
		c.databases[k] = v
	}
	for k, v := range s.users {
		c.users[k] = v
	}
	for k, v := range s.tables {
		c.tables[k] = v
	}
	for db, m := range s.byName {
		cm := make(map[string]*Table, len(m))
		for k, v := range m {
			cm[k] = v
		}
		c.byName[db] = cm
	}
	s.cloneViews(c)
	c.sequences = cloneByDatabase(s.sequences)
	c.enums = cloneByDatabase(s.enums)
	c.functions = cloneByDatabase(s.functions)
	s.cloneRoleSettings(c)
	return c
}

// Catalog owns the current snapshot and serialises schema changes.
type Catalog struct {
	// mu serialises schema changes (Change ... Install).
	mu sync.Mutex
	// ids is the next object id. Changes of transactions (Pending) allocate
	// ids without holding mu, so the counter is the catalog's, not a
	// snapshot's; the "cat/seq" record is written only under mu, with the
	// value read there, so that what is persisted never goes back.
	ids     atomic.Uint64
	current struct {
		sync.RWMutex
		snap *Snapshot
	}
	// gens are the recent snapshots with the timestamps they are current
	// from (versions.go); guarded by current.
	gens []generation
	// historyStart is when the generations start being history: reads
	// before it are read from the history on disk (versions.go,
	// SetHistoryStart); guarded by current.
	historyStart hlc.Timestamp
	// store holds the records and their history (history.go).
	store *meta.Store
	// diskStart is the commit timestamp from which the history on disk
	// is complete (history.go); reads before it are inexact.
	diskStart hlc.Timestamp
	// past caches snapshots read from the history on disk (history.go).
	past historyCache
}

var (
	seqKey      = sysKey("seq")
	dbPrefix    = sysKey("db/")
	tablePrefix = sysKey("tbl/")
	userPrefix  = sysKey("user/")
)

func userKey(name string) []byte { return append(append([]byte(nil), userPrefix...), name...) }

// sysKey is a key of the catalog's metadata namespace ("cat/" + s).
func sysKey(s string) []byte { return append(append([]byte(nil), meta.Catalog...), s...) }

func idKey(prefix []byte, id uint64) []byte {
	k := append([]byte(nil), prefix...)
	return binary.BigEndian.AppendUint64(k, id)
}

// Load reads the catalog from the metadata store, creating the default
// database on an empty data directory, and starts its history on disk on a
// data directory written before it had one (history.go).
func Load(store *meta.Store) (*Catalog, error) {
	snap, err := loadSnapshot(store)
	if err != nil {
		return nil, err
	}
	if v, ok, err := store.Get(seqKey); err != nil {
		return nil, err
	} else if ok {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("catalog: corrupt sequence %q", v)
		}
		snap.nextID = n
	}
	c := &Catalog{store: store}
	if err := c.startHistory(); err != nil {
		return nil, err
	}
	c.ids.Store(snap.nextID)
	c.setCurrent(snap, hlc.Timestamp{})
	_, hasDB := snap.Database(DefaultDatabase)
	_, hasUser := snap.User(BootstrapUser)
	if !hasDB || !hasUser {
		// A new data directory, or one from before users existed.
		ch := c.Begin()
		if !hasDB {
			ch.CreateDatabase(DefaultDatabase, BootstrapUser)
		}
		if !hasUser {
			ch.PutUser(&User{Name: BootstrapUser, Superuser: true, CreateDB: true, CreateRole: true})
		}
		b := store.NewBatch()
		defer b.Close()
		if err := ch.Write(b); err != nil {
			ch.Abort()
			return nil, err
		}
		var at hlc.Timestamp
		b.OnCommitted(func(ts hlc.Timestamp) { at = ts })
		if err := b.Commit(); err != nil {
			ch.Abort()
			return nil, err
		}
		ch.InstallAt(at)
	}
	return c, nil
}

// loadSnapshot reads every catalog record of r (the store's newest
// records, or its history at a timestamp) into a snapshot. The id counter
// is the caller's (Load).
func loadSnapshot(r meta.Reader) (*Snapshot, error) {
	snap := &Snapshot{
		databases: map[string]*Database{},
		users:     map[string]*User{},
		tables:    map[uint64]*Table{},
		byName:    map[uint64]map[string]*Table{},
		indexes:   map[uint64]indexRef{},
		nextID:    1,
	}
	if err := scanRecords(r, dbPrefix, func(v []byte) error {
		var d Database
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("catalog: corrupt database record: %w", err)
		}
		snap.databases[strings.ToLower(d.Name)] = &d
		return nil
	}); err != nil {
		return nil, err
	}
	if err := scanRecords(r, tablePrefix, func(v []byte) error {
		var t Table
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("catalog: corrupt table record: %w", err)
		}
		snap.tables[t.ID] = &t
		if snap.byName[t.DatabaseID] == nil {
			snap.byName[t.DatabaseID] = map[string]*Table{}
		}
		snap.byName[t.DatabaseID][strings.ToLower(t.Name)] = &t
		snap.addIndexes(&t)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := loadViews(r, snap); err != nil {
		return nil, err
	}
	if err := loadJSONRecords(r, sequencePrefix, "sequence", snap.addSequence); err != nil {
		return nil, err
	}
	if err := loadJSONRecords(r, enumPrefix, "enum type", snap.addEnum); err != nil {
		return nil, err
	}
	if err := loadJSONRecords(r, functionPrefix, "function", snap.addFunction); err != nil {
		return nil, err
	}
	if err := loadRoleSettings(r, snap); err != nil {
		return nil, err
	}
	if err := scanRecords(r, userPrefix, func(v []byte) error {
		var u User
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("catalog: corrupt user record: %w", err)
		}
		snap.users[u.Name] = &u
		return nil
	}); err != nil {
		return nil, err
	}
	if u, ok := snap.users[BootstrapUser]; ok && !u.Superuser {
		// Recorded before role attributes: the built-in user is the
		// bootstrap superuser, whatever its record says.
		nu := *u
		nu.Superuser, nu.CreateDB, nu.CreateRole = true, true, true
		snap.users[BootstrapUser] = &nu
	}
	return snap, nil
}

// loadJSONRecords decodes every record under prefix as a T (kind names it
// in the error a damaged record gives) and hands it to add.
func loadJSONRecords[T any](store meta.Reader, prefix []byte, kind string, add func(*T)) error {
	return scanRecords(store, prefix, func(b []byte) error {
		v := new(T)
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("catalog: corrupt %s record: %w", kind, err)
		}
		add(v)
		return nil
	})
}

// cloneByDatabase copies a per-database map of objects one level deep, so a
// new snapshot can add and remove objects without touching the old one
// (the objects themselves are immutable once in a snapshot).
func cloneByDatabase[K comparable, V any](src map[uint64]map[K]*V) map[uint64]map[K]*V {
	if len(src) == 0 {
		return nil
	}
	out := make(map[uint64]map[K]*V, len(src))
	for db, m := range src {
		cm := make(map[K]*V, len(m))
		for k, v := range m {
			cm[k] = v
		}
		out[db] = cm
	}
	return out
}

func scanRecords(store meta.Reader, prefix []byte, fn func(v []byte) error) error {
	return store.Scan(storage.Span{Start: prefix, End: storage.PrefixEnd(prefix)}, func(_, v []byte) error {
		return fn(v)
	})
}

// Snapshot returns the current catalog snapshot.
func (c *Catalog) Snapshot() *Snapshot {
	c.current.RLock()
	defer c.current.RUnlock()
	return c.current.snap
}

// Change is a schema change in progress. It holds the catalog's change lock
// from Begin until Install or Abort.
type Change struct {
	c       *Catalog
	snap    *Snapshot
	puts    map[string][]byte
	deletes map[string]bool
	seq     bool
	// base is the committed snapshot a transaction's change (Pending)
	// started from; nil for a change that holds the lock (Begin).
	base *Snapshot
}

// Begin starts a schema change on a copy of the current snapshot.
func (c *Catalog) Begin() *Change {
	c.mu.Lock()
	return &Change{c: c, snap: c.Snapshot().clone(), puts: map[string][]byte{}, deletes: map[string]bool{}}
}

// Snapshot is the changed catalog as it will be after Install.
func (ch *Change) Snapshot() *Snapshot { return ch.snap }

// NewID allocates an object id.
func (ch *Change) NewID() uint64 {
	id := ch.c.ids.Add(1) - 1
	ch.snap.nextID = id + 1
	ch.seq = true
	return id
}

// KeepIDs makes Write persist the id counter even if this change allocated
// none: a transaction's changes (Pending) allocate ids that must be
// persisted at once, by a change holding the lock.
func (ch *Change) KeepIDs() { ch.seq = true }

// CreateDatabase adds a database owned by owner.
func (ch *Change) CreateDatabase(name, owner string) *Database {
	d := &Database{ID: ch.NewID(), Name: name, Owned: Owned{Owner: owner}}
	ch.snap.databases[strings.ToLower(name)] = d
	ch.put(idKey(dbPrefix, d.ID), d)
	return d
}

// DropDatabase removes a database and returns its tables (the caller removes
// their data in the same batch).
func (ch *Change) DropDatabase(d *Database) []*Table {
	tables := ch.snap.Tables(d.ID)
	for _, t := range tables {
		ch.DropTable(t)
	}
	for _, v := range ch.snap.Views(d.ID) {
		ch.DropView(v)
	}
	for _, q := range ch.snap.Sequences(d.ID) {
		ch.DropSequence(q)
	}
	for _, e := range ch.snap.EnumTypes(d.ID) {
		ch.DropEnumType(e)
	}
	for _, f := range ch.snap.Functions(d.ID, "") {
		ch.DropFunction(f)
	}
	delete(ch.snap.databases, strings.ToLower(d.Name))
	delete(ch.snap.byName, d.ID)
	ch.del(idKey(dbPrefix, d.ID))
	return tables
}

// PutUser adds or replaces a user.
func (ch *Change) PutUser(u *User) {
	ch.snap.users[u.Name] = u
	ch.put(userKey(u.Name), u)
}

// PutDatabase replaces a database's record (its owner and ACL).
func (ch *Change) PutDatabase(d *Database) {
	ch.snap.databases[strings.ToLower(d.Name)] = d
	ch.put(idKey(dbPrefix, d.ID), d)
}

// DropUser removes a user.
func (ch *Change) DropUser(name string) {
	delete(ch.snap.users, name)
	ch.del(userKey(name))
}

// PutTable adds or replaces a table descriptor.
func (ch *Change) PutTable(t *Table) {
	if old, ok := ch.snap.tables[t.ID]; ok {
		if !strings.EqualFold(old.Name, t.Name) {
			delete(ch.snap.byName[old.DatabaseID], strings.ToLower(old.Name))
		}
		ch.snap.removeIndexes(old)
	}
	ch.snap.addIndexes(t)
	ch.snap.tables[t.ID] = t
	if ch.snap.byName[t.DatabaseID] == nil {
		ch.snap.byName[t.DatabaseID] = map[string]*Table{}
	}
	ch.snap.byName[t.DatabaseID][strings.ToLower(t.Name)] = t
	ch.put(idKey(tablePrefix, t.ID), t)
}

// DropTable removes a table descriptor.
func (ch *Change) DropTable(t *Table) {
	ch.snap.removeIndexes(t)
	delete(ch.snap.tables, t.ID)
	delete(ch.snap.byName[t.DatabaseID], strings.ToLower(t.Name))
	ch.del(idKey(tablePrefix, t.ID))
}

func (ch *Change) put(key []byte, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Descriptors are plain data; failing to marshal one is a bug.
		panic(fmt.Sprintf("catalog: marshal %T: %v", v, err))
	}
	delete(ch.deletes, string(key))
	ch.puts[string(key)] = b
}

func (ch *Change) del(key []byte) {
	delete(ch.puts, string(key))
	ch.deletes[string(key)] = true
}

// Write adds the change's records to a metadata batch.
func (ch *Change) Write(b *meta.Batch) error {
	if ch.seq {
		if ch.base != nil {
			panic("catalog: Write of a transaction's pending change (use Records)")
		}
		if err := b.Set(seqKey, []byte(strconv.FormatUint(ch.c.ids.Load(), 10))); err != nil {
			return err
		}
	}
	return ch.records(b)
}

// Install makes the change current. Call it only after the batch holding
// the change's records committed.
func (ch *Change) Install() {
	if ch.base != nil {
		panic("catalog: Install of a transaction's pending change (use Catalog.Apply)")
	}
	ch.c.current.Lock()
	ch.c.setCurrent(ch.snap, hlc.Timestamp{})
	ch.c.current.Unlock()
	ch.c.mu.Unlock()
}

// Abort drops the change.
func (ch *Change) Abort() {
	if ch.base != nil {
		return // a pending change holds no lock
	}
	ch.c.mu.Unlock()
}
