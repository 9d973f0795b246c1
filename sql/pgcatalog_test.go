package sql

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestPgCatalog runs testdata/pgcatalog: the system catalog relations and
// functions clients query, over tables created in the file. Commands:
//
//	exec   statements, one per line; prints "ok" or the error
//	query  one statement; prints its rows, one per line, values separated
//	       by " | ", or the error as "error CODE: message"
func TestPgCatalog(t *testing.T) {
	datadriven.Walk(t, "testdata/pgcatalog", func(t *testing.T, path string) {
		e := testEngine(t)
		s := testSession(t, e)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				for _, stmt := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					if _, err := tryQuery(s, stmt); err != nil {
						return formatErr(err)
					}
				}
				return "ok\n"
			case "query":
				rows, err := tryQuery(s, d.Input)
				if err != nil {
					return formatErr(err)
				}
				var b strings.Builder
				for _, r := range rows {
					parts := make([]string, len(r))
					for i, v := range r {
						parts[i] = v.Text()
					}
					b.WriteString(strings.Join(parts, " | ") + "\n")
				}
				if len(rows) == 0 {
					b.WriteString("(no rows)\n")
				}
				return b.String()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func formatErr(err error) string {
	var e *sqlerr.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("error %s: %s\n", e.Code, e.Message)
	}
	return fmt.Sprintf("error without SQLSTATE: %v\n", err)
}
