package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// message is one line of the app-server's JSON-RPC 2.0 stream, in whichever of its four shapes:
// a request (method and id), a notification (method, no id), a response (id and result) or an
// error response (id and error). Codex leaves out the "jsonrpc" member; rein accepts it either way
// and writes it on what it sends.
type message struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// The shapes of a message.
const (
	shapeRequest      = "request"
	shapeNotification = "notification"
	shapeResponse     = "response"
)

// shape says which of the shapes m has; decode has refused any other.
func (m message) shape() string {
	switch {
	case m.Method != "" && m.ID != nil:
		return shapeRequest
	case m.Method != "":
		return shapeNotification
	default:
		return shapeResponse
	}
}

// errNotMessage is the error decode wraps for a line that is not a JSON-RPC message.
var errNotMessage = errors.New("not a JSON-RPC message")

// decode reads one line of the app-server's output. It refuses, saying why, a line that is not a
// JSON object, an id that is neither a number nor a string, a response with neither or both of
// result and error, and a message with params but no method.
func decode(line []byte) (message, error) {
	var m message
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return m, fmt.Errorf("%w: %.80q is not a JSON object", errNotMessage, line)
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return message{}, fmt.Errorf("%w: %v", errNotMessage, err)
	}
	if m.ID != nil {
		if _, err := requestID(m.ID); err != nil {
			return message{}, fmt.Errorf("%w: %v", errNotMessage, err)
		}
	}
	switch m.shape() {
	case shapeRequest, shapeNotification:
		if m.Result != nil || m.Error != nil {
			return message{}, fmt.Errorf("%w: %q has a result or an error", errNotMessage, m.Method)
		}
	case shapeResponse:
		if m.ID == nil {
			return message{}, fmt.Errorf("%w: neither a method nor an id", errNotMessage)
		}
		if m.Params != nil {
			return message{}, fmt.Errorf("%w: params without a method", errNotMessage)
		}
		if (m.Result == nil) == (m.Error == nil) {
			return message{}, fmt.Errorf("%w: a response needs exactly one of result and error", errNotMessage)
		}
	}
	return m, nil
}

// requestID reads a JSON-RPC id, a number or a string, as a key: numbers in their shortest
// decimal form, strings quoted, so 7 and "7" stay apart.
func requestID(raw json.RawMessage) (string, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("id %.40q: %v", raw, err)
	}
	switch v := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
		return "", fmt.Errorf("id %s is not an integer", v)
	case string:
		return strconv.Quote(v), nil
	}
	return "", fmt.Errorf("id %.40q is neither a number nor a string", raw)
}

// encode writes m as one line, with the "jsonrpc" member.
func encode(m message) []byte {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil { // only a RawMessage that is not JSON can fail, and rein builds those itself
		panic(fmt.Sprintf("codex: encode %s: %v", m.Method, err))
	}
	return append(b, '\n')
}

// request builds a request of rein's.
func request(id int64, method string, params any) message {
	return message{ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: mustJSON(params)}
}

// notification builds a notification of rein's.
func notification(method string) message { return message{Method: method} }

// reply answers the server's request id with result.
func reply(id json.RawMessage, result any) message {
	return message{ID: id, Result: mustJSON(result)}
}

// refuse answers the server's request id with an error.
func refuse(id json.RawMessage, code int64, why string) message {
	return message{ID: id, Error: &rpcError{Code: code, Message: why}}
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("codex: marshal %T: %v", v, err))
	}
	return b
}
