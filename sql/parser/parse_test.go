package parser

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestParse runs the data-driven files in testdata/parse. Commands:
//
//	parse        every statement: text, TiDB text, restored AST, params,
//	             column types, casts and the YQL-only statement fields
//	parse brief  only the TiDB text (or the YQL-only fields)
//	parse postgresql  in the postgresql dialect (with or without brief)
//
// An error prints as "error CODE at POS: message".
func TestParse(t *testing.T) {
	datadriven.Walk(t, "testdata/parse", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "parse":
				dialect := DialectYQL
				if d.HasArg("postgresql") {
					dialect = DialectPostgreSQL
				}
				return formatParse(d.Input, d.HasArg("brief"), dialect)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func formatParse(sql string, brief bool, dialect Dialect) string {
	stmts, err := ParseDialect(sql, dialect)
	if err != nil {
		return formatError(err)
	}
	if len(stmts) == 0 {
		return "no statements\n"
	}
	var b strings.Builder
	for k, st := range stmts {
		if sql[st.Offset:st.Offset+len(st.Text)] != st.Text {
			fmt.Fprintf(&b, "BUG: Text does not match Offset\n")
		}
		if !brief || len(stmts) > 1 {
			fmt.Fprintf(&b, "stmt %d at %d: %s\n", k, st.Offset, st.Text)
		}
		formatStatement(&b, st, brief)
	}
	return b.String()
}

func formatError(err error) string {
	var e *sqlerr.Error
	if !errors.As(err, &e) {
		return fmt.Sprintf("error without SQLSTATE: %v\n", err)
	}
	s := fmt.Sprintf("error %s at %d: %s\n", e.Code, e.Position, e.Message)
	if e.Detail != "" {
		s += "detail: " + e.Detail + "\n"
	}
	if e.Hint != "" {
		s += "hint: " + e.Hint + "\n"
	}
	return s
}

func restore(n ast.Node) string {
	var sb strings.Builder
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase | format.RestoreNameBackQuotes |
		format.RestoreStringWithoutCharset
	if err := n.Restore(format.NewRestoreCtx(flags, &sb)); err != nil {
		return "restore error: " + err.Error()
	}
	return sb.String()
}

// formatLiteral prints an item of the literal-VALUES fast path: its kind,
// value, cast and the position of its token.
func formatLiteral(l Literal, pos func(int) int) string {
	var s string
	switch l.Kind {
	case LitNull:
		s = "null"
	case LitBool:
		s = fmt.Sprintf("bool %v", l.Int != 0)
	case LitInt:
		s = fmt.Sprintf("int %d", l.Int)
	case LitUint:
		s = fmt.Sprintf("uint %d", l.Uint)
	case LitDecimal:
		s = "decimal " + l.Str
	case LitDouble:
		s = fmt.Sprintf("double %g", l.Float)
	case LitString:
		s = fmt.Sprintf("string %q", l.Str)
	case LitParam:
		s = fmt.Sprintf("$%d", l.Int)
	case LitDefault:
		s = "default"
	}
	if l.Cast != "" {
		s += "::" + l.Cast
	}
	if l.Neg {
		s = fmt.Sprintf("-(%s) at %d", s, pos(int(l.SignOff)))
	}
	return fmt.Sprintf("%s at %d", s, pos(int(l.Off)))
}

func formatValue(v Value) string {
	switch v.Kind {
	case ValueTuple:
		var items []string
		for _, it := range v.Items {
			items = append(items, formatValue(it))
		}
		return "(" + strings.Join(items, ", ") + ")"
	case ValueTyped:
		s := fmt.Sprintf("typed %s %q", v.Type, v.Str)
		if v.On != "" {
			s += " on " + v.On
		}
		if v.Unit != "" {
			s += " as " + v.Unit
		}
		return s
	}
	return fmt.Sprintf("%s %q", v.Kind, v.Str)
}

func formatSettings(b *strings.Builder, label string, set []Setting) {
	for _, s := range set {
		fmt.Fprintf(b, "%s: %s (pos %d) = %s (pos %d, text %q)\n", label, s.Name, s.Pos, formatValue(s.Value), s.Value.Pos, s.Value.Text)
	}
}

// castLister collects pivot_cast calls.
type castLister struct{ out []string }

func (c *castLister) Enter(n ast.Node) (ast.Node, bool) {
	if call, ok := n.(*ast.FuncCallExpr); ok {
		if expr, typ, ok, err := CastTarget(call); ok {
			if err != nil {
				c.out = append(c.out, "cast error: "+formatError(err))
			} else {
				c.out = append(c.out, fmt.Sprintf("cast: %s -> %s", restore(expr), typ))
			}
		}
	}
	return n, false
}

func (c *castLister) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func formatStatement(b *strings.Builder, st Statement, brief bool) {
	if c := st.Copy; c != nil {
		fmt.Fprintf(b, "copy table=%q columns=%q from=%v target=%d path=%q where=%v\n", c.Table, c.Columns, c.From, c.Target, c.Path, c.Where)
		for _, o := range c.Options {
			fmt.Fprintf(b, "copy option %s (pos %d) value=%q has=%v list=%q star=%v\n", o.Name, o.Pos, o.Value, o.HasValue, o.List, o.Star)
		}
	}
	if c := st.Cursor; c != nil {
		fmt.Fprintf(b, "cursor kind=%d name=%q binary=%v scroll=%d hold=%v dir=%d count=%d all=%v\n",
			c.Kind, c.Name, c.Binary, c.Scroll, c.Hold, c.Dir, c.Count, c.All)
	}
	switch {
	case st.AST != nil:
		fmt.Fprintf(b, "tidb: %s\n", st.TiDBText)
		if brief {
			formatSettings(b, "with", st.With)
			return
		}
		fmt.Fprintf(b, "ast: %T %s\n", st.AST, restore(st.AST))
		if st.Upsert {
			fmt.Fprintf(b, "upsert\n")
		}
		if oc := st.OnConflict; oc != nil {
			fmt.Fprintf(b, "on conflict (pos %d): columns %q constraint %q update %v", oc.Pos, oc.Columns, oc.Constraint, oc.Update)
			if oc.Where != nil {
				fmt.Fprintf(b, " where %s", restore(oc.Where))
			}
			b.WriteString("\n")
		}
		for _, lc := range st.Locking {
			fmt.Fprintf(b, "locking (pos %d): %s of %v %s\n", lc.Pos, lc.Strength, lc.Of, lc.Wait)
		}
		if st.AsOf != nil {
			fmt.Fprintf(b, "as of system time (pos %d): %s\n", st.AsOf.Pos, restore(st.AsOf.Expr))
		}
		for _, f := range st.Returning {
			if f.WildCard != nil {
				fmt.Fprintf(b, "returning: %s*\n", f.WildCard.Table.O+strings.Repeat(".", min(1, len(f.WildCard.Table.O))))
				continue
			}
			fmt.Fprintf(b, "returning: %s as %q\n", restore(f.Expr), f.AsName.O)
		}
		if st.NumParams > 0 || len(st.ParamIndex) > 0 {
			fmt.Fprintf(b, "params: %d %v\n", st.NumParams, st.ParamIndex)
		}
		if st.Values != nil {
			b.WriteString("values:")
			for r := range st.Values.Ends {
				b.WriteString(" (")
				for i, l := range st.Values.Row(r) {
					if i > 0 {
						b.WriteString(", ")
					}
					b.WriteString(formatLiteral(l, st.Values.Position))
				}
				b.WriteString(")")
			}
			b.WriteString("\n")
		}
		var cols []*ast.ColumnDef
		switch n := st.AST.(type) {
		case *ast.CreateTableStmt:
			cols = n.Cols
		case *ast.AlterTableStmt:
			for _, sp := range n.Specs {
				cols = append(cols, sp.NewColumns...)
			}
		}
		for _, c := range cols {
			typ, err := ColumnType(c)
			if err != nil {
				fmt.Fprintf(b, "column %s: %s", c.Name.Name.O, formatError(err))
			} else {
				fmt.Fprintf(b, "column %s: %s\n", c.Name.Name.O, typ)
			}
		}
		for _, id := range st.Identities {
			fmt.Fprintf(b, "identity %s kind %d (pos %d)\n", id.Column, id.Kind, id.Pos)
			formatSeqOptions(b, id.Options)
		}
		cl := &castLister{}
		st.AST.Accept(cl)
		for _, s := range cl.out {
			fmt.Fprintln(b, s)
		}
		formatSettings(b, "with", st.With)
		for _, a := range st.Alter {
			fmt.Fprintf(b, "alter action: spec %d kind %d column %q type %s using %q\n", a.Spec, a.Kind, a.Column, a.Type, a.Using)
		}
	case st.Settings != nil:
		a := st.Settings
		fmt.Fprintf(b, "alter settings: table %s.%s\n", a.Table.Schema.O, a.Table.Name.O)
		formatSettings(b, "set", a.Set)
		for _, r := range a.Reset {
			fmt.Fprintf(b, "reset: %s (pos %d)\n", r.Name, r.Pos)
		}
	case st.Sequence != nil:
		q := st.Sequence
		fmt.Fprintf(b, "sequence %d %q if_exists=%v if_not_exists=%v\n", q.Kind, q.Names, q.IfExists, q.IfNotExists)
		formatSeqOptions(b, q.Options)
	case st.Truncate != nil:
		fmt.Fprintf(b, "truncate %q restart identity=%v\n", st.Truncate.Tables, st.Truncate.RestartIdentity)
	case st.Lock != nil:
		fmt.Fprintf(b, "lock %q mode=%q nowait=%v\n", st.Lock.Tables, st.Lock.Mode, st.Lock.NoWait)
	case st.Vacuum != nil:
		v := st.Vacuum
		fmt.Fprintf(b, "vacuum=%v analyze=%v full=%v freeze=%v verbose=%v tables=%q\n", v.Vacuum, v.Analyze, v.Full,
			v.Freeze, v.Verbose, v.Tables)
	case st.Set != nil:
		fmt.Fprintf(b, "set %s = %q default=%v local=%v\n", st.Set.Name, st.Set.Values, st.Set.Default, st.Set.Local)
	case st.Show != nil:
		fmt.Fprintf(b, "show %q all=%v\n", st.Show.Name, st.Show.All)
	case st.Reset != nil:
		fmt.Fprintf(b, "reset %q all=%v\n", st.Reset.Name, st.Reset.All)
	case st.Txn != nil:
		x := st.Txn
		fmt.Fprintf(b, "txn %s isolation=%q access=%s deferrable=%s chain=%v savepoint=%q session=%v\n",
			x.Kind, x.Isolation, x.Access, x.Deferrable, x.Chain, x.Savepoint, x.Session)
		if x.AsOf != nil {
			fmt.Fprintf(b, "as of system time (pos %d): %s\n", x.AsOf.Pos, restore(x.AsOf.Expr))
		}
	case st.Deallocate != nil:
		fmt.Fprintf(b, "deallocate %q all=%v\n", st.Deallocate.Name, st.Deallocate.All)
	case st.Discard != nil:
		fmt.Fprintf(b, "discard %s\n", st.Discard.Target)
	case st.Job != nil:
		fmt.Fprintf(b, "job kind=%d id=%d\n", st.Job.Kind, st.Job.ID)
	case st.Cluster != nil:
		fmt.Fprintf(b, "cluster kind=%d node=%d\n", st.Cluster.Kind, st.Cluster.Node)
	case st.DropIndex != nil:
		fmt.Fprintf(b, "drop index %q if_exists=%v table=%q\n", st.DropIndex.Name, st.DropIndex.IfExists, st.DropIndex.Table)
	case st.Reindex != nil:
		fmt.Fprintf(b, "reindex %q kind=%q\n", st.Reindex.Name, st.Reindex.Kind)
	case st.Unsupported != nil:
		fmt.Fprintf(b, "unsupported %s\n", st.Unsupported.What)
	case st.Cursor != nil:
	case st.User != nil:
		u := st.User
		kind := map[UserKind]string{UserCreate: "create", UserAlter: "alter", UserDrop: "drop"}[u.Kind]
		fmt.Fprintf(b, "user %s %q if_exists=%v", kind, u.Names, u.IfExists)
		if u.HasPassword {
			fmt.Fprintf(b, " password=%q null=%v", u.Password, u.NullPassword)
		}
		if u.Role {
			fmt.Fprint(b, " role")
		}
		for _, a := range []struct {
			name string
			v    *bool
		}{{"superuser", u.Superuser}, {"login", u.Login}, {"createdb", u.CreateDB}, {"createrole", u.CreateRole}} {
			if a.v != nil {
				fmt.Fprintf(b, " %s=%v", a.name, *a.v)
			}
		}
		fmt.Fprintln(b)
	case st.RoleSetting != nil:
		r := st.RoleSetting
		fmt.Fprintf(b, "role setting database=%q role=%q all_roles=%v", r.Database, r.Role, r.AllRoles)
		if r.Set != nil {
			fmt.Fprintf(b, " set %s=%q default=%v\n", r.Set.Name, r.Set.Values, r.Set.Default)
		} else {
			fmt.Fprintf(b, " reset %q all=%v\n", r.Reset.Name, r.Reset.All)
		}
	case st.AlterOwner != nil:
		fmt.Fprintf(b, "alter owner %s %q to %q\n", st.AlterOwner.Kind, st.AlterOwner.Name, st.AlterOwner.Owner)
	case st.Grant != nil:
		g := st.Grant
		verb := map[bool]string{false: "grant", true: "revoke"}[g.Revoke]
		target := map[GrantTarget]string{GrantOnTables: "tables", GrantOnDatabases: "databases", GrantRoles: "roles"}[g.Target]
		fmt.Fprintf(b, "%s %s privileges=%q all=%v objects=%q grantees=%q", verb, target, g.Privileges, g.All, g.Objects, g.Grantees)
		if g.WithGrantOption {
			fmt.Fprint(b, " with_grant_option")
		}
		if g.GrantOptionFor {
			fmt.Fprint(b, " grant_option_for")
		}
		if g.Cascade {
			fmt.Fprint(b, " cascade")
		}
		fmt.Fprintln(b)
	case st.Copy != nil:
	default:
		fmt.Fprintf(b, "BUG: empty statement\n")
	}
}

func formatSeqOptions(b *strings.Builder, o SequenceOptions) {
	num := func(name string, p *int64) {
		if p != nil {
			fmt.Fprintf(b, " %s=%d", name, *p)
		}
	}
	b.WriteString("options:")
	if o.Type != nil {
		fmt.Fprintf(b, " as=%s", *o.Type)
	}
	num("increment", o.Increment)
	num("min", o.MinValue)
	num("max", o.MaxValue)
	num("start", o.Start)
	num("cache", o.Cache)
	num("restart_with", o.RestartWith)
	if o.Cycle != nil {
		fmt.Fprintf(b, " cycle=%v", *o.Cycle)
	}
	if o.NoMinValue || o.NoMaxValue || o.Restart || o.OwnedByNone {
		fmt.Fprintf(b, " nomin=%v nomax=%v restart=%v owned_by_none=%v", o.NoMinValue, o.NoMaxValue, o.Restart, o.OwnedByNone)
	}
	if o.OwnedBy != nil {
		fmt.Fprintf(b, " owned_by=%q", o.OwnedBy)
	}
	b.WriteString("\n")
}
