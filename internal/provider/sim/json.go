package sim

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/reinhq/rein/internal/provider"
)

// The simulator's replies are trees of obj, []any, strings, integers, booleans and nulls, encoded
// once per frame of every reply. appendJSON writes those by hand, byte for byte as encoding/json
// (HTML escaping off) writes them, with no reflection and one growing buffer; any other value is
// handed to encoding/json (encode), so a type it does not know costs time, never different bytes.

// appendJSON appends v's JSON to b.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return provider.AppendJSONString(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case obj:
		return v.appendJSON(b)
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case json.RawMessage:
		if v == nil {
			return append(b, "null"...), nil
		}
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, v); err == nil {
			return buf.Bytes(), nil
		}
	}
	e, err := encode(v)
	if err != nil {
		return nil, err
	}
	return append(b, e...), nil
}

func (o obj) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i := 0; i+1 < len(o); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		k, ok := o[i].(string)
		if !ok {
			return nil, errKey(o[i])
		}
		b = provider.AppendJSONString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, o[i+1]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
