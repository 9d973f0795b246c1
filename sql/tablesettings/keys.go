package tablesettings

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// PARTITION_AT_KEYS: the value is a list of key prefixes, written either as
// single values, (10, 1000), each a prefix of the first key column only, or
// as tuples, ((10), (100, "abc")). Each prefix becomes a pivot (design.md
// §5): shard k holds the keys in [pivot_k, pivot_k+1), pivot 0 being the
// empty key (), so the table has one shard more than the list has prefixes.
//
//	PARTITION_AT_KEYS = ((10), (100, "abc"))   key (k Uint64, s Utf8)
//
//	  shard 0          shard 1              shard 2
//	[()  .. (10))  [(10) .. (100, "abc"))  [(100, "abc") .. <Max>)
//
// Prefixes must strictly ascend in the shard map's order (CompareKeys:
// NULL first, a prefix before the longer keys it starts).

const keysHint = `PARTITION_AT_KEYS value should be a list of keys. Example1: (10, 1000)  Example2: ((10), (1000, "abc"))`

// boundaries parses and checks a PARTITION_AT_KEYS value.
func boundaries(v parser.Value, t TableInfo) ([][]types.Value, error) {
	shape := errorf(codeSyntax, v.Pos, "%s", keysHint)
	if v.Kind != parser.ValueTuple || len(v.Items) == 0 {
		return nil, shape
	}
	tuples := 0
	for _, it := range v.Items {
		if it.Kind == parser.ValueTuple {
			tuples++
		}
	}
	var bounds []parser.Value
	switch tuples {
	case 0:
		// (10, 1000): each value is a one-column prefix.
		for _, it := range v.Items {
			bounds = append(bounds, parser.Value{Kind: parser.ValueTuple, Pos: it.Pos, Text: it.Text,
				Items: []parser.Value{it}})
		}
	case len(v.Items):
		bounds = v.Items
	default:
		return nil, shape
	}
	if len(bounds)+1 > MaxInitialPartitions {
		return nil, withHint(errorf(codeValue, v.Pos, "Invalid partition count specified: %d", len(bounds)+1),
			"A table is created with at most %d partitions.", MaxInitialPartitions)
	}
	keys := make([][]types.Value, 0, len(bounds))
	for i, b := range bounds {
		if len(b.Items) == 0 {
			return nil, withHint(errorf(codeSyntax, b.Pos, "Empty key in partition at keys"), "%s", keysHint)
		}
		if len(b.Items) > len(t.KeyColumns) {
			return nil, errorf(codeTable, b.Pos, "Partition at keys has %d key values while there are only %d key columns",
				len(b.Items), len(t.KeyColumns))
		}
		key := make([]types.Value, len(b.Items))
		for j, it := range b.Items {
			kv, err := keyValue(it, t.Columns[t.KeyColumns[j]])
			if err != nil {
				return nil, err
			}
			key[j] = kv
		}
		if i > 0 && CompareKeys(keys[i-1], key) >= 0 {
			return nil, withDetail(errorf(codeTable, b.Pos, "Partition ranges are not sorted at index %d", i),
				"Boundary %s does not sort after the boundary before it, %s; boundaries must strictly ascend.",
				FormatKey(key), FormatKey(keys[i-1]))
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// keyValue converts one literal of a boundary to the key column's type.
// Literals convert only within their kind, as YQL's literals do: numbers to
// numeric columns, strings to String and Utf8, typed literals such as
// Date("2024-01-01") to their own family (integers to any integer type
// that holds them), NULL to any column, TRUE and FALSE to Bool.
func keyValue(v parser.Value, col ColumnInfo) (types.Value, error) {
	fail := func(content string, cause error) error {
		e := errorf(codeTable, v.Pos, "Failed to convert value %s to a corresponding key column type",
			quoteString(content))
		detail := "Key column " + col.Name + " has type " + col.Type.String() + "."
		if cause != nil {
			detail += " " + upperFirst(sqlerr.As(cause).Message) + "."
		}
		e.Detail = detail
		return e
	}
	f := col.Type.Family
	switch v.Kind {
	case parser.ValueIdent:
		switch strings.ToUpper(v.Str) {
		case "NULL":
			return types.NullValue, nil
		case "TRUE", "FALSE":
			if f != types.Bool {
				return types.Value{}, fail(v.Str, nil)
			}
			return types.NewBool(strings.EqualFold(v.Str, "true")), nil
		}
		return types.Value{}, withHint(errorf(codeSyntax, v.Pos, "Identifier is not expected in partition at keys"),
			"Write keys as literals: numbers, \"strings\", typed literals such as Date(\"2024-01-01\"), NULL, TRUE, FALSE.")
	case parser.ValueNumber:
		switch {
		case f.IsInteger():
			b, ok := parseIntLiteral(v.Str)
			if !ok {
				return types.Value{}, fail(v.Str, nil)
			}
			lo, hi := types.IntRange(f)
			if b.Sign() < 0 && (f.IsUnsigned() || !b.IsInt64() || b.Int64() < lo) ||
				b.Sign() >= 0 && (!b.IsUint64() || b.Uint64() > hi) {
				return types.Value{}, fail(v.Str, errorf(codeValue, 0, "value out of range for type %s", col.Type))
			}
			if f.IsUnsigned() {
				return types.NewUint(f, b.Uint64()), nil
			}
			return types.NewInt(f, b.Int64()), nil
		case f == types.Decimal || f.IsFloat():
			x, err := types.ParseText(col.Type, v.Str)
			if err != nil {
				return types.Value{}, fail(v.Str, err)
			}
			return x, nil
		}
		return types.Value{}, fail(v.Str, nil)
	case parser.ValueString:
		if f != types.Utf8 && f != types.String {
			return types.Value{}, fail(v.Str, nil)
		}
		x, err := types.ParseText(col.Type, v.Str)
		if err != nil {
			return types.Value{}, fail(v.Str, err)
		}
		if f == types.String {
			// ParseText reads bytea escapes (\x...); a String literal's
			// bytes are taken as they are.
			x = types.NewString(v.Str)
		}
		return x, nil
	case parser.ValueTyped:
		if v.On != "" {
			return types.Value{}, errorf(codeSyntax, v.Pos, "%s", keysHint)
		}
		lt, err := types.ParseTypeName(v.Type)
		if err != nil {
			return types.Value{}, sqlerr.WithPosition(err, v.Pos)
		}
		lit, err := types.ParseText(lt, v.Str)
		if err != nil {
			return types.Value{}, fail(v.Str, err)
		}
		if lt.Family == types.String {
			lit = types.NewString(v.Str)
		}
		if lt.Family != f && !(lt.Family.IsInteger() && f.IsInteger()) {
			return types.Value{}, fail(v.Str, nil)
		}
		x, err := types.Cast(lit, col.Type)
		if err != nil {
			return types.Value{}, fail(v.Str, err)
		}
		return x, nil
	}
	return types.Value{}, errorf(codeSyntax, v.Pos, "%s", keysHint)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// FormatKey prints a key prefix in the tuple notation of design.md §6 with
// the YQL literals of Literal, as PARTITION_AT_KEYS takes it: (), (10),
// (100, "abc").
func FormatKey(key []types.Value) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range key {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Literal(v))
	}
	b.WriteByte(')')
	return b.String()
}

// KeyBoundaries converts the pivot list of ALTER TABLE ... RESHARD AT into
// strictly ascending key prefixes of the table, with the same checks and
// errors as PARTITION_AT_KEYS, except that the list may start with the
// empty key: YTsaurus's pivot keys always start with pivot 0, [] (its
// reshard takes and writes '[]' '[10;foo]' '[20]'), and sys.partitions
// lists () as the first shard's start key, so a list copied from either
// works. Pivot 0 is the start of the table whether written or not, so it
// adds nothing; the empty key anywhere else is refused, as in
// PARTITION_AT_KEYS. `RESHARD AT (())` leaves one shard.
func KeyBoundaries(v parser.Value, t TableInfo) ([][]types.Value, error) {
	if v.Kind != parser.ValueTuple || len(v.Items) == 0 {
		return boundaries(v, t)
	}
	for i, it := range v.Items {
		if i > 0 && it.Kind == parser.ValueTuple && len(it.Items) == 0 {
			return nil, withHint(errorf(codeSyntax, it.Pos, "Only the first pivot may be the empty key ()"),
				"The empty key is pivot 0, the start of the table; the other pivots must strictly ascend after it.")
		}
	}
	if first := v.Items[0]; first.Kind != parser.ValueTuple || len(first.Items) != 0 {
		return boundaries(v, t)
	}
	rest := v
	rest.Items = v.Items[1:]
	for _, it := range rest.Items {
		if it.Kind != parser.ValueTuple {
			// ((), 10): a key list mixing tuples and single values.
			return nil, errorf(codeSyntax, v.Pos, "%s", keysHint)
		}
	}
	if len(rest.Items) == 0 {
		return nil, nil
	}
	return boundaries(rest, t)
}
