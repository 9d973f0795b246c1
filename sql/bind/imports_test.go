package bind

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsNoExecution keeps the binder apart from execution: it may not
// import the transaction, partition or storage packages, nor the sql root
// that runs what it binds. (It does import sql/exec, for the subquery
// expression node exec.Subquery, which lives with its evaluation.)
func TestImportsNoExecution(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/pivotdb/pivotdb/"
	forbidden := []string{mod + "sql/txn", mod + "partition", mod + "storage", mod + "sql"}
	for _, imp := range pkg.Imports {
		for _, f := range forbidden {
			if imp == f || strings.HasPrefix(imp, f+"/") && f != mod+"sql" {
				t.Errorf("package bind imports %s", imp)
			}
		}
	}
}
