package kvsm

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// OpKind is what one operation of a Command does.
type OpKind byte

const (
	// OpPut sets Key to Value.
	OpPut OpKind = 1
	// OpDelete removes Key.
	OpDelete OpKind = 2
	// OpAdd adds Delta to the signed 64-bit counter at Key (absent = 0) and
	// returns the new value: an allocator (node ids, sequences) without a
	// read-modify-write race, since commands apply one after another.
	OpAdd OpKind = 3
)

// Op is one operation of a Command.
type Op struct {
	Kind  OpKind
	Key   []byte
	Value []byte // OpPut
	Delta int64  // OpAdd
}

// Command is the replicated command of a group for now: a batch of
// operations applied atomically, in order. The shard state machine of the
// MVCC engine will replace it with its own commands (versions, intents).
type Command struct {
	Ops []Op
}

// commandVersion is the first byte of an encoded command.
const commandVersion byte = 1

// maxKeyLen bounds user keys: a key is stored with a 10-byte prefix and the
// snapshot format carries lengths as uvarints, so the bound is a sanity check
// against corrupt input, not a format limit.
const maxKeyLen = 1 << 20

// Encode returns the command's bytes for raft.Host.Propose. It refuses what
// Apply would reject, so a bad command never reaches the log.
func (c Command) Encode() ([]byte, error) {
	if len(c.Ops) == 0 {
		return nil, errors.New("kvsm: empty command")
	}
	n := 1 + binary.MaxVarintLen64
	for _, op := range c.Ops {
		n += 1 + 2*binary.MaxVarintLen64 + len(op.Key) + len(op.Value)
	}
	b := make([]byte, 0, n)
	b = append(b, commandVersion)
	b = binary.AppendUvarint(b, uint64(len(c.Ops)))
	for i, op := range c.Ops {
		if len(op.Key) == 0 || len(op.Key) > maxKeyLen {
			return nil, fmt.Errorf("kvsm: op %d: key length %d outside 1..%d", i, len(op.Key), maxKeyLen)
		}
		b = append(b, byte(op.Kind))
		b = binary.AppendUvarint(b, uint64(len(op.Key)))
		b = append(b, op.Key...)
		switch op.Kind {
		case OpPut:
			b = binary.AppendUvarint(b, uint64(len(op.Value)))
			b = append(b, op.Value...)
		case OpDelete:
		case OpAdd:
			b = binary.AppendVarint(b, op.Delta)
		default:
			return nil, fmt.Errorf("kvsm: op %d: unknown kind %d", i, op.Kind)
		}
	}
	return b, nil
}

// errBadCommand marks a command Apply cannot decode.
var errBadCommand = errors.New("kvsm: malformed command")

// decodeCommand parses an encoded command. The ops' byte slices alias b.
func decodeCommand(b []byte) (Command, error) {
	if len(b) == 0 || b[0] != commandVersion {
		return Command{}, fmt.Errorf("%w: unknown version", errBadCommand)
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n == 0 || n > uint64(len(b)) {
		return Command{}, fmt.Errorf("%w: op count", errBadCommand)
	}
	b = b[k:]
	c := Command{Ops: make([]Op, 0, n)}
	readBytes := func() ([]byte, bool) {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, false
		}
		v := b[k : k+int(l)]
		b = b[k+int(l):]
		return v, true
	}
	for i := uint64(0); i < n; i++ {
		if len(b) == 0 {
			return Command{}, fmt.Errorf("%w: truncated at op %d", errBadCommand, i)
		}
		op := Op{Kind: OpKind(b[0])}
		b = b[1:]
		var ok bool
		if op.Key, ok = readBytes(); !ok || len(op.Key) == 0 {
			return Command{}, fmt.Errorf("%w: key of op %d", errBadCommand, i)
		}
		switch op.Kind {
		case OpPut:
			if op.Value, ok = readBytes(); !ok {
				return Command{}, fmt.Errorf("%w: value of op %d", errBadCommand, i)
			}
		case OpDelete:
		case OpAdd:
			d, k := binary.Varint(b)
			if k <= 0 {
				return Command{}, fmt.Errorf("%w: delta of op %d", errBadCommand, i)
			}
			op.Delta = d
			b = b[k:]
		default:
			return Command{}, fmt.Errorf("%w: kind %d of op %d", errBadCommand, op.Kind, i)
		}
		c.Ops = append(c.Ops, op)
	}
	if len(b) != 0 {
		return Command{}, fmt.Errorf("%w: %d trailing bytes", errBadCommand, len(b))
	}
	return c, nil
}

// Result codes in raft.Result.Value.
const (
	// ResultApplied: every op applied; Data holds the new value of each
	// OpAdd, 8 bytes big-endian each, in op order.
	ResultApplied uint64 = 1
	// ResultMalformed: the command could not be decoded and changed
	// nothing; Data holds the reason. Encode never produces one.
	ResultMalformed uint64 = 2
)

// ErrMalformed is returned by DecodeResult for a command the state machine
// refused.
var ErrMalformed = errors.New("kvsm: the state machine refused a malformed command")

// DecodeResult returns the new values of a command's OpAdd ops from the
// Propose result.
func DecodeResult(value uint64, data []byte) ([]int64, error) {
	switch value {
	case ResultApplied:
	case ResultMalformed:
		return nil, fmt.Errorf("%w: %s", ErrMalformed, data)
	default:
		return nil, fmt.Errorf("kvsm: unknown result code %d", value)
	}
	if len(data)%8 != 0 {
		return nil, fmt.Errorf("kvsm: result of %d bytes", len(data))
	}
	out := make([]int64, len(data)/8)
	for i := range out {
		out[i] = int64(binary.BigEndian.Uint64(data[8*i:]))
	}
	return out, nil
}
