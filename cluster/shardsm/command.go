package shardsm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// OpKind is the kind of one MVCC operation of a Batch.
type OpKind byte

const (
	// OpPut writes Value as a committed version of Key at Timestamp
	// (mvcc.PutCommitted: a one-phase write that is its own commit).
	OpPut OpKind = iota + 1
	// OpDelete writes a committed tombstone of Key at Timestamp
	// (mvcc.DeleteCommitted).
	OpDelete
	// OpIntent writes Txn's provisional version of Key (Value, or a delete
	// when IsDelete) at Txn.WriteTimestamp, decided on the snapshot at
	// Timestamp, holding the key at Strength (mvcc.WriteIntent).
	OpIntent
	// OpLock takes a lock record of Txn on Key at Strength, for a locking
	// read at Timestamp (mvcc.AcquireLock).
	OpLock
	// OpResolve settles Resolution's intents and lock records in
	// [Key, EndKey), or on Key alone when EndKey is nil (mvcc.ResolveSpan,
	// mvcc.ResolveIntent).
	OpResolve
	// OpGC removes the versions of the whole shard that no read at or above
	// Timestamp can see and raises the shard's GC threshold to it (mvcc.GC).
	// Key is unused.
	OpGC
)

func (k OpKind) String() string {
	switch k {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpIntent:
		return "intent"
	case OpLock:
		return "lock"
	case OpResolve:
		return "resolve"
	case OpGC:
		return "gc"
	}
	return fmt.Sprintf("op(%d)", byte(k))
}

// Op is one MVCC operation on the shard's keys; see OpKind for the fields
// each kind uses.
type Op struct {
	Kind       OpKind
	Key        []byte
	EndKey     []byte
	Value      []byte
	IsDelete   bool
	Timestamp  hlc.Timestamp
	Txn        *mvcc.TxnMeta
	Strength   mvcc.Strength
	Resolution mvcc.Resolution
}

// Batch is a command of MVCC operations applied atomically: all of them or,
// if one fails (a conflict, a key outside the shard), none, on every replica
// alike. Generation, when not 0, must be the shard's current generation: a
// caller routing by a cached shard map names the generation it routed by,
// and a split since then makes the batch stale even for keys still inside.
type Batch struct {
	Generation uint64
	Ops        []Op
}

// Init gives a new group its shard: the first command of a group made for a
// shard (not for a split child, whose descriptor the split writes). A group
// that has a descriptor already refuses it.
type Init struct {
	Descriptor Descriptor
}

// Split cuts the shard at Key: the parent keeps [Start, Key) under the next
// generation, and group Child takes [Key, End) from each replica's own copy
// of the rows (no row moves). Members are the child group's founding
// replicas with their hosts' addresses: the parent's membership as the
// proposer read it, so each replica starts the child under its own replica
// id (Store.SetSplitHandler).
type Split struct {
	Key     []byte
	Child   raft.GroupID
	Members map[raft.ReplicaID]string
}

// Command kinds on the wire.
const (
	commandVersion byte = 1

	cmdBatch byte = 1
	cmdInit  byte = 2
	cmdSplit byte = 3
	// cmdMark (20: hjoin's reserved number) is Mark.
	cmdMark byte = 20
)

// Mark is a command that changes nothing but the replica's applied index.
// A split child's founders open their state machines at applied index 0
// (their rows came from the parent, not from the child's log), and
// dragonboat stamps the snapshots a replica streams with the last index
// its state machine applied a command at (entries without a command, a
// leader's empty entry or a membership change, do not count). A snapshot
// stamped 0 looks to a new replica, also at 0, like state it already
// holds: it skips RecoverFromSnapshot and holds no shard. A Mark applied
// on every founder before a replica is added makes the stamp non-zero
// (cluster/shardrepl's compactCaughtUp).
type Mark struct{}

// EncodeMark encodes a Mark for raft.Host.Propose.
func EncodeMark() []byte { return []byte{commandVersion, cmdMark} }

// maxKeyLen bounds keys read from a command or a snapshot.
const maxKeyLen = 1 << 20

