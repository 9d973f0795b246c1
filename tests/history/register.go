package history

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// RegisterKind is the kind of a register operation.
type RegisterKind uint8

const (
	// RegRead reads the key's value (Value; Found false: no row).
	RegRead RegisterKind = iota + 1
	// RegWrite sets the key to Value.
	RegWrite
	// RegCAS sets the key to Value if it holds Old; Swapped says whether
	// it did.
	RegCAS
)

// RegisterOp is one single-key operation of a register history, timed on
// one monotonic clock. Unknown is set when the client does not know
// whether it took effect (its connection broke): it may then take effect
// at any time after Call, or never.
type RegisterOp struct {
	Process int
	Key     int
	Kind    RegisterKind
	Value   int
	Found   bool // RegRead: the key had a value
	Old     int  // RegCAS
	Swapped bool // RegCAS
	Unknown bool
	Call    int64
	Return  int64
}

func (o RegisterOp) String() string {
	out := ""
	switch o.Kind {
	case RegRead:
		out = fmt.Sprintf("read(%d) -> %d", o.Key, o.Value)
		if !o.Found {
			out = fmt.Sprintf("read(%d) -> none", o.Key)
		}
	case RegWrite:
		out = fmt.Sprintf("write(%d, %d)", o.Key, o.Value)
	case RegCAS:
		out = fmt.Sprintf("cas(%d, %d -> %d) = %v", o.Key, o.Old, o.Value, o.Swapped)
	}
	if o.Unknown {
		out += " ?"
	}
	return out
}

// regState is a register: absent, or a value.
type regState struct {
	set   bool
	value int
}

// registerModel is a per-key register with reads, writes and
// compare-and-set; operations with unknown outcomes branch (the model is
// nondeterministic only there).
var registerModel = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range h {
			k := op.Input.(RegisterOp).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{regState{}} },
	Step: func(state, input, _ interface{}) []interface{} {
		s, op := state.(regState), input.(RegisterOp)
		switch op.Kind {
		case RegRead:
			if op.Found == s.set && (!s.set || op.Value == s.value) {
				return []interface{}{s}
			}
			return nil
		case RegWrite:
			return []interface{}{regState{set: true, value: op.Value}}
		case RegCAS:
			matches := s.set && s.value == op.Old
			switch {
			case op.Unknown && matches:
				return []interface{}{regState{set: true, value: op.Value}}
			case op.Unknown:
				return []interface{}{s}
			case op.Swapped && matches:
				return []interface{}{regState{set: true, value: op.Value}}
			case !op.Swapped && !matches:
				return []interface{}{s}
			}
			return nil
		}
		return nil
	},
	DescribeOperation: func(input, _ interface{}) string { return input.(RegisterOp).String() },
}

// CheckRegisters checks a register history for linearizability, key by
// key. An operation with an unknown outcome is given an open end (it may
// take effect until the end of the history); a read with an unknown
// outcome says nothing and is dropped.
func CheckRegisters(ops []RegisterOp, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	var h []porcupine.Operation
	for _, op := range ops {
		if op.Unknown && op.Kind == RegRead {
			continue
		}
		ret := op.Return
		if op.Unknown {
			ret = math.MaxInt64
		}
		h = append(h, porcupine.Operation{ClientId: op.Process, Input: op, Call: op.Call, Return: ret})
	}
	return porcupine.CheckOperationsVerbose(registerModel.ToModel(), h, timeout)
}
