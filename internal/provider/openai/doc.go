// Package openai owns rein's two OpenAI wire formats: Chat Completions (which every
// OpenAI-compatible server speaks: OpenRouter, Ollama, vLLM, llama.cpp) and the Responses API.
// For each it provides an encoder from the neutral provider.Request to the exact request bytes, a
// validator returning the first rule OpenAI would refuse those bytes for (DESIGN §6), and a
// streaming client implementing provider.Model (Chat, Responses).
//
// The clients are written on net/http and provider's shared SSE decoder, not on the official
// openai-go SDK (DESIGN §11.1): rein must control and record the exact bytes it sends, validate
// them before sending, and own retries and error classification; the SDK re-serialises requests,
// retries on its own, and pulls in a large dependency tree. The SDK remains the reference for
// field names and event shapes. OpenAI has no API-version header; the wire shapes here are those
// of /v1/chat/completions and /v1/responses as documented, and the decoders accept unknown fields
// and event types so that additions to either API do not break a stream.
//
// Reasoning, and what is carried back:
//
//   - Responses. With a reasoning effort asked for (provider.Request.Effort, or a thinking budget
//     mapped to one), or for a model known to reason (ReasoningModel), a request carries
//     reasoning {effort, summary:"auto"} where an effort was asked, store:false, and include
//     ["reasoning.encrypted_content"]. Each reasoning item the stream returns becomes a thinking
//     part: its summary as Text (parts joined by a blank line), and, when it carries its
//     encrypted content, the item itself, byte for byte as received, as Data. The encoder sends
//     such an item back exactly as it came, where it stood: right before the message or function
//     call that followed it, which the API requires ("... was provided without its required
//     following item"); one that nothing follows is left out. With store:false the encrypted
//     content is all the API has of an item, so an item without it is never sent.
//   - Chat. OpenAI-compatible servers stream reasoning as delta.reasoning_content (DeepSeek,
//     vLLM), delta.reasoning or delta.reasoning_details (OpenRouter). It is kept as unsigned
//     thinking parts, for the record and for people, and is never sent back: DeepSeek refuses
//     reasoning_content in input and OpenAI's Chat endpoint has no field for it. OpenRouter
//     accepts reasoning_details back, but what it needs differs by upstream and a server not
//     known to want reasoning may refuse it, so rein sends none: a Chat model starts each request
//     from the visible conversation. Chat sends an effort as reasoning_effort, or, to OpenRouter
//     (Compat.Reasoning), as its reasoning object, which also takes a budget.
//
// A reply with only reasoning is empty to admission (it says nothing and calls nothing) and is
// nudged, whichever wire it came from. Thinking of other providers (Anthropic's signed thinking,
// redacted thinking) is never sent on either wire.
//
// What is deliberately not carried across:
//
//   - Multiple choices: only choice 0 of a Chat stream is read (rein never asks for n > 1).
//
// Usage is normalised to rein's convention, where Input excludes cache reads: OpenAI's
// prompt_tokens / input_tokens include cached_tokens, which are reported as CacheRead and
// subtracted from Input.
package openai