var errBadCommand = errors.New("shardsm: malformed command")

// EncodeBatch encodes b for raft.Host.Propose.
func EncodeBatch(b Batch) ([]byte, error) {
	if len(b.Ops) == 0 {
		return nil, errors.New("shardsm: a batch without operations")
	}
	out := []byte{commandVersion, cmdBatch}
	out = binary.AppendUvarint(out, b.Generation)
	out = binary.AppendUvarint(out, uint64(len(b.Ops)))
	for i := range b.Ops {
		op := &b.Ops[i]
		if op.Kind < OpPut || op.Kind > OpGC {
			return nil, fmt.Errorf("shardsm: unknown operation kind %d", op.Kind)
		}
		if op.Kind != OpGC && len(op.Key) == 0 {
			return nil, fmt.Errorf("shardsm: %s without a key", op.Kind)
		}
		if (op.Kind == OpIntent || op.Kind == OpLock) && op.Txn == nil {
			return nil, fmt.Errorf("shardsm: %s without a transaction", op.Kind)
		}
		out = append(out, byte(op.Kind))
		out = appendBytes(out, op.Key)
		out = appendOptBytes(out, op.EndKey)
		out = appendBytes(out, op.Value)
		out = appendBool(out, op.IsDelete)
		out = appendTimestamp(out, op.Timestamp)
		out = appendBool(out, op.Txn != nil)
		if op.Txn != nil {
			out = appendTxnMeta(out, op.Txn)
		}
		out = append(out, byte(op.Strength))
		r := &op.Resolution
		out = append(out, r.ID[:]...)
		out = binary.BigEndian.AppendUint32(out, r.Epoch)
		out = append(out, byte(r.Status))
		out = appendTimestamp(out, r.CommitTimestamp)
	}
	return out, nil
}

// EncodeInit encodes an Init command.
func EncodeInit(c Init) ([]byte, error) {
	if err := c.Descriptor.validate(); err != nil {
		return nil, err
	}
	out := []byte{commandVersion, cmdInit}
	return append(out, encodeDescriptor(c.Descriptor)...), nil
}

// EncodeSplit encodes a Split command.
func EncodeSplit(c Split) ([]byte, error) {
	if len(c.Key) == 0 || c.Child == 0 || len(c.Members) == 0 {
		return nil, errors.New("shardsm: a split needs a key, a child group and its members")
	}
	out := []byte{commandVersion, cmdSplit}
	out = appendBytes(out, c.Key)
	out = binary.BigEndian.AppendUint64(out, uint64(c.Child))
	return append(out, encodeMembers(c.Members)...), nil
}

