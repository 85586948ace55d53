package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// Schema is a compiled JSON Schema of the small subset rein's tools use. It is hand-written rather
// than taken from a general JSON Schema library because the subset is tiny, its error messages are
// written for a model that must correct its call, and a keyword outside the subset is refused when
// the schema is compiled instead of being silently not checked.
//
// The subset: "type" (one of object, string, integer, number, boolean, array), "properties",
// "required", "additionalProperties" (false, or absent meaning allowed), "items", "enum" (of
// strings or numbers), "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", and
// the annotations "description", "title", "default" and "examples", which are not checked.
//
// An optional property given as null is treated as absent: models often spell "not given" that
// way, and refusing it teaches them nothing.
type Schema struct {
	typ        string
	properties map[string]*Schema
	order      []string // property names in the order the schema lists them
	required   []string
	closed     bool // additionalProperties: false
	items      *Schema
	enum       []json.RawMessage
	minimum    *float64
	maximum    *float64
	minLen     *int
	maxLen     *int
}

var annotations = map[string]bool{"description": true, "title": true, "default": true, "examples": true, "$schema": true}

// CompileSchema compiles raw into a Schema, or reports the first keyword or value outside the
// subset it checks.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	return compile(raw, "")
}

func compile(raw json.RawMessage, at string) (*Schema, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("schema%s is not a JSON object: %w", where(at), err)
	}
	// Keys in a sorted order so that the first error reported is always the same one.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := &Schema{}
	for _, k := range keys {
		v := obj[k]
		var err error
		switch k {
		case "type":
			err = json.Unmarshal(v, &s.typ)
			if err == nil && !slices.Contains([]string{"object", "string", "integer", "number", "boolean", "array"}, s.typ) {
				err = fmt.Errorf("type %q is not supported", s.typ)
			}
		case "properties":
			var props map[string]json.RawMessage
			if err = json.Unmarshal(v, &props); err != nil {
				break
			}
			s.properties = make(map[string]*Schema, len(props))
			for name, p := range props {
				if s.properties[name], err = compile(p, at+"."+name); err != nil {
					return nil, err
				}
			}
			s.order, err = objectKeys(v)
		case "required":
			err = json.Unmarshal(v, &s.required)
		case "additionalProperties":
			var b bool
			if err = json.Unmarshal(v, &b); err != nil {
				err = errors.New("additionalProperties must be a boolean")
			}
			s.closed = !b
		case "items":
			s.items, err = compile(v, at+"[]")
		case "enum":
			err = json.Unmarshal(v, &s.enum)
		case "minimum":
			err = unmarshalTo(v, &s.minimum)
		case "maximum":
			err = unmarshalTo(v, &s.maximum)
		case "minItems", "minLength":
			err = unmarshalTo(v, &s.minLen)
		case "maxItems", "maxLength":
			err = unmarshalTo(v, &s.maxLen)
		default:
			if !annotations[k] {
				err = fmt.Errorf("keyword %q is not supported by rein's schema checker", k)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("schema%s: %s: %w", where(at), k, err)
		}
	}
	if s.typ == "" {
		return nil, fmt.Errorf("schema%s has no type", where(at))
	}
	for _, r := range s.required {
		if _, ok := s.properties[r]; !ok {
			return nil, fmt.Errorf("schema%s requires %q, which it does not define", where(at), r)
		}
	}
	return s, nil
}

func unmarshalTo[T any](v json.RawMessage, p **T) error {
	var x T
	if err := json.Unmarshal(v, &x); err != nil {
		return err
	}
	*p = &x
	return nil
}

// objectKeys lists the keys of a JSON object in the order they appear.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func where(at string) string {
	if at == "" {
		return ""
	}
	return " at " + strings.TrimPrefix(at, ".")
}

