package shardsm

import (
	"encoding/binary"
	"fmt"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Serving: which node commits into the group (serves SQL over its data),
// under which epoch. The node that takes over proposes Serve; the state
// machine gives it the next epoch, and from then on applies only Writes
// that carry that epoch. A node that served before and has not noticed
// (SIGSTOPped, partitioned) proposes its Writes with the old epoch, and
// every replica rejects them alike (FencedError): it cannot write once
// another node took over, whatever it believes.
//
// The epoch and node live in the group's state (stateServing), so they
// travel in snapshots and survive restarts like the applied index.

// Serve makes Node the group's serving node under the next epoch. Its
// result's Data is the new epoch (8 bytes BE).
type Serve struct {
	Node uint64
}

const cmdServe byte = 5

// EncodeServe encodes c for raft.Host.Propose.
func EncodeServe(c Serve) ([]byte, error) {
	if c.Node == 0 {
		return nil, fmt.Errorf("shardsm: serve without a node")
	}
	return binary.BigEndian.AppendUint64([]byte{commandVersion, cmdServe}, c.Node), nil
}

// ServeEpoch returns the epoch a Serve command's result carries.
func ServeEpoch(res raft.Result) (uint64, error) {
	if err := DecodeResult(res); err != nil {
		return 0, err
	}
	if len(res.Data) != 8 {
		return 0, fmt.Errorf("shardsm: serve result of %d bytes", len(res.Data))
	}
	return binary.BigEndian.Uint64(res.Data), nil
}

// Serving is a group's serving node and epoch (zero before any Serve).
type Serving struct {
	Epoch uint64
	Node  uint64
}

// FencedError is the answer to a Write whose epoch is not the group's:
// another node took over serving (or the writer never claimed it). Nothing
// was written.
type FencedError struct {
	WriteEpoch uint64
	Serving    Serving
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("shardsm: a commit of serving epoch %d, but node %d serves under epoch %d",
		e.WriteEpoch, e.Serving.Node, e.Serving.Epoch)
}

const errFenced byte = errWriteConflict + 1

func encodeFenced(e *FencedError) []byte {
	b := []byte{errFenced}
	b = binary.AppendUvarint(b, e.WriteEpoch)
	b = binary.AppendUvarint(b, e.Serving.Epoch)
	return binary.AppendUvarint(b, e.Serving.Node)
}

func decodeFenced(r *reader) error {
	return &FencedError{WriteEpoch: r.uvarint(), Serving: Serving{Epoch: r.uvarint(), Node: r.uvarint()}}
}

func encodeServing(s Serving) []byte {
	b := binary.BigEndian.AppendUint64(nil, s.Epoch)
	return binary.BigEndian.AppendUint64(b, s.Node)
}

func readServing(r mvcc.Reader, g raft.GroupID) (Serving, error) {
	v, ok, err := get(r, stateKey(g, stateServing))
	if err != nil || !ok {
		return Serving{}, err
	}
	if len(v) != 16 {
		return Serving{}, fmt.Errorf("shardsm: group %d: serving state of %d bytes", g, len(v))
	}
	return Serving{Epoch: binary.BigEndian.Uint64(v), Node: binary.BigEndian.Uint64(v[8:])}, nil
}

// SetServingHandler installs f, called after a replica of this store
// applied a Serve (also on replay after a restart): a node that served can
// stop as soon as it learns that another took over.
func (s *Store) SetServingHandler(f func(raft.GroupID, Serving)) { s.onServing.Store(&f) }
