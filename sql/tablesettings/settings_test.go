package tablesettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestSettings runs the data-driven files in testdata/settings. Each file
// keeps a current table and its settings. Commands:
//
//	create   a CREATE TABLE statement: the table's columns and key become
//	         the current table, ForCreate reads its WITH clause
//	alter    an ALTER TABLE ... SET / RESET statement applied to the
//	         current settings with ApplyAlter
//	render   Render of the current settings
//	pivots   InitialPivots of the current settings, one per line (with
//	         arg "brief" only the first and last three)
//	show     RenderWithPivots of the current settings with the pivots given
//	         as a PARTITION_AT_KEYS value in the input (InitialPivots when
//	         the input is empty, none with arg "one-shard"); arg
//	         "with-empty" prepends pivot 0, ()
//	reshard  KeyBoundaries of the input, the pivot list of an ALTER TABLE
//	         t RESHARD AT, for the current table: one pivot per line
//
// create and alter print the settings as Render prints them, then the
// effective values and the notices; an error prints as "error CODE:
// message" followed by its position, detail and hint. After every
// successful create and alter the test checks that Render's output parses
// back into equal settings and that the JSON encoding round-trips; after
// show, that the output recreates the given pivots.
func TestSettings(t *testing.T) {
	datadriven.Walk(t, "testdata/settings", func(t *testing.T, path string) {
		var h harness
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "create":
				return h.create(t, d.Input)
			case "alter":
				return h.alter(t, d.Input)
			case "render":
				if r := h.cur.Render(); r != "" {
					return r + "\n"
				}
				return "(no settings)\n"
			case "pivots":
				pivots, err := h.cur.InitialPivots(h.table)
				if err != nil {
					return formatError(err)
				}
				var b strings.Builder
				for i, p := range pivots {
					if d.HasArg("brief") && i >= 3 && i < len(pivots)-3 {
						if i == 3 {
							b.WriteString("...\n")
						}
						continue
					}
					b.WriteString(FormatKey(p) + "\n")
				}
				fmt.Fprintf(&b, "%d pivots\n", len(pivots))
				return b.String()
			case "show":
				return h.show(t, d.Input, d.HasArg("with-empty"), d.HasArg("one-shard"))
			case "reshard":
				return h.reshard(t, d.Input)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

type harness struct {
	table TableInfo
	cur   Settings
}

func (h *harness) create(t *testing.T, sql string) string {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return "parse " + formatError(err)
	}
	create, ok := stmts[0].AST.(*ast.CreateTableStmt)
	if len(stmts) != 1 || !ok {
		t.Fatalf("create wants one CREATE TABLE statement: %s", sql)
	}
	ti, err := tableInfo(create)
	if err != nil {
		t.Fatal(err)
	}
	s, notices, err := ForCreate(stmts[0].With, ti)
	if err != nil {
		return formatError(err)
	}
	h.table, h.cur = ti, s
	checkRoundTrip(t, s, ti)
	return formatSettings(s, notices)
}

func (h *harness) alter(t *testing.T, sql string) string {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return "parse " + formatError(err)
	}
	if len(stmts) != 1 || stmts[0].Settings == nil {
		t.Fatalf("alter wants one ALTER TABLE ... SET/RESET statement: %s", sql)
	}
	before := h.cur.Render()
	s, notices, err := ApplyAlter(h.cur, stmts[0].Settings, h.table)
	if h.cur.Render() != before {
		t.Errorf("ApplyAlter modified the current settings")
	}
	if err != nil {
		return formatError(err)
	}
	h.cur = s
	checkRoundTrip(t, s, h.table)
	return formatSettings(s, notices)
}

func (h *harness) show(t *testing.T, input string, withEmpty, oneShard bool) string {
	var pivots [][]types.Value
	var err error
	switch {
	case oneShard:
	case strings.TrimSpace(input) == "":
		pivots, err = h.cur.InitialPivots(h.table)
	default:
		pivots, err = parseKeys(input, h.table)
	}
	if err != nil {
		return formatError(err)
	}
	arg := pivots
	if withEmpty {
		arg = append([][]types.Value{{}}, pivots...)
	}
	out := h.cur.RenderWithPivots(arg)
	// The statement must recreate the pivots and keep the effective
	// partitioning settings.
	back := reparse(t, out, h.table)
	got, err := back.InitialPivots(h.table)
	if err != nil {
		t.Fatalf("pivots of the rendered settings: %v", err)
	}
	if len(got) != len(pivots) {
		t.Errorf("show: %d pivots recreate as %d", len(pivots), len(got))
	} else {
		for i := range got {
			if CompareKeys(got[i], pivots[i]) != 0 {
				t.Errorf("show: pivot %s recreates as %s", FormatKey(pivots[i]), FormatKey(got[i]))
			}
		}
	}
	if back.MinPartitions() != h.cur.MinPartitions() || back.MaxPartitions() != h.cur.MaxPartitions() {
		t.Errorf("show: min/max %d/%d recreate as %d/%d", h.cur.MinPartitions(), h.cur.MaxPartitions(),
			back.MinPartitions(), back.MaxPartitions())
	}
	if out == "" {
		return "(no settings)\n"
	}
	return out + "\n"
}

func (h *harness) reshard(t *testing.T, value string) string {
	stmts, err := parser.Parse("ALTER TABLE x RESHARD AT " + value)
	if err != nil {
		return "parse " + formatError(err)
	}
	if len(stmts) != 1 || stmts[0].Reshard == nil {
		t.Fatalf("reshard: %q is not a RESHARD AT list", value)
	}
	pivots, err := KeyBoundaries(stmts[0].Reshard.Keys, h.table)
	if err != nil {
		return formatError(err)
	}
	var b strings.Builder
	for _, p := range pivots {
		b.WriteString(FormatKey(p) + "\n")
	}
	fmt.Fprintf(&b, "%d pivots\n", len(pivots))
	return b.String()
}

// parseKeys reads a PARTITION_AT_KEYS value for the table.
func parseKeys(value string, ti TableInfo) ([][]types.Value, error) {
	stmts, err := parser.Parse("CREATE TABLE x (a Int32) WITH (PARTITION_AT_KEYS = " + value + ")")
	if err != nil {
		return nil, err
	}
	s, _, err := ForCreate(stmts[0].With, ti)
	return s.PartitionAtKeys, err
}

// reparse parses rendered settings as the WITH clause of a CREATE TABLE
// and reads them for the table.
func reparse(t *testing.T, rendered string, ti TableInfo) Settings {
	t.Helper()
	stmts, err := parser.Parse("CREATE TABLE roundtrip (a Int32) " + rendered)
	if err != nil {
		t.Fatalf("rendered settings do not parse: %v\n%s", err, rendered)
	}
	s, _, err := ForCreate(stmts[0].With, ti)
	if err != nil {
		t.Fatalf("rendered settings are refused: %v\n%s", err, rendered)
	}
	return s
}

// checkRoundTrip checks render → parse → equal and JSON → equal.
func checkRoundTrip(t *testing.T, s Settings, ti TableInfo) {
	t.Helper()
	if r := s.Render(); r != "" {
		if back := reparse(t, r, ti); !back.Equal(s) {
			t.Errorf("render round trip changed the settings:\n%s\n%s", r, back.Render())
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	var back Settings
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("json: %v\n%s", err, b)
	}
	if !back.Equal(s) {
		t.Errorf("json round trip changed the settings:\n%s\n%s", b, back.Render())
	}
	if b2, _ := json.Marshal(back); !bytes.Equal(b, b2) {
		t.Errorf("json encoding is not stable:\n%s\n%s", b, b2)
	}
}

// tableInfo reads the columns and the key of a parsed CREATE TABLE. A
// table without PRIMARY KEY gets the hidden Uint64 key, as the catalog
// gives it.
func tableInfo(n *ast.CreateTableStmt) (TableInfo, error) {
	var ti TableInfo
	byName := map[string]int{}
	for i, c := range n.Cols {
		typ, err := parser.ColumnType(c)
		if err != nil {
			return TableInfo{}, err
		}
		ti.Columns = append(ti.Columns, ColumnInfo{Name: c.Name.Name.O, Type: typ})
		byName[c.Name.Name.L] = i
		for _, o := range c.Options {
			if o.Tp == ast.ColumnOptionPrimaryKey {
				ti.KeyColumns = append(ti.KeyColumns, i)
			}
		}
	}
	for _, con := range n.Constraints {
		if con.Tp != ast.ConstraintPrimaryKey {
			continue
		}
		for _, k := range con.Keys {
			i, ok := byName[k.Column.Name.L]
			if !ok {
				return TableInfo{}, fmt.Errorf("key column %s is not a column", k.Column.Name.O)
			}
			ti.KeyColumns = append(ti.KeyColumns, i)
		}
	}
	if len(ti.KeyColumns) == 0 {
		ti.Columns = append(ti.Columns, ColumnInfo{Name: "__hidden_key", Type: types.TypeUint64, Hidden: true})
		ti.KeyColumns = []int{len(ti.Columns) - 1}
	}
	return ti, nil
}

func formatSettings(s Settings, notices []Notice) string {
	var b strings.Builder
	if r := s.Render(); r != "" {
		b.WriteString(r + "\n")
	} else {
		b.WriteString("(no settings)\n")
	}
	maxText := "unbounded"
	if s.MaxPartitions() != math.MaxInt64 {
		maxText = fmt.Sprint(s.MaxPartitions())
	}
	fmt.Fprintf(&b, "effective: by_size=%s size=%dMB (%d bytes) min=%d max=%s by_load=%s bloom=%s initial=%d\n",
		flagText(s.BySize()), s.PartitionSizeMBOrDefault(), s.PartitionSizeBytes(), s.MinPartitions(), maxText,
		flagText(s.ByLoad()), flagText(s.BloomFilter()), s.InitialPartitions())
	for _, n := range notices {
		fmt.Fprintf(&b, "notice %s: %s\n", n.Code, n.Message)
	}
	return b.String()
}

func formatError(err error) string {
	var e *sqlerr.Error
	if !errors.As(err, &e) {
		return fmt.Sprintf("error without SQLSTATE: %v\n", err)
	}
	s := fmt.Sprintf("error %s: %s\n", e.Code, e.Message)
	if e.Position != 0 {
		s += fmt.Sprintf("position: %d\n", e.Position)
	}
	if e.Detail != "" {
		s += "detail: " + e.Detail + "\n"
	}
	if e.Hint != "" {
		s += "hint: " + e.Hint + "\n"
	}
	return s
}