// Check validates args against the schema. The error names every offending argument, in words a
// model can act on; it is nil when args conform.
func (s *Schema) Check(args json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("the arguments hold more than one JSON value")
	}
	var probs []string
	s.check(v, "", &probs)
	if len(probs) == 0 {
		return nil
	}
	return &ArgError{Problems: probs}
}

// ArgError lists what is wrong with a call's arguments, one problem per entry.
type ArgError struct {
	Problems []string
}

func (e *ArgError) Error() string { return strings.Join(e.Problems, "; ") }

func (s *Schema) check(v any, at string, probs *[]string) {
	name := "the arguments"
	if at != "" {
		name = fmt.Sprintf("argument %q", at)
	}
	bad := func(format string, a ...any) {
		*probs = append(*probs, name+" "+fmt.Sprintf(format, a...))
	}
	if !s.hasType(v) {
		bad("must be %s, not %s", article(s.typ), describe(v))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		s.checkObject(x, at, probs)
	case []any:
		if s.minLen != nil && len(x) < *s.minLen {
			bad("must have at least %d items, not %d", *s.minLen, len(x))
		}
		if s.maxLen != nil && len(x) > *s.maxLen {
			bad("must have at most %d items, not %d", *s.maxLen, len(x))
		}
		if s.items != nil {
			for i, item := range x {
				s.items.check(item, fmt.Sprintf("%s[%d]", at, i), probs)
			}
		}
	case string:
		n := len([]rune(x))
		if s.minLen != nil && n < *s.minLen {
			bad("must be at least %d characters long", *s.minLen)
		}
		if s.maxLen != nil && n > *s.maxLen {
			bad("must be at most %d characters long, not %d", *s.maxLen, n)
		}
	case json.Number:
		f, _ := x.Float64()
		if s.minimum != nil && f < *s.minimum {
			bad("must be at least %v, not %s", *s.minimum, x)
		}
		if s.maximum != nil && f > *s.maximum {
			bad("must be at most %v, not %s", *s.maximum, x)
		}
	}
	if len(s.enum) > 0 && !s.inEnum(v) {
		allowed := make([]string, len(s.enum))
		for i, e := range s.enum {
			allowed[i] = string(e)
		}
		bad("must be one of %s, not %s", strings.Join(allowed, ", "), describe(v))
	}
}

func (s *Schema) checkObject(x map[string]any, at string, probs *[]string) {
	prefix := ""
	if at != "" {
		prefix = at + "."
	}
	for _, r := range s.required {
		if val, ok := x[r]; !ok || val == nil {
			*probs = append(*probs, fmt.Sprintf("missing required argument %q", prefix+r))
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := x[k]
		p, ok := s.properties[k]
		switch {
		case !ok && s.closed:
			*probs = append(*probs, fmt.Sprintf("unknown argument %q (the arguments are %s)", prefix+k, strings.Join(s.order, ", ")))
		case !ok:
		case val == nil:
			// null for an optional argument means absent; a required one was reported above.
		default:
			p.check(val, prefix+k, probs)
		}
	}
}

func (s *Schema) hasType(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return s.typ == "object"
	case []any:
		return s.typ == "array"
	case string:
		return s.typ == "string"
	case bool:
		return s.typ == "boolean"
	case json.Number:
		if s.typ == "number" {
			return true
		}
		if s.typ != "integer" {
			return false
		}
		f, err := x.Float64()
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	return false
}

func (s *Schema) inEnum(v any) bool {
	for _, e := range s.enum {
		var want any
		dec := json.NewDecoder(bytes.NewReader(e))
		dec.UseNumber()
		if dec.Decode(&want) == nil && want == v {
			return true
		}
	}
	return false
}

func article(typ string) string {
	switch typ {
	case "object", "integer", "array":
		return "an " + typ
	case "boolean":
		return "a boolean (true or false)"
	}
	return "a " + typ
}

// describe names a decoded JSON value for an error message, showing short values in full.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case json.Number:
		return "the number " + x.String()
	case string:
		if len(x) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", x)
	}
	return fmt.Sprintf("%T", v)
}
