package shardsm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

func openTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := OpenStore("/store", &pebble.Options{FS: vfs.NewMem(), Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rk returns a row key of table 7: 0x02, the table id, then s.
func rk(s string) []byte {
	return append([]byte{0x02, 0, 0, 0, 0, 0, 0, 0, 7}, s...)
}

// tableSpan is all of table 7.
var tableSpan = storage.Span{Start: rk(""), End: []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 8}}

func ts(n int64) hlc.Timestamp { return hlc.Timestamp{WallTime: n} }

func putOp(k, v string, at int64) Op {
	return Op{Kind: OpPut, Key: rk(k), Value: []byte(v), Timestamp: ts(at)}
}

func mustEncode(t testing.TB, c any) []byte {
	t.Helper()
	var b []byte
	var err error
	switch c := c.(type) {
	case Batch:
		b, err = EncodeBatch(c)
	case Init:
		b, err = EncodeInit(c)
	case Split:
		b, err = EncodeSplit(c)
	default:
		t.Fatalf("unknown command %T", c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applier applies commands to one replica with ascending indexes.
type applier struct {
	t     testing.TB
	m     raft.StateMachine
	index uint64
}

func (a *applier) apply(cmd []byte) error {
	a.t.Helper()
	a.index++
	e := []raft.Entry{{Index: a.index, Cmd: cmd}}
	if err := a.m.Apply(e); err != nil {
		a.t.Fatal(err)
	}
	return DecodeResult(e[0].Result)
}

func (a *applier) ops(ops ...Op) error {
	a.t.Helper()
	return a.apply(mustEncode(a.t, Batch{Ops: ops}))
}

func (a *applier) mustOps(ops ...Op) {
	a.t.Helper()
	if err := a.ops(ops...); err != nil {
		a.t.Fatal(err)
	}
}

// checkReplica fails unless the stored stats counter equals a recount.
func checkReplica(t testing.TB, m raft.StateMachine) CheckResult {
	t.Helper()
	v, err := m.Lookup(Check{})
	if err != nil {
		t.Fatal(err)
	}
	c := v.(CheckResult)
	if c.Stored != c.Computed {
		t.Fatalf("stats counter %+v, recount %+v", c.Stored, c.Computed)
	}
	return c
}

// rows reads the whole of span at ts through Lookup as "k=v" strings (the
// table prefix cut off).
func rows(t testing.TB, m raft.StateMachine, span storage.Span, at int64) ([]string, error) {
	t.Helper()
	v, err := m.Lookup(Scan{Span: span, Timestamp: ts(at)})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kv := range v.([]KV) {
		out = append(out, fmt.Sprintf("%s=%s", kv.Key[len(rk("")):], kv.Value))
	}
	return out, nil
}

func isStale(err error) bool {
	var se *StaleError
	return errors.As(err, &se)
}

var _ = mvcc.Stats{}
