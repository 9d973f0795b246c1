package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's number format pictures (to_char of a number, to_number):
// the template is parsed into nodes, which also fill a numDesc (how many
// digits before and after the point, which sign and fill options), then a
// processor walks the nodes once, writing the formatted number (to_char)
// or reading one (to_number). The rules, odd corners included, are
// PostgreSQL's (formatting.c), since clients compare these strings
// byte for byte: a leading blank for the sign, '#' for a number that
// does not fit, FM dropping padding and trailing zeros, S, MI, PL, SG
// and PR placing the sign, V shifting by powers of ten, RN roman
// numerals, TH ordinal suffixes and EEEE scientific notation. The locale
// is C's: '.' and ',' for D and G, ' ' for L.

type numKey uint8

const (
	nkChar numKey = iota // a literal character
	nkComma
	nkDec
	nk0
	nk9
	nkB
	nkC
	nkD
	nkE
	nkFM
	nkG
	nkL
	nkMI
	nkPL
	nkPR
	nkRN
	nkrn
	nkSG
	nkSP
	nkS
	nkTH
	nkth
	nkV
)

// numKeywords are tried in this order at each position (PostgreSQL's
// table: the longer names first where they share a first letter).
var numKeywords = []struct {
	name string
	key  numKey
}{
	{",", nkComma}, {".", nkDec}, {"0", nk0}, {"9", nk9},
	{"B", nkB}, {"C", nkC}, {"D", nkD}, {"EEEE", nkE}, {"FM", nkFM}, {"G", nkG}, {"L", nkL},
	{"MI", nkMI}, {"PL", nkPL}, {"PR", nkPR}, {"RN", nkRN}, {"SG", nkSG}, {"SP", nkSP}, {"S", nkS},
	{"TH", nkTH}, {"V", nkV},
	{"b", nkB}, {"c", nkC}, {"d", nkD}, {"eeee", nkE}, {"fm", nkFM}, {"g", nkG}, {"l", nkL},
	{"mi", nkMI}, {"pl", nkPL}, {"pr", nkPR}, {"rn", nkrn}, {"sg", nkSG}, {"sp", nkSP}, {"s", nkS},
	{"th", nkth}, {"v", nkV},
}

type numNode struct {
	key numKey
	ch  string // the character of an nkChar node
}

// numDesc describes a number picture.
type numDesc struct {
	pre, post   int // digit positions before and after the decimal point
	lsign       int // numLsignPre/Post for S, 0 without
	flag        numFlag
	preLsignNum int // pre when S was seen
	multi       int // the 9s after V
	zeroStart   int // 1-based position of the first 0 (0: none)
	zeroEnd     int // position of the last 0
}

type numFlag uint16

const (
	nfDecimal numFlag = 1 << iota
	nfLDecimal
	nfZero
	nfBlank
	nfFillMode
	nfLSign
	nfBracket
	nfMinus
	nfPlus
	nfRoman
	nfMulti
	nfPlusPost
	nfMinusPost
	nfEEEE
)

const (
	numLsignPre  = -1
	numLsignPost = 1
)

func (d *numDesc) is(f numFlag) bool { return d.flag&f != 0 }

func numFmtErr(msg string) error { return sqlerr.New(sqlerr.SyntaxError, "%s", msg) }

