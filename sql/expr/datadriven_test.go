package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestDataDriven runs testdata/*: each command's input lines are SQL
// expressions over the fixture row (helpers_test.go).
//
//	eval         evaluate each line: `value : Type` or `error CODE: message`
//	build        show each line's String() and type after building
//	bool         BuildBool each line and evaluate it
//	params       build the line and list the inferred parameter types;
//	             args `declare=Type,Type` declares parameter types first
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			for _, line := range strings.Split(d.Input, "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				out.WriteString(runCommand(t, d, line))
				out.WriteString("\n")
			}
			return out.String()
		})
	})
}

func runCommand(t *testing.T, d *datadriven.TestData, line string) string {
	n, err := parseExpr(newParser(), line)
	if err != nil {
		return fmt.Sprintf("%s => parse error: %v", line, err)
	}
	b := newTestBuilder()
	for _, arg := range d.CmdArgs {
		if arg.Key == "declare" {
			for _, v := range arg.Vals {
				typ, err := types.ParseTypeName(v)
				if err != nil {
					t.Fatal(err)
				}
				b.ParamTypes = append(b.ParamTypes, typ)
			}
		}
	}
	ctx := &Context{Now: testNow}
	switch d.Cmd {
	case "eval":
		e, err := b.Build(n)
		if err != nil {
			return fmt.Sprintf("%s => %s", line, formatErr(err))
		}
		v, err := e.Eval(ctx, fixtureRow())
		if err != nil {
			return fmt.Sprintf("%s => %s", line, formatErr(err))
		}
		return fmt.Sprintf("%s => %s", line, formatValue(v, e.Type()))
	case "bool":
		e, err := b.BuildBool(n, "WHERE")
		if err != nil {
			return fmt.Sprintf("%s => %s", line, formatErr(err))
		}
		v, err := e.Eval(ctx, fixtureRow())
		if err != nil {
			return fmt.Sprintf("%s => %s", line, formatErr(err))
		}
		return fmt.Sprintf("%s => %s", line, v.String())
	case "build":
		e, err := b.Build(n)
		if err != nil {
			return fmt.Sprintf("%s => %s", line, formatErr(err))
		}
		return fmt.Sprintf("%s => %s : %s", line, e.String(), e.Type())
	case "params":
		e, err := b.BuildUntyped(n)
		if err != nil {
			return fmt.Sprintf("%s => %s", line, formatErr(err))
		}
		var ts []string
		for i, pt := range b.ParamTypes {
			ts = append(ts, fmt.Sprintf("$%d=%s", i+1, pt))
		}
		return fmt.Sprintf("%s => %s [%s]", line, e.String(), strings.Join(ts, " "))
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return ""
}
