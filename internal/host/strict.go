package host

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// unknownField returns the first field of the JSON object body, in the order it is written, that
// no field of the struct v points to takes, matching names as encoding/json does (case-folded). A
// decoder with DisallowUnknownFields refuses such a field with an error it gives no type to, so
// decode tells that refusal by the body, never by the error's words.
func unknownField(body []byte, v any) (string, bool) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return "", false
		}
		if !takes(t, key) {
			return key, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// takes reports whether the struct type t has a field encoding/json would decode key into.
func takes(t reflect.Type, key string) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		if strings.EqualFold(name, key) {
			return true
		}
	}
	return false
}
