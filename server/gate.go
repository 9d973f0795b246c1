package server

import (
	"bufio"
	"encoding/binary"
	"io"

	"github.com/pivotdb/pivotdb/sql/memory"
)

// gateThreshold is the body size from which the gate reserves a message in
// the memory budget before it is read: smaller messages are covered by the
// statement's parse estimate.
const gateThreshold = 64 << 10

// gate sits between the socket and pgproto3's reader and reserves every
// large Query, Parse or Bind message in the server's memory budget before
// its body is read, since pgproto3 allocates a buffer for the whole body
// as soon as it sees the length. A message the budget cannot hold is read
// off the socket in small pieces and dropped, and pgproto3 is given an
// empty message of the same type instead; the connection then answers it
// with the 53200 the reservation failed with (takeMessage). So a hundred
// clients sending 60 MB each make the server hold what --max-memory
// allows, not 6 GB, and every one of them gets an answer.
//
// The gate reads typed messages only: it is installed with the Backend,
// after the startup packet. It is used by the connection's goroutine only.
type gate struct {
	r        *bufio.Reader
	mon      *memory.Monitor
	stmtMax  int64 // the per-statement limit of the accounts it opens
	maxBody  int   // bodies above this are left to pgproto3 to refuse
	left     int   // bytes of the current message not yet passed on
	synth    []byte
	acct     *memory.Account // the reservation of the message being read
	refused  error           // why the message being read was replaced
	disabled bool
}

func newGate(r io.Reader, mon *memory.Monitor, stmtMax int64, maxBody int) *gate {
	return &gate{r: bufio.NewReaderSize(r, 32<<10), mon: mon, stmtMax: stmtMax, maxBody: maxBody}
}

// emptyBodies are the smallest valid bodies of the messages the gate may
// replace: Query "", Parse of "" into "", Bind of "" into "".
var emptyBodies = map[byte][]byte{
	'Q': {0},
	'P': {0, 0, 0, 0},
	'B': {0, 0, 0, 0, 0, 0, 0, 0},
}

func (g *gate) Read(p []byte) (int, error) {
	if len(g.synth) > 0 {
		n := copy(p, g.synth)
		g.synth = g.synth[n:]
		return n, nil
	}
	if g.left == 0 && !g.disabled {
		hdr, err := g.r.Peek(5)
		if err != nil {
			// A short read at the end: pass on what there is and let
			// pgproto3 report it.
			if g.r.Buffered() == 0 {
				return 0, err
			}
			g.disabled = true
		} else {
			typ, length := hdr[0], int(int32(binary.BigEndian.Uint32(hdr[1:])))
			g.left = 1 + length
			body := length - 4
			if _, ok := emptyBodies[typ]; ok && body >= gateThreshold && body <= g.maxBody {
				if replaced, err := g.reserve(typ, body); replaced || err != nil {
					return g.Read(p)
				}
			}
			if length < 4 {
				// pgproto3 refuses it; stop framing.
				g.disabled = true
			}
		}
	}
	if !g.disabled && len(p) > g.left {
		p = p[:g.left]
	}
	n, err := g.r.Read(p)
	if !g.disabled {
		g.left -= n
	}
	return n, err
}

// reserve opens the account of a message of body bytes, or drops the
// message and queues its empty replacement when the budget refuses it.
func (g *gate) reserve(typ byte, body int) (replaced bool, err error) {
	acct := g.mon.NewAccount("statement", g.stmtMax)
	rerr := acct.Grow(int64(body), "a protocol message")
	if rerr == nil {
		g.acct.Close() // a reservation nobody took (cannot happen with one message at a time)
		g.acct = acct
		return false, nil
	}
	acct.Close()
	if _, err := g.r.Discard(5 + body); err != nil {
		return true, err
	}
	g.left = 0
	empty := emptyBodies[typ]
	g.synth = make([]byte, 5, 5+len(empty))
	g.synth[0] = typ
	binary.BigEndian.PutUint32(g.synth[1:], uint32(4+len(empty)))
	g.synth = append(g.synth, empty...)
	g.refused = rerr
	return true, nil
}

// takeMessage hands over the account holding the reservation of the
// message just received (nil when it was small) and the error it must be
// answered with instead of being run (nil normally). The caller owns the
// account and closes it.
func (g *gate) takeMessage() (*memory.Account, error) {
	a, err := g.acct, g.refused
	g.acct, g.refused = nil, nil
	return a, err
}
