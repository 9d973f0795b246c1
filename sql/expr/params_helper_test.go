package expr

import (
	"sort"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// numberParams sets the Order of every parameter marker in node to its
// rank in the statement text (0 for the first ?), which sql/parser.Parse does
// for real statements; these tests parse with TiDB directly.
func numberParams(node ast.Node) int {
	v := &paramCollector{}
	node.Accept(v)
	sort.SliceStable(v.markers, func(i, j int) bool { return v.markers[i].Offset < v.markers[j].Offset })
	for i, m := range v.markers {
		m.SetOrder(i)
	}
	return len(v.markers)
}

type paramCollector struct {
	markers []*test_driver.ParamMarkerExpr
}

func (v *paramCollector) Enter(n ast.Node) (ast.Node, bool) {
	if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
		v.markers = append(v.markers, m)
	}
	return n, false
}

func (v *paramCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