// parseNumFormat splits a picture into nodes and describes it. Text in
// double quotes is literal (a backslash quotes the next character);
// outside quotes a backslash before a double quote makes it literal.
func parseNumFormat(f string) ([]numNode, numDesc, error) {
	var d numDesc
	var nodes []numNode
	for i := 0; i < len(f); {
		if c := f[i]; c > ' ' && c < '~' {
			matched := false
			for _, k := range numKeywords {
				if strings.HasPrefix(f[i:], k.name) {
					if err := d.prepare(k.key); err != nil {
						return nil, d, err
					}
					nodes = append(nodes, numNode{key: k.key})
					i += len(k.name)
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		if f[i] == '"' {
			i++
			for i < len(f) {
				if f[i] == '"' {
					i++
					break
				}
				if f[i] == '\\' && i+1 < len(f) {
					i++
				}
				_, n := utf8.DecodeRuneInString(f[i:])
				nodes = append(nodes, numNode{ch: f[i : i+n]})
				i += n
			}
			continue
		}
		if f[i] == '\\' && i+1 < len(f) && f[i+1] == '"' {
			i++
		}
		_, n := utf8.DecodeRuneInString(f[i:])
		nodes = append(nodes, numNode{ch: f[i : i+n]})
		i += n
	}
	return nodes, d, nil
}

// prepare records one keyword in d, with PostgreSQL's checks of which
// keywords go together.
func (d *numDesc) prepare(k numKey) error {
	if d.is(nfEEEE) && k != nkE {
		return numFmtErr(`"EEEE" must be the last pattern used`)
	}
	switch k {
	case nk9:
		if d.is(nfBracket) {
			return numFmtErr(`"9" must be ahead of "PR"`)
		}
		switch {
		case d.is(nfMulti):
			d.multi++
		case d.is(nfDecimal):
			d.post++
		default:
			d.pre++
		}
	case nk0:
		if d.is(nfBracket) {
			return numFmtErr(`"0" must be ahead of "PR"`)
		}
		if !d.is(nfZero) && !d.is(nfDecimal) {
			d.flag |= nfZero
			d.zeroStart = d.pre + 1
		}
		if !d.is(nfDecimal) {
			d.pre++
		} else {
			d.post++
		}
		d.zeroEnd = d.pre + d.post
	case nkB:
		if d.pre == 0 && d.post == 0 && !d.is(nfZero) {
			d.flag |= nfBlank
		}
	case nkD, nkDec:
		if k == nkD {
			d.flag |= nfLDecimal
		}
		if d.is(nfDecimal) {
			return numFmtErr("multiple decimal points")
		}
		if d.is(nfMulti) {
			return numFmtErr(`cannot use "V" and decimal point together`)
		}
		d.flag |= nfDecimal
	case nkFM:
		d.flag |= nfFillMode
	case nkS:
		if d.is(nfLSign) {
			return numFmtErr(`cannot use "S" twice`)
		}
		if d.is(nfPlus) || d.is(nfMinus) || d.is(nfBracket) {
			return numFmtErr(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if !d.is(nfDecimal) {
			d.lsign = numLsignPre
			d.preLsignNum = d.pre
			d.flag |= nfLSign
		} else if d.lsign == 0 {
			d.lsign = numLsignPost
			d.flag |= nfLSign
		}
	case nkMI:
		if d.is(nfLSign) {
			return numFmtErr(`cannot use "S" and "MI" together`)
		}
		d.flag |= nfMinus
		if d.is(nfDecimal) {
			d.flag |= nfMinusPost
		}
	case nkPL:
		if d.is(nfLSign) {
			return numFmtErr(`cannot use "S" and "PL" together`)
		}
		d.flag |= nfPlus
		if d.is(nfDecimal) {
			d.flag |= nfPlusPost
		}
	case nkSG:
		if d.is(nfLSign) {
			return numFmtErr(`cannot use "S" and "SG" together`)
		}
		d.flag |= nfMinus | nfPlus
	case nkPR:
		if d.is(nfLSign) || d.is(nfPlus) || d.is(nfMinus) {
			return numFmtErr(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		d.flag |= nfBracket
	case nkRN, nkrn:
		d.flag |= nfRoman
	case nkV:
		if d.is(nfDecimal) {
			return numFmtErr(`cannot use "V" and decimal point together`)
		}
		d.flag |= nfMulti
	case nkE:
		if d.is(nfEEEE) {
			return numFmtErr(`cannot use "EEEE" twice`)
		}
		if d.is(nfBlank) || d.is(nfFillMode) || d.is(nfLSign) || d.is(nfBracket) || d.is(nfMinus) ||
			d.is(nfPlus) || d.is(nfRoman) || d.is(nfMulti) {
			return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: `"EEEE" is incompatible with other formats`,
				Detail: `"EEEE" may only be used together with digit and decimal point patterns.`}
		}
		d.flag |= nfEEEE
	}
	return nil
}

// numProc is the state of one to_char or to_number run.
type numProc struct {
	d            *numDesc
	sign         byte // '+' or '-' (to_char); 0 for roman numerals
	signWrote    bool
	numCount     int
	numIn        bool
	numCurr      int
	outPreSpaces int
	number       []byte // to_char: the digits to place; to_number: what was read
	np           int    // the current position in number
	lastRelevant int    // FM: the last digit after the point worth showing; -1 if none
	out          []byte

	// to_number
	in                string
	ip                int
	readDec           bool
	readPost, readPre int
}

// at is number[i], or 0 past its end (C's terminating NUL).
func (p *numProc) at(i int) byte {
	if i < len(p.number) {
		return p.number[i]
	}
	return 0
}

func (p *numProc) lastRelevantIs(c byte) bool {
	return p.lastRelevant >= 0 && p.at(p.lastRelevant) == c
}

// predecSpace: a zero before the decimal point that prints as a blank
// ('0.1' with 9.9 is ' .1').
func (p *numProc) predecSpace() bool {
	return !p.d.is(nfZero) && p.np == 0 && p.at(0) == '0' && p.d.post != 0
}

// numToChar places number (the digits of the value, with its '.', or '#'s
// when it does not fit) in the picture. outPreSpaces is how many leading
// digit positions the number leaves empty; sign is '+' or '-'.
func numToChar(nodes []numNode, desc numDesc, number string, outPreSpaces int, sign byte) (string, error) {
	d := &desc
	p := &numProc{d: d, number: []byte(number), lastRelevant: -1}
	if d.zeroStart > 0 {
		d.zeroStart--
	}
	if d.is(nfEEEE) {
		return number, nil
	}
	if d.is(nfRoman) {
		d.lsign, d.preLsignNum, d.post, d.pre = 0, 0, 0, 0
		outPreSpaces, sign = 0, 0
		d.flag = nfRoman | d.flag&nfFillMode
	}
	p.sign = sign
	if d.is(nfPlus) || d.is(nfMinus) {
		// MI, PL and SG write the sign themselves; PL alone leaves a
		// minus to the number.
		p.signWrote = !(d.is(nfPlus) && !d.is(nfMinus))
	} else {
		if sign != '-' && d.is(nfFillMode) {
			d.flag &^= nfBracket
		}
		p.signWrote = sign == '+' && d.is(nfFillMode) && !d.is(nfLSign)
		if d.lsign == numLsignPre && d.pre == d.preLsignNum {
			d.lsign = numLsignPost
		}
	}
	p.numCount = d.post + d.pre - 1
	p.outPreSpaces = outPreSpaces
	if d.is(nfFillMode) && d.is(nfDecimal) {
		p.lastRelevant = lastRelevantDecnum(p.number)
		if p.lastRelevant >= 0 && d.zeroEnd > outPreSpaces {
			// Keep the digits that a 0 asks for.
			if z := min(len(p.number)-1, d.zeroEnd-outPreSpaces); p.lastRelevant < z {
				p.lastRelevant = z
			}
		}
	}
	if !p.signWrote && outPreSpaces == 0 {
		p.numCount++
	}
	for _, n := range nodes {
		if n.key == nkChar {
			p.out = append(p.out, n.ch...)
			continue
		}
		switch n.key {
		case nk9, nk0, nkDec, nkD:
			p.numpartToChar(n.key)
		case nkComma, nkG:
			switch {
			case p.numIn:
				p.out = append(p.out, ',')
			case !d.is(nfFillMode):
				p.out = append(p.out, ' ')
			}
		case nkL:
			p.out = append(p.out, ' ')
		case nkRN, nkrn:
			r := string(p.number[min(p.np, len(p.number)):])
			if n.key == nkrn {
				r = strings.ToLower(r)
			}
			if !d.is(nfFillMode) && len(r) < 15 {
				r = strings.Repeat(" ", 15-len(r)) + r
			}
			p.out = append(p.out, r...)
		case nkTH, nkth:
			if d.is(nfRoman) || p.at(0) == '#' || p.sign == '-' || d.is(nfDecimal) {
				continue
			}
			if l := len(p.number); l == 0 || p.number[l-1] < '0' || p.number[l-1] > '9' {
				return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "\"%s\" is not a number", string(p.number))
			}
			p.out = append(p.out, ordinalSuffix(p.number, n.key == nkTH)...)
		case nkMI:
			switch {
			case p.sign == '-':
				p.out = append(p.out, '-')
			case !d.is(nfFillMode):
				p.out = append(p.out, ' ')
			}
		case nkPL:
			switch {
			case p.sign == '+':
				p.out = append(p.out, '+')
			case !d.is(nfFillMode):
				p.out = append(p.out, ' ')
			}
		case nkSG:
			p.out = append(p.out, p.sign)
		}
	}
	// A digit position past the number's end wrote C's NUL, which ends
	// the string there.
	if i := strings.IndexByte(string(p.out), 0); i >= 0 {
		p.out = p.out[:i]
	}
	return string(p.out), nil
}

func (p *numProc) numpartToChar(id numKey) {
	d := p.d
	if d.is(nfRoman) {
		return
	}
	p.numIn = false
	// The sign goes before the first digit written (predecSpace: "9.9"
	// writes " .1" for 0.1, the sign before the point).
	if !p.signWrote && (p.numCurr >= p.outPreSpaces || d.is(nfZero) && d.zeroStart == p.numCurr) &&
		(!p.predecSpace() || p.lastRelevantIs('.')) {
		switch {
		case d.is(nfLSign):
			if d.lsign == numLsignPre {
				p.out = append(p.out, p.sign)
				p.signWrote = true
			}
		case d.is(nfBracket):
			if p.sign == '+' {
				p.out = append(p.out, ' ')
			} else {
				p.out = append(p.out, '<')
			}
			p.signWrote = true
		case p.sign == '+':
			if !d.is(nfFillMode) {
				p.out = append(p.out, ' ')
			}
			p.signWrote = true
		case p.sign == '-':
			p.out = append(p.out, '-')
			p.signWrote = true
		}
	}
	switch {
	case p.numCurr < p.outPreSpaces && (d.zeroStart > p.numCurr || !d.is(nfZero)):
		if !d.is(nfFillMode) {
			p.out = append(p.out, ' ')
		}
	case d.is(nfZero) && p.numCurr < p.outPreSpaces && d.zeroStart <= p.numCurr:
		p.out = append(p.out, '0')
		p.numIn = true
	default:
		if p.at(p.np) == '.' {
			if !p.lastRelevantIs('.') || d.is(nfFillMode) {
				p.out = append(p.out, '.')
			}
		} else {
			switch {
			case p.lastRelevant >= 0 && p.np > p.lastRelevant && id != nk0:
			case p.predecSpace():
				if !d.is(nfFillMode) {
					p.out = append(p.out, ' ')
				} else if p.lastRelevantIs('.') {
					p.out = append(p.out, '0')
				}
			default:
				p.out = append(p.out, p.at(p.np))
				p.numIn = true
			}
		}
		if p.at(p.np) != 0 {
			p.np++
		}
	}
	end := p.numCount
	if p.outPreSpaces > 0 {
		end++
	}
	if d.is(nfDecimal) {
		end++
	}
	if p.lastRelevant >= 0 && p.lastRelevant == p.np {
		end = p.numCurr
	}
	if p.numCurr+1 == end {
		switch {
		case p.signWrote && d.is(nfBracket):
			if p.sign == '+' {
				p.out = append(p.out, ' ')
			} else {
				p.out = append(p.out, '>')
			}
		case d.is(nfLSign) && d.lsign == numLsignPost:
			p.out = append(p.out, p.sign)
		}
	}
	p.numCurr++
}

// lastRelevantDecnum is the index of the last non-zero digit after the
// point of num, or of the point itself; -1 without a point.
func lastRelevantDecnum(num []byte) int {
	dot := strings.IndexByte(string(num), '.')
	if dot < 0 {
		return -1
	}
	r := dot
	for i := dot + 1; i < len(num); i++ {
		if num[i] != '0' {
			r = i
		}
	}
	return r
}

// ordinalSuffix is st, nd, rd or th for the number's last digit (th for
// the teens).
func ordinalSuffix(num []byte, upper bool) string {
	s := "th"
	if n := len(num); n > 0 && !(n > 1 && num[n-2] == '1') {
		switch num[n-1] {
		case '1':
			s = "st"
		case '2':
			s = "nd"
		case '3':
			s = "rd"
		}
	}
	if upper {
		return strings.ToUpper(s)
	}
	return s
}

// intToRoman is number in roman numerals, or 15 '#' outside 1..3999.
func intToRoman(number int64) string {
	if number < 1 || number > 3999 {
		return strings.Repeat("#", 15)
	}
	ones := []string{"", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"}
	tens := []string{"", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"}
	hundreds := []string{"", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"}
	return strings.Repeat("M", int(number/1000)) + hundreds[number/100%10] + tens[number/10%10] + ones[number%10]
}

// numFromChar reads input under the picture (to_number) and returns the
// number's text (sign, digits, point) and the digits read after the point.
func numFromChar(nodes []numNode, desc numDesc, input string) (string, int, error) {
	d := &desc
	p := &numProc{d: d, number: []byte{' '}, np: 1, lastRelevant: -1, in: input}
	if d.zeroStart > 0 {
		d.zeroStart--
	}
	if d.is(nfEEEE) {
		return "", 0, sqlerr.New(sqlerr.FeatureNotSupported, `"EEEE" not supported for input`)
	}
	if d.is(nfRoman) {
		return "", 0, sqlerr.New(sqlerr.FeatureNotSupported, `"RN" not supported for input`)
	}
	for _, n := range nodes {
		if p.ip >= len(p.in) {
			break
		}
		if n.key == nkChar {
			// Each literal of the picture skips one input character,
			// whatever it is.
			_, w := utf8.DecodeRuneInString(p.in[p.ip:])
			p.ip += w
			continue
		}
		switch n.key {
		case nk9, nk0, nkDec, nkD:
			p.numpartFromChar(n.key)
		case nkComma, nkG:
			// A group separator is skipped only where the input has one.
			if d.is(nfFillMode) || p.in[p.ip] != ',' {
				continue
			}
		case nkL:
			p.eatNonData(1)
			continue
		case nkTH, nkth:
			if p.at(0) == '#' || d.is(nfDecimal) {
				continue
			}
			p.eatNonData(2)
			continue
		case nkMI, nkPL, nkSG:
			c := p.in[p.ip]
			if c == '-' && n.key != nkPL || c == '+' && n.key != nkMI {
				p.number[0] = c
			} else {
				p.eatNonData(1)
				continue
			}
		default:
			continue
		}
		p.ip++
	}
	num := p.number[:p.np]
	if p.np > 0 && num[p.np-1] == '.' {
		num = num[:p.np-1]
	}
	return string(num), p.readPost, nil
}

func (p *numProc) overload() bool    { return p.ip >= len(p.in) }
func (p *numProc) amount(s int) bool { return p.ip <= len(p.in)-s }

// eatNonData skips up to n input characters that are not part of a number.
func (p *numProc) eatNonData(n int) {
	for ; n > 0 && !p.overload(); n-- {
		if strings.IndexByte("0123456789.,+-", p.in[p.ip]) >= 0 {
			break
		}
		_, w := utf8.DecodeRuneInString(p.in[p.ip:])
		p.ip += w
	}
}

func (p *numProc) put(c byte) {
	p.number = append(p.number[:p.np], c)
	p.np++
}

func (p *numProc) numpartFromChar(id numKey) {
	d := p.d
	if p.overload() {
		return
	}
	if p.in[p.ip] == ' ' {
		p.ip++
	}
	if p.overload() {
		return
	}
	// A sign before the number.
	if p.number[0] == ' ' && (id == nk0 || id == nk9) && p.readPre+p.readPost == 0 {
		c := p.in[p.ip]
		if d.is(nfLSign) && d.lsign == numLsignPre {
			if c == '-' || c == '+' {
				p.ip++
				p.number[0] = c
			}
		} else if c == '-' || d.is(nfBracket) && c == '<' {
			p.number[0] = '-'
			p.ip++
		} else if c == '+' {
			p.number[0] = '+'
			p.ip++
		}
	}
	if p.overload() {
		return
	}
	isread := false
	c := p.in[p.ip]
	if c >= '0' && c <= '9' {
		if p.readDec && p.readPost == d.post {
			return
		}
		p.put(c)
		if p.readDec {
			p.readPost++
		} else {
			p.readPre++
		}
		isread = true
	} else if d.is(nfDecimal) && !p.readDec && c == '.' {
		p.put('.')
		p.readDec = true
		isread = true
	}
	if p.overload() {
		return
	}
	// A sign after the number: S right after the last digit read, or MI,
	// PL and SG where the picture cannot say exactly where (FM9.99MI).
	if p.number[0] == ' ' && p.readPre+p.readPost > 0 {
		if d.is(nfLSign) && isread && p.ip+1 < len(p.in) && !(p.in[p.ip+1] >= '0' && p.in[p.ip+1] <= '9') {
			if s := p.in[p.ip+1]; s == '-' || s == '+' {
				p.ip++
				p.number[0] = s
			}
		} else if !isread && !d.is(nfLSign) && (d.is(nfPlus) || d.is(nfMinus)) {
			if c == '-' || c == '+' {
				p.number[0] = c
			}
		}
	}
}
