// Package sim is the rein provider simulator (DESIGN §11.4): a real HTTP server that speaks the
// Anthropic Messages, OpenAI Chat Completions and OpenAI Responses streaming wire formats, so the
// real provider clients can be tested against it and a person can try rein with no key. It is
// labelled a simulator everywhere — its model is "sim-1", its ids contain "sim" — and it never
// pretends to be a model.
//
// # Endpoints
//
//	POST /v1/messages          Anthropic Messages, streamed (also under /anthropic)
//	POST /v1/chat/completions  OpenAI Chat Completions, streamed (also under /openai)
//	POST /v1/responses         OpenAI Responses, streamed (also under /openai)
//	GET  /v1/models            the simulator's models, in a shape both vendors' decoders read
//
// Every request body is first checked by that format's validator (anthropic.Validate,
// openai.ValidateChat, openai.ValidateResponses). A violation is answered with HTTP 400 and the
// provider's own error body, consumes no script step, and is kept in the request log
// (Server.Requests) for tests to inspect. The simulator only streams: a request without
// "stream": true is refused the same way.
//
// # Token estimate
//
// A request's input tokens are estimated as the byte length of its context fields — system,
// messages and tools for Anthropic; messages and tools for Chat; instructions, input and tools for
// Responses — divided by 4 and rounded up. The estimate is reported as the usage's input tokens,
// so a harness can measure context pressure, and is compared with a context limit: over the limit,
// the request is answered with the provider's real context error (Anthropic 400 "prompt is too
// long: N tokens > M maximum"; OpenAI 400 with code context_length_exceeded). Output tokens are
// the output's bytes divided by 4, rounded up.
//
// # Scripts
//
// A script is a JSON object with a list of steps; each request consumes the first unconsumed step
// that is meant for its conversation. A bare JSON array of steps is read as {"steps": [...]}.
//
//	{
//	  "strict": false,
//	  "steps": [
//	    {"text": "Let me look.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
//	    {"status": 429, "retry_after": "1", "retry_after_ms": 250, "should_retry": true},
//	    {"thinking": {"text": "The listing is short.", "signature": "c2lt"}, "text": "Two files.", "chunks": 3},
//	    {"text": "Half an ans", "error_event": {"after_deltas": 1}},
//	    {"text": "Cut short here", "cut": {"after_deltas": 2}},
//	    {"tool_calls": [{"name": "write_file", "arguments": {"path": "a", "content": "xxxx"}}], "max_tokens": true},
//	    {"tool_calls": [{"name": "bash", "arguments": "ls -la"}]},
//	    {"empty": true},
//	    {"context_limit": 1000, "text": "Fits."},
//	    {"conversation": "job-7", "text": "Only for job-7.", "delay_ms": 50}
//	  ]
//	}
//
// The fields of a step, all optional:
//
//   - conversation: the step is consumed only by requests of this conversation. A request's
//     conversation is its X-Sim-Conversation header, or else the text of its first user message.
//     Steps without it are consumed by any request, so parallel sessions can each have their own
//     steps while sharing the rest.
//   - thinking {text, signature}: a thinking block first. Anthropic streams thinking_delta and
//     signature_delta; Chat streams reasoning_content deltas (no signature); Responses streams a
//     reasoning item's summary and, when the request includes reasoning.encrypted_content,
//     carries the signature as its encrypted_content (with no signature, encrypted content the
//     simulator issues and verifies, as for its policy).
//   - text: assistant text, streamed in word-sized deltas or in "chunks" near-equal deltas.
//   - tool_calls [{id?, name, arguments}]: tool calls after the text. An arguments value that is a
//     JSON string is sent as its raw contents, so "ls -la" or "[1]" make the non-object-argument
//     fault; any other JSON value is sent as its compact text. Arguments stream in 8-byte deltas.
//     id overrides the minted call id ("" sends an empty id). A call with "input" (a string)
//     instead of arguments is free-form, a custom tool's: the Responses wire streams it as a
//     custom_tool_call (response.custom_tool_call_input deltas), the others as a function call
//     with the arguments {"input": text}, which is how rein records such a call. To play a
//     Claude model's text editor or an OpenAI model's apply_patch, name the tool:
//     {"name": "str_replace_based_edit_tool", "arguments": {"command": "view", "path": "a"}},
//     {"name": "apply_patch", "input": "*** Begin Patch\n…\n*** End Patch"}.
//   - max_tokens: stop for the token limit (Anthropic max_tokens, Chat length, Responses
//     incomplete). With tool calls, the last call's arguments are cut off half-way.
//   - empty: a reply with no content at all (also what a step with no content and no fault plays).
//   - status, retry_after, retry_after_ms, should_retry, error_type, error_code, message: answer
//     with this HTTP status (429, 529, 500, 503, ...) and the provider's error body instead of a
//     stream, with the retry-after, retry-after-ms and x-should-retry headers when given.
//     error_type and message replace the provider's error type and words; error_code replaces
//     OpenAI's code.
//   - error_event {after_deltas, type, message}: after that many content deltas, send the
//     provider's mid-stream error event (Anthropic "error", Chat a data chunk with an "error"
//     object, Responses "response.failed") and end the stream.
//   - cut {after_deltas, after_bytes, clean}: after that many content deltas (or that many bytes of
//     the stream, when after_bytes is set) stop without the terminating event: the connection is
//     aborted, or with clean the body ends normally at an event boundary.
//   - delay_ms: wait this long before each content delta (a slow stream). A cancelled request
//     ends the wait at once.
//   - context_limit: this request's context limit in tokens, on top of Options.ContextLimit.
//   - web_search {query, results [{url, title}], error?}: the provider's own web search, before the
//     text, where the request offered the search tool: Anthropic's server_tool_use (its input
//     streamed) and web_search_tool_result blocks, or a Responses web_search_call item. Chat has no
//     search; a request that did not offer it is played no search.
//
// When no step is left for a request, the simulator plays its policy, or with "strict" refuses the
// request with a 400 naming the exhausted script.
//
// # The policy
//
// With no script the simulator plays a small deterministic policy a person can watch. If the
// last user prompt asks for steps (it names a command in backticks, or says list, run, files, step,
// ls or show) and the request offers a bash (or shell) tool, it calls that tool — once per command
// in backticks, else once with "ls -la" ("git status --short" if the prompt mentions git) — and
// after the results arrive it summarises the last one's first lines and ends the turn. Otherwise it
// answers that it is the rein simulator and echoes the prompt. It makes at most
// Options.MaxToolRounds tool rounds per exchange (an exchange begins at the last user message that
// is not only tool results). When a request asks for reasoning (Anthropic thinking enabled, a Chat
// reasoning_effort or reasoning object, a Responses reasoning object), each reply begins with a
// short thinking block: signed on Anthropic, reasoning_content deltas on Chat, a reasoning item
// on Responses.
//
// # Reasoning sent back
//
// The encrypted content the simulator issues for a Responses reasoning item ("sim_enc_...") is
// bound to the item's id. A request that sends one back altered, or under another id, is refused
// as OpenAI refuses it: HTTP 400, code invalid_encrypted_content, "The encrypted content for item
// rs_... could not be verified." Encrypted content a script gave is taken as it is. Where a
// reasoning item may stand is the validator's rule (openai.ValidateResponses).
package sim