// decodeCommand returns a *Batch, *Write, *Init, *Split, *Serve, *Mark, *Close
// (closedts.go), or one of crossgroup.go's *Stage, *Decide, *Resolve,
// *ServeAt.
func decodeCommand(b []byte) (any, error) {
	if len(b) < 2 || b[0] != commandVersion {
		return nil, fmt.Errorf("%w: no version %d header", errBadCommand, commandVersion)
	}
	r := reader{b: b[2:]}
	var out any
	switch b[1] {
	case cmdBatch:
		c := &Batch{Generation: r.uvarint()}
		n := r.uvarint()
		if n == 0 || n > uint64(len(b)) {
			return nil, fmt.Errorf("%w: %d operations", errBadCommand, n)
		}
		c.Ops = make([]Op, n)
		for i := range c.Ops {
			op := &c.Ops[i]
			op.Kind = OpKind(r.byte())
			op.Key = r.bytes()
			op.EndKey = r.optBytes()
			op.Value = r.bytes()
			op.IsDelete = r.bool()
			op.Timestamp = r.timestamp()
			if r.bool() {
				op.Txn = r.txnMeta()
			}
			op.Strength = mvcc.Strength(r.byte())
			copy(op.Resolution.ID[:], r.fixed(mvcc.TxnIDLen))
			op.Resolution.Epoch = r.u32()
			op.Resolution.Status = mvcc.TxnStatus(r.byte())
			op.Resolution.CommitTimestamp = r.timestamp()
			if r.err == nil && (op.Kind < OpPut || op.Kind > OpGC) {
				return nil, fmt.Errorf("%w: operation kind %d", errBadCommand, op.Kind)
			}
		}
		out = c
	case cmdInit:
		d, err := decodeDescriptor(r.b)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBadCommand, err)
		}
		return &Init{Descriptor: d}, nil
	case cmdServe:
		out = &Serve{Node: r.u64()}
	case cmdMark:
		out = &Mark{}
	case cmdClose:
		out = decodeClose(&r)
	case cmdWrite, cmdWriteEpoch, cmdWriteOnce:
		w, err := decodeWrite(&r, len(b), b[1] != cmdWrite, b[1] == cmdWriteOnce)
		if err != nil {
			return nil, err
		}
		out = w
	case cmdStage, cmdDecide, cmdResolve, cmdServeAt:
		c, err := decodeCross(b[1], &r, len(b)) // crossgroup.go
		if err != nil {
			return nil, err
		}
		out = c
	case cmdSplit:
		c := &Split{Key: r.bytes(), Child: raft.GroupID(r.u64())}
		if r.err == nil {
			m, err := decodeMembers(r.b)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", errBadCommand, err)
			}
			c.Members, r.b = m, nil
		}
		out = c
	default:
		return nil, fmt.Errorf("%w: command kind %d", errBadCommand, b[1])
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadCommand, err)
	}
	return out, nil
}

// Results: raft.Result.Value says what became of a command; Data carries
// the details DecodeResult turns into an error.
const (
	// ResultApplied: the command took effect.
	ResultApplied uint64 = 1
	// ResultStale: a key was outside the shard or the generation was old;
	// Data is the shard's current descriptor (empty if the replica has
	// none), for the caller to refresh its map and route again.
	ResultStale uint64 = 2
	// ResultRejected: an operation failed (a conflict, an invalid request);
	// nothing was written. Data encodes the error.
	ResultRejected uint64 = 3
	// ResultMalformed: the command could not be decoded; nothing was
	// written.
	ResultMalformed uint64 = 4
)

// StaleError is a command or read that reached a replica whose shard does
// not (or no longer) hold its keys: the caller's map is stale. Descriptor is
// the shard as the replica has it; Initialized is false if the replica has
// no shard yet.
type StaleError struct {
	Descriptor  Descriptor
	Initialized bool
}

func (e *StaleError) Error() string {
	if !e.Initialized {
		return "shardsm: the replica has no shard yet"
	}
	return fmt.Sprintf("shardsm: stale shard map: the shard is now %s", e.Descriptor)
}

// ErrMalformed is the error of a command the state machine could not decode.
var ErrMalformed = errors.New("shardsm: malformed command")

// DecodeResult turns a proposal's result into nil or the error the
// command met: a *StaleError, a *mvcc.LockConflictError, a
// *mvcc.WriteConflictError, a *FencedError, or another error with the replica's message.
func DecodeResult(res raft.Result) error {
	switch res.Value {
	case ResultApplied:
		return nil
	case ResultStale:
		if len(res.Data) == 0 {
			return &StaleError{}
		}
		d, err := decodeDescriptor(res.Data)
		if err != nil {
			return err
		}
		return &StaleError{Descriptor: d, Initialized: true}
	case ResultRejected:
		return decodeError(res.Data)
	case ResultMalformed:
		return fmt.Errorf("%w: %s", ErrMalformed, res.Data)
	}
	return fmt.Errorf("shardsm: unknown result %d", res.Value)
}

// Error encodings in ResultRejected's data.
const (
	errOther byte = iota + 1
	errLockConflict
	errWriteConflict
)

