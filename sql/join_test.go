package sql

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// joinCell is a nullable integer of the randomized join test's oracle.
type joinCell struct {
	v    int
	null bool
}

// joinAtom is one condition of a random join query, rendered as SQL and
// evaluated by the oracle with SQL's three-valued logic (0 false, 1 true,
// 2 unknown).
type joinAtom struct {
	sql  string
	eval func(rows [][]joinCell) int
}

// TestJoinRandomized runs random inner, comma and left joins of three
// small tables with NULLs and compares each result, as a multiset, with a
// nested-loop oracle. It covers predicate pushdown, the greedy join order,
// hash keys (equalities, NULL keys) and residual conditions.
func TestJoinRandomized(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	rng := rand.New(rand.NewPCG(8, 8))
	names := []string{"ja", "jb", "jc"}
	data := make([][][]joinCell, len(names)) // table -> row -> (id, x, y)
	for ti, name := range names {
		query(t, s, fmt.Sprintf("CREATE TABLE %s (id Int64, x Int64, y Int32, PRIMARY KEY (id))", name))
		n := 3 + rng.IntN(6)
		for id := 0; id < n; id++ {
			row := []joinCell{{v: id}}
			vals := []string{fmt.Sprint(id)}
			for range 2 {
				c := joinCell{v: rng.IntN(4)}
				if rng.IntN(4) == 0 {
					c.null = true
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, fmt.Sprint(c.v))
				}
				row = append(row, c)
			}
			query(t, s, fmt.Sprintf("INSERT INTO %s VALUES (%s)", name, strings.Join(vals, ", ")))
			data[ti] = append(data[ti], row)
		}
	}
	cmp := func(a, b joinCell, op string) int {
		if a.null || b.null {
			return 2
		}
		var r bool
		switch op {
		case "=":
			r = a.v == b.v
		case "<":
			r = a.v < b.v
		case "<>":
			r = a.v != b.v
		}
		if r {
			return 1
		}
		return 0
	}
	// atom builds a random condition over the tables in tabs (positions
	// into the query's FROM list).
	atom := func(tabs []int, aliases []string) joinAtom {
		col := func() (int, int, string) {
			t := tabs[rng.IntN(len(tabs))]
			c := 1 + rng.IntN(2)
			return t, c, aliases[t] + "." + []string{"", "x", "y"}[c]
		}
		ops := []string{"=", "=", "=", "<", "<>"}
		switch rng.IntN(5) {
		case 0: // column op constant
			t1, c1, s1 := col()
			k := rng.IntN(4)
			op := ops[rng.IntN(len(ops))]
			return joinAtom{fmt.Sprintf("%s %s %d", s1, op, k), func(r [][]joinCell) int { return cmp(r[t1][c1], joinCell{v: k}, op) }}
		case 1: // IS NULL
			t1, c1, s1 := col()
			return joinAtom{s1 + " IS NULL", func(r [][]joinCell) int {
				if r[t1][c1].null {
					return 1
				}
				return 0
			}}
		case 2: // column + column = column
			t1, c1, s1 := col()
			t2, c2, s2 := col()
			t3, c3, s3 := col()
			return joinAtom{fmt.Sprintf("%s + %s = %s", s1, s2, s3), func(r [][]joinCell) int {
				a, b := r[t1][c1], r[t2][c2]
				return cmp(joinCell{v: a.v + b.v, null: a.null || b.null}, r[t3][c3], "=")
			}}
		default: // column op column
			t1, c1, s1 := col()
			t2, c2, s2 := col()
			op := ops[rng.IntN(len(ops))]
			return joinAtom{fmt.Sprintf("%s %s %s", s1, op, s2), func(r [][]joinCell) int { return cmp(r[t1][c1], r[t2][c2], op) }}
		}
	}
	and := func(atoms []joinAtom) joinAtom {
		if len(atoms) == 0 {
			return joinAtom{"TRUE", func([][]joinCell) int { return 1 }}
		}
		var parts []string
		for _, a := range atoms {
			parts = append(parts, "("+a.sql+")")
		}
		return joinAtom{strings.Join(parts, " AND "), func(r [][]joinCell) int {
			res := 1
			for _, a := range atoms {
				switch a.eval(r) {
				case 0:
					return 0
				case 2:
					res = 2
				}
			}
			return res
		}}
	}
	randCond := func(tabs []int, aliases []string, max int) joinAtom {
		var atoms []joinAtom
		for range rng.IntN(max + 1) {
			a := atom(tabs, aliases)
			if rng.IntN(5) == 0 { // an OR of two atoms
				b := atom(tabs, aliases)
				ea, eb := a.eval, b.eval
				a = joinAtom{"(" + a.sql + ") OR (" + b.sql + ")", func(r [][]joinCell) int {
					x, y := ea(r), eb(r)
					switch {
					case x == 1 || y == 1:
						return 1
					case x == 2 || y == 2:
						return 2
					}
					return 0
				}}
			}
			atoms = append(atoms, a)
		}
		return and(atoms)
	}

	for iter := 0; iter < 300; iter++ {
		// FROM list: 2 or 3 tables (repeats allowed, under aliases).
		n := 2 + rng.IntN(2)
		from := make([]int, n)
		aliases := make([]string, n)
		for i := range from {
			from[i] = rng.IntN(len(names))
			aliases[i] = fmt.Sprintf("t%d", i)
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		var sqlText string
		var want []string
		row := make([][]joinCell, n)
		idList := func(r [][]joinCell) string {
			var parts []string
			for _, c := range r {
				if c == nil {
					parts = append(parts, "NULL")
				} else {
					parts = append(parts, fmt.Sprint(c[0].v))
				}
			}
			return strings.Join(parts, ",")
		}
		var sel []string
		for i := range n {
			sel = append(sel, aliases[i]+".id")
		}
		if rng.IntN(3) == 0 {
			// t0 LEFT JOIN t1 ON cond [, t2] WHERE cond
			on := randCond([]int{0, 1}, aliases, 3)
			where := randCond(all, aliases, 2)
			sqlText = fmt.Sprintf("SELECT %s FROM %s AS t0 LEFT JOIN %s AS t1 ON %s", strings.Join(sel, ", "), names[from[0]], names[from[1]], on.sql)
			if n == 3 {
				sqlText += fmt.Sprintf(", %s AS t2", names[from[2]])
			}
			sqlText += " WHERE " + where.sql
			// The oracle pads unmatched left rows with NULLs; a nil row
			// evaluates every column as NULL.
			nullRow := []joinCell{{null: true}, {null: true}, {null: true}}
			var third [][]joinCell = [][]joinCell{nil}
			if n == 3 {
				third = data[from[2]]
			}
			for _, r0 := range data[from[0]] {
				var pairs [][]joinCell
				for _, r1 := range data[from[1]] {
					row[0], row[1] = r0, r1
					if on.eval(row) == 1 {
						pairs = append(pairs, r1)
					}
				}
				if len(pairs) == 0 {
					pairs = append(pairs, nil)
				}
				for _, r1 := range pairs {
					for _, r2 := range third {
						row[0], row[1] = r0, r1
						if n == 3 {
							row[2] = r2
						}
						eval := slices.Clone(row)
						if r1 == nil {
							eval[1] = nullRow
						}
						if where.eval(eval) == 1 {
							want = append(want, idList(row))
						}
					}
				}
			}
		} else {
			where := randCond(all, aliases, 3)
			var fromSQL []string
			for i := range n {
				fromSQL = append(fromSQL, names[from[i]]+" AS "+aliases[i])
			}
			join := strings.Join(fromSQL, ", ")
			if rng.IntN(2) == 0 {
				join = strings.Join(fromSQL, " CROSS JOIN ")
			}
			sqlText = fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "), join, where.sql)
			var rec func(i int)
			rec = func(i int) {
				if i == n {
					if where.eval(row) == 1 {
						want = append(want, idList(row))
					}
					return
				}
				for _, r := range data[from[i]] {
					row[i] = r
					rec(i + 1)
				}
			}
			rec(0)
		}
		rows, err := tryQuery(s, sqlText)
		if err != nil {
			t.Fatalf("%s: %v", sqlText, err)
		}
		var got []string
		for _, r := range rows {
			var parts []string
			for _, v := range r {
				parts = append(parts, v.String())
			}
			got = append(got, strings.Join(parts, ","))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s\ngot  %v\nwant %v", sqlText, got, want)
		}
	}
}
