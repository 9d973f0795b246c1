package expr

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// json_build_object and json_build_array build a json value from their
// arguments (SQLAlchemy's column reflection builds a column's identity
// options with json_build_object). Values become JSON as PostgreSQL's
// to_json makes them: numbers and booleans as themselves, json as it is,
// NULL as null, everything else as a string of its text form
// (timestamps in ISO 8601, with a T).

func init() {
	register(&funcDef{0, -1, buildJSONBuild}, "json_build_object", "json_build_array")
}

func buildJSONBuild(b *Builder, name string, args []Expr) (Expr, error) {
	object := name == "json_build_object"
	if object && len(args)%2 != 0 {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "argument list must have even number of elements")
		e.Hint = "The arguments of json_build_object() must consist of alternating keys and values."
		return nil, e
	}
	for i := range args {
		e, err := b.resolve(args[i], types.TypeUtf8)
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	return newFunc(name, types.T(types.Json), args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		var sb strings.Builder
		if !object {
			sb.WriteByte('[')
			for i, v := range a {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(jsonOf(v))
			}
			sb.WriteByte(']')
			return types.NewJson(sb.String()), nil
		}
		sb.WriteByte('{')
		for i := 0; i < len(a); i += 2 {
			if a[i].IsNull() {
				e := sqlerr.New(sqlerr.InvalidParameterValue, "argument %d cannot be null", i+1)
				e.Hint = "Object keys should be text."
				return types.Value{}, e
			}
			if i > 0 {
				sb.WriteString(", ")
			}
			key := a[i].Text()
			if a[i].Family() == types.Utf8 || a[i].Family() == types.String {
				key = a[i].Str()
			}
			sb.WriteString(jsonString(key))
			sb.WriteString(" : ")
			sb.WriteString(jsonOf(a[i+1]))
		}
		sb.WriteByte('}')
		return types.NewJson(sb.String()), nil
	}), nil
}

// jsonOf is PostgreSQL's to_json of one value, as text.
func jsonOf(v types.Value) string {
	switch f := v.Family(); {
	case f == types.Null:
		return "null"
	case f == types.Bool:
		if v.Bool() {
			return "true"
		}
		return "false"
	case f == types.Json:
		return v.Str()
	case f.IsInteger() || f == types.Decimal:
		return v.Text()
	case f.IsFloat():
		if x := v.AsFloat(); math.IsNaN(x) || math.IsInf(x, 0) {
			return jsonString(v.Text())
		}
		return v.Text()
	case f == types.Utf8 || f == types.String:
		return jsonString(v.Str())
	case f == types.Timestamp || f == types.Datetime || f == types.TimestampTZ:
		return jsonString(strings.Replace(v.Text(), " ", "T", 1))
	}
	return jsonString(v.Text())
}

// jsonString quotes s as a JSON string, escaping only what JSON requires
// (as PostgreSQL does; not <, > and &).
func jsonString(s string) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(sb.String(), "\n")
}
