package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// chatStream returns a Chat stream of n text chunks and a tool call in n argument pieces, shaped
// like OpenAI's own (every chunk repeats id, model and the rest).
func chatStream(n int) []byte {
	var b bytes.Buffer
	head := `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_1",`
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word %d and some more \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head, i)
	}
	fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"write\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n", head)
	fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"text\\\":\\\"\"}}]},\"finish_reason\":null}]}\n\n", head)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"line %d\\\\n\"}}]},\"finish_reason\":null}]}\n\n", head, i)
	}
	fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"}\"}}]},\"finish_reason\":null}]}\n\n", head)
	fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", head)
	fmt.Fprintf(&b, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":200}}\n\ndata: [DONE]\n\n", head)
	return b.Bytes()
}

// responsesStream returns a Responses stream of the same content.
func responsesStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_b\",\"status\":\"in_progress\",\"model\":\"gpt-4.1\"}}\n\n")
	seq := 1
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,\"item_id\":\"msg_b\",\"output_index\":0,\"content_index\":0,\"delta\":\"word %d and some more \",\"logprobs\":[],\"obfuscation\":\"abc\"}\n\n", seq, i)
		seq++
	}
	fmt.Fprintf(&b, "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":%d,\"output_index\":1,\"item\":{\"id\":\"fc_b\",\"type\":\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\",\"call_id\":\"call_1\",\"name\":\"write\"}}\n\n", seq)
	for i := 0; i < n; i++ {
		seq++
		fmt.Fprintf(&b, "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":%d,\"item_id\":\"fc_b\",\"output_index\":1,\"delta\":\"line %d\\\\n\",\"obfuscation\":\"abc\"}\n\n", seq, i)
	}
	fmt.Fprintf(&b, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":%d,\"response\":{\"id\":\"resp_b\",\"status\":\"completed\",\"model\":\"gpt-4.1\",\"usage\":{\"input_tokens\":100,\"output_tokens\":200}}}\n\n", seq+1)
	return b.Bytes()
}

func benchDecode(b *testing.B, data []byte, newDec func(func(provider.Event)) streamDecoder) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_, _, err := decodeStream(bytes.NewReader(data), newDec)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeChat(b *testing.B)      { benchDecode(b, chatStream(2000), chatDec) }
func BenchmarkDecodeResponses(b *testing.B) { benchDecode(b, responsesStream(2000), respDec) }

// thousandMessages is a 1,000-message history: prompts, replies with tool calls, results.
func thousandMessages() provider.Request {
	req := conversation(1000)
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			p := &req.Messages[i].Parts[j]
			switch p.Type {
			case record.PartText, record.PartToolResult:
				p.Text += long
			case record.PartToolCall:
				p.Args = json.RawMessage(`{"cmd":"grep -rn \"func main\" ./cmd ./internal | head -50"}`)
			}
		}
	}
	return req
}

func benchEncode(b *testing.B, enc func(provider.Request) ([]byte, error)) {
	req := thousandMessages()
	body, _ := enc(req)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := enc(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeChat1000(b *testing.B)      { benchEncode(b, EncodeChat) }
func BenchmarkEncodeResponses1000(b *testing.B) { benchEncode(b, EncodeResponses) }

func benchValidate(b *testing.B, enc func(provider.Request) ([]byte, error), validate func([]byte) *provider.Violation) {
	body, _ := enc(thousandMessages())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if v := validate(body); v != nil {
			b.Fatal(v)
		}
	}
}

func BenchmarkValidateChat1000(b *testing.B) { benchValidate(b, EncodeChat, ValidateChat) }
func BenchmarkValidateResponses1000(b *testing.B) {
	benchValidate(b, EncodeResponses, ValidateResponses)
}
