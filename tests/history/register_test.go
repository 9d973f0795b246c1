package history

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func TestRegisters(t *testing.T) {
	w := func(p, k, v int, call, ret int64) RegisterOp {
		return RegisterOp{Process: p, Key: k, Kind: RegWrite, Value: v, Call: call, Return: ret}
	}
	rd := func(p, k, v int, call, ret int64) RegisterOp {
		return RegisterOp{Process: p, Key: k, Kind: RegRead, Value: v, Found: true, Call: call, Return: ret}
	}
	none := func(p, k int, call, ret int64) RegisterOp {
		return RegisterOp{Process: p, Key: k, Kind: RegRead, Call: call, Return: ret}
	}
	cas := func(p, k, old, v int, swapped bool, call, ret int64) RegisterOp {
		return RegisterOp{Process: p, Key: k, Kind: RegCAS, Old: old, Value: v, Swapped: swapped, Call: call, Return: ret}
	}
	unknown := func(op RegisterOp) RegisterOp { op.Unknown = true; return op }
	for _, tc := range []struct {
		name string
		ops  []RegisterOp
		want porcupine.CheckResult
	}{
		{"sequential", []RegisterOp{none(0, 1, 0, 1), w(0, 1, 5, 2, 3), rd(1, 1, 5, 4, 5)}, porcupine.Ok},
		{"concurrent write and read see either", []RegisterOp{w(0, 1, 1, 0, 10), w(1, 1, 2, 0, 10), rd(2, 1, 1, 5, 20), rd(3, 1, 1, 21, 22)}, porcupine.Ok},
		{"stale read", []RegisterOp{w(0, 1, 1, 0, 1), w(0, 1, 2, 2, 3), rd(1, 1, 1, 4, 5)}, porcupine.Illegal},
		{"read of a value never written", []RegisterOp{w(0, 1, 1, 0, 1), rd(1, 1, 7, 2, 3)}, porcupine.Illegal},
		{"keys are independent", []RegisterOp{w(0, 1, 1, 0, 1), w(0, 2, 9, 2, 3), rd(1, 1, 1, 4, 5), rd(1, 2, 9, 4, 5)}, porcupine.Ok},
		{"cas", []RegisterOp{w(0, 1, 1, 0, 1), cas(1, 1, 1, 2, true, 2, 3), cas(2, 1, 1, 3, false, 4, 5), rd(0, 1, 2, 6, 7)}, porcupine.Ok},
		{"two cas from one value both succeed", []RegisterOp{w(0, 1, 1, 0, 1), cas(1, 1, 1, 2, true, 2, 5), cas(2, 1, 1, 3, true, 2, 5)}, porcupine.Illegal},
		{"failed cas that should have swapped", []RegisterOp{w(0, 1, 1, 0, 1), cas(1, 1, 1, 2, false, 2, 3)}, porcupine.Illegal},
		{"unknown write seen later", []RegisterOp{unknown(w(0, 1, 4, 0, 1)), none(1, 1, 2, 3), rd(1, 1, 4, 10, 11)}, porcupine.Ok},
		{"unknown cas never happened", []RegisterOp{w(0, 1, 1, 0, 1), unknown(cas(1, 1, 1, 2, false, 2, 3)), rd(2, 1, 1, 10, 11)}, porcupine.Ok},
		{"write lost", []RegisterOp{w(0, 1, 4, 0, 1), none(1, 1, 2, 3)}, porcupine.Illegal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := CheckRegisters(tc.ops, 10*time.Second)
			if res != tc.want {
				t.Fatalf("got %v, want %v for %v", res, tc.want, tc.ops)
			}
		})
	}
}