func encodeError(err error) []byte {
	var lc *mvcc.LockConflictError
	var wc *mvcc.WriteConflictError
	var fe *FencedError
	var ce *ClosedError
	switch {
	case errors.As(err, &fe):
		return encodeFenced(fe)
	case errors.As(err, &ce):
		return encodeClosedError(ce)
	case errors.As(err, &lc):
		b := []byte{errLockConflict}
		b = appendBytes(b, lc.Key)
		b = appendTxnMeta(b, &lc.Txn)
		b = append(b, byte(lc.Strength))
		return appendBool(b, lc.Intent)
	case errors.As(err, &wc):
		b := []byte{errWriteConflict}
		b = appendBytes(b, wc.Key)
		b = appendTimestamp(b, wc.Existing)
		return appendTimestamp(b, wc.ReadTimestamp)
	}
	return append([]byte{errOther}, err.Error()...)
}

func decodeError(b []byte) error {
	if len(b) == 0 {
		return errors.New("shardsm: rejected without a reason")
	}
	r := reader{b: b[1:]}
	var out error
	switch b[0] {
	case errLockConflict:
		e := &mvcc.LockConflictError{Key: r.bytes()}
		e.Txn = *r.txnMeta()
		e.Strength = mvcc.Strength(r.byte())
		e.Intent = r.bool()
		out = e
	case errWriteConflict:
		out = &mvcc.WriteConflictError{Key: r.bytes(), Existing: r.timestamp(), ReadTimestamp: r.timestamp()}
	case errFenced:
		out = decodeFenced(&r)
	case errClosedTS:
		out = decodeClosedError(&r)
	default:
		return errors.New(string(b[1:]))
	}
	if err := r.done(); err != nil {
		return fmt.Errorf("shardsm: corrupt error in a result: %w", err)
	}
	return out
}

// Encoding helpers.

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// appendOptBytes tells nil from empty: 0 for nil, len+1 otherwise.
func appendOptBytes(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	return append(binary.AppendUvarint(b, uint64(len(v))+1), v...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendTimestamp(b []byte, ts hlc.Timestamp) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(ts.WallTime))
	return binary.BigEndian.AppendUint32(b, uint32(ts.Logical))
}

func appendTxnMeta(b []byte, m *mvcc.TxnMeta) []byte {
	b = append(b, m.ID[:]...)
	b = appendBytes(b, m.Anchor)
	b = binary.BigEndian.AppendUint32(b, m.Epoch)
	b = appendTimestamp(b, m.WriteTimestamp)
	return binary.BigEndian.AppendUint32(b, uint32(m.Seq))
}

// reader decodes; the first error sticks and later reads return zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("truncated at %s", what)
	}
}

func (r *reader) fixed(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.fail("a fixed field")
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte { return r.fixed(1)[0] }

func (r *reader) bool() bool {
	v := r.byte()
	if v > 1 && r.err == nil {
		r.err = fmt.Errorf("boolean %d", v)
	}
	return v == 1
}

func (r *reader) u32() uint32 { return binary.BigEndian.Uint32(r.fixed(4)) }
func (r *reader) u64() uint64 { return binary.BigEndian.Uint64(r.fixed(8)) }

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("a length")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > maxKeyLen<<10 || n > uint64(len(r.b)) {
		r.fail("a byte string")
		return nil
	}
	v := append([]byte{}, r.b[:n]...)
	r.b = r.b[n:]
	return v
}

func (r *reader) optBytes() []byte {
	n := r.uvarint()
	if n == 0 || r.err != nil {
		return nil
	}
	n--
	if n > uint64(len(r.b)) {
		r.fail("a byte string")
		return nil
	}
	v := append([]byte{}, r.b[:n]...)
	r.b = r.b[n:]
	return v
}

func (r *reader) timestamp() hlc.Timestamp {
	return hlc.Timestamp{WallTime: int64(r.u64()), Logical: int32(r.u32())}
}

func (r *reader) txnMeta() *mvcc.TxnMeta {
	m := &mvcc.TxnMeta{}
	copy(m.ID[:], r.fixed(mvcc.TxnIDLen))
	m.Anchor = r.bytes()
	m.Epoch = r.u32()
	m.WriteTimestamp = r.timestamp()
	m.Seq = int32(r.u32())
	return m
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	return r.err
}
