package parser

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// markerLister collects parameter markers in AST visiting order.
type markerLister struct {
	markers []*test_driver.ParamMarkerExpr
}

func (m *markerLister) Enter(n ast.Node) (ast.Node, bool) {
	if pm, ok := n.(*test_driver.ParamMarkerExpr); ok {
		m.markers = append(m.markers, pm)
	}
	return n, false
}

func (m *markerLister) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// TestParamOrder checks that ParamMarkerExpr.Order indexes ParamIndex, so
// that each marker finds its $n, whatever order the AST visits them in.
func TestParamOrder(t *testing.T) {
	stmts, err := Parse("SELECT $2::int8, $1 FROM t WHERE a = $2 AND b IN ($3, $1) ORDER BY $1 LIMIT $4")
	if err != nil {
		t.Fatal(err)
	}
	st := stmts[0]
	ml := &markerLister{}
	st.AST.Accept(ml)
	if len(ml.markers) != len(st.ParamIndex) || st.NumParams != 4 {
		t.Fatalf("%d markers, ParamIndex %v, NumParams %d", len(ml.markers), st.ParamIndex, st.NumParams)
	}
	// In text order the markers are $2 $1 $2 $3 $1 $1 $4.
	want := []int{2, 1, 2, 3, 1, 1, 4}
	seen := map[int]bool{}
	for _, pm := range ml.markers {
		k := pm.Order
		if seen[k] {
			t.Fatalf("order %d twice", k)
		}
		seen[k] = true
		if st.ParamIndex[k] != want[k] {
			t.Errorf("marker at offset %d: order %d maps to $%d, want $%d", pm.Offset, k, st.ParamIndex[k], want[k])
		}
		if st.TiDBText[pm.Offset] != '?' {
			t.Errorf("marker offset %d is not a '?' in %q", pm.Offset, st.TiDBText)
		}
	}
}
