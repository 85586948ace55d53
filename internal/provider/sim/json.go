package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
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
		return appendString(b, v), nil
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
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, o[i+1]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does with HTML escaping off:
// '"', '\\' and control characters escaped (\b, \f, \n, \r, \t by name, the rest as \u00XX),
// invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
