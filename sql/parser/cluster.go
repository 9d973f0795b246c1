package parser

import (
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// ClusterKind is which ALTER CLUSTER statement.
type ClusterKind uint8

const (
	// ClusterDecommission is ALTER CLUSTER DECOMMISSION NODE n.
	ClusterDecommission ClusterKind = iota + 1
	// ClusterRecommission is ALTER CLUSTER RECOMMISSION NODE n.
	ClusterRecommission
)

// ClusterStmt is ALTER CLUSTER DECOMMISSION NODE n (the node's replicas
// move to the other nodes, then it is marked decommissioned) or ALTER
// CLUSTER RECOMMISSION NODE n (a node being decommissioned is active
// again; cluster/placement). CockroachDB has the operations only as
// commands (`cockroach node decommission`, `recommission`); the statements
// are PivotDB's, and `pivotdb node decommission|recommission` runs them.
type ClusterStmt struct {
	Kind ClusterKind
	Node int64
}

// parseCluster parses ALTER CLUSTER ...; handled is false when the tokens
// are not one (the first token is ALTER).
func (s *stmtToks) parseCluster() (*ClusterStmt, bool, error) {
	if !s.isWord(1, "cluster") {
		return nil, false, nil
	}
	kind := ClusterDecommission
	switch {
	case s.isWord(2, "decommission"):
	case s.isWord(2, "recommission"):
		kind = ClusterRecommission
	default:
		return nil, true, s.errAtTok(2)
	}
	if !s.isWord(3, "node") {
		return nil, true, s.errAtTok(3)
	}
	if !s.isKind(4, tkNumber) {
		return nil, true, s.errAtTok(4)
	}
	id, err := strconv.ParseInt(s.text(4), 10, 64)
	if err != nil || strings.ContainsAny(s.text(4), ".eE") {
		return nil, true, errAt(sqlerr.InvalidParameterValue, s.start(4), "invalid node id %s: a node id is a positive integer", s.text(4))
	}
	if !s.atEnd(5) {
		return nil, true, s.errAtTok(5)
	}
	return &ClusterStmt{Kind: kind, Node: id}, true, nil
}
