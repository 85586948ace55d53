package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

const bashSchema = `{"type":"object","properties":{
	"command":{"type":"string","description":"what to run"},
	"timeout_ms":{"type":"integer","minimum":1,"maximum":600000},
	"description":{"type":"string"}},
	"required":["command"],"additionalProperties":false}`

const richSchema = `{"type":"object","properties":{
	"op":{"type":"string","enum":["survey","evict"]},
	"turns":{"type":"array","items":{"type":"integer"},"minItems":1},
	"flag":{"type":"boolean"},
	"ratio":{"type":"number"},
	"note":{"type":"string","maxLength":5},
	"opts":{"type":"object","properties":{"deep":{"type":"boolean"}},"required":["deep"],"additionalProperties":false}},
	"required":["op"]}`

func TestSchemaCheck(t *testing.T) {
	bash, err := CompileSchema(json.RawMessage(bashSchema))
	if err != nil {
		t.Fatal(err)
	}
	rich, err := CompileSchema(json.RawMessage(richSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		schema *Schema
		args   string
		want   string // "" for valid
	}{
		{"valid", bash, `{"command":"ls","timeout_ms":5000}`, ""},
		{"integral float is an integer", bash, `{"command":"ls","timeout_ms":5000.0}`, ""},
		{"null optional is absent", bash, `{"command":"ls","timeout_ms":null}`, ""},
		{"missing required", bash, `{"timeout_ms":5}`, `missing required argument "command"`},
		{"null required", bash, `{"command":null}`, `missing required argument "command"`},
		{"wrong type", bash, `{"command":["ls"]}`, `argument "command" must be a string, not an array`},
		{"string for integer", bash, `{"command":"ls","timeout_ms":"5000"}`, `argument "timeout_ms" must be an integer, not the string "5000"`},
		{"fraction for integer", bash, `{"command":"ls","timeout_ms":1.5}`, `argument "timeout_ms" must be an integer, not the number 1.5`},
		{"over the maximum", bash, `{"command":"ls","timeout_ms":900000}`, `argument "timeout_ms" must be at most 600000, not 900000`},
		{"under the minimum", bash, `{"command":"ls","timeout_ms":0}`, `argument "timeout_ms" must be at least 1, not 0`},
		{"unknown argument", bash, `{"command":"ls","cmd":"ls"}`, `unknown argument "cmd" (the arguments are command, timeout_ms, description)`},
		{"every problem at once", bash, `{"cmd":"ls","timeout_ms":true}`,
			`missing required argument "command"; unknown argument "cmd" (the arguments are command, timeout_ms, description); argument "timeout_ms" must be an integer, not the boolean true`},
		{"not an object", bash, `["ls"]`, `the arguments must be an object, not an array`},
		{"not JSON", bash, `{"command":`, `the arguments are not valid JSON: unexpected EOF`},
		{"trailing value", bash, `{"command":"ls"} {}`, `the arguments hold more than one JSON value`},
		{"trailing bracket", bash, `{"command":"ls"}]`, `the arguments hold more than one JSON value`},
		{"trailing blanks", bash, "{\"command\":\"ls\"} \n", ""},
		{"enum", rich, `{"op":"survey"}`, ""},
		{"not in enum", rich, `{"op":"delete"}`, `argument "op" must be one of "survey", "evict", not the string "delete"`},
		{"array items", rich, `{"op":"evict","turns":[1,"2",3.5]}`, `argument "turns[1]" must be an integer, not the string "2"; argument "turns[2]" must be an integer, not the number 3.5`},
		{"min items", rich, `{"op":"evict","turns":[]}`, `argument "turns" must have at least 1 items, not 0`},
		{"boolean", rich, `{"op":"survey","flag":"yes"}`, `argument "flag" must be a boolean (true or false), not the string "yes"`},
		{"number", rich, `{"op":"survey","ratio":0.5}`, ""},
		{"max length", rich, `{"op":"survey","note":"toolong"}`, `argument "note" must be at most 5 characters long, not 7`},
		{"nested object", rich, `{"op":"survey","opts":{"deeper":1}}`, `missing required argument "opts.deep"; unknown argument "opts.deeper" (the arguments are deep)`},
		{"open object allows extras", rich, `{"op":"survey","extra":1}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.schema.Check(json.RawMessage(tt.args))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Check(%s)\n got %q\nwant %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestCompileSchemaRefuses(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}`, `schema at a: pattern: keyword "pattern" is not supported`},
		{`{"type":"object","oneOf":[]}`, `schema: oneOf: keyword "oneOf" is not supported`},
		{`{"type":"null"}`, `type "null" is not supported`},
		{`{"properties":{}}`, `schema has no type`},
		{`{"type":"object","required":["a"]}`, `schema requires "a", which it does not define`},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, `additionalProperties must be a boolean`},
		{`[]`, `schema is not a JSON object`},
	}
	for _, tt := range tests {
		_, err := CompileSchema(json.RawMessage(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CompileSchema(%s) = %v, want an error containing %q", tt.schema, err, tt.want)
		}
	}
}

// FuzzSchemaCheck feeds arbitrary argument bytes to the checker: it must never panic, and what it
// accepts must be a JSON object.
func FuzzSchemaCheck(f *testing.F) {
	rich, err := CompileSchema(json.RawMessage(richSchema))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"op":"evict","turns":[1,2]}`, `{"op":null}`, `[]`, `{"opts":{"deep":1e400}}`, `{"turns":[1.0e2]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if rich.Check(json.RawMessage(args)) == nil {
			var m map[string]any
			if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
				t.Errorf("accepted %q, which is not a JSON object", args)
			}
		}
	})
}
