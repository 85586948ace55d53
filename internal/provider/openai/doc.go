// Package openai owns rein's two OpenAI wire formats: Chat Completions (which every
// OpenAI-compatible server speaks: OpenRouter, Ollama, vLLM, llama.cpp) and the Responses API.
// For each it provides an encoder from the neutral provider.Request to the exact request bytes, a
// validator returning the first rule OpenAI would refuse those bytes for (DESIGN §6), and a
// streaming client implementing provider.Model.
//
// The clients are written on net/http and provider's shared SSE decoder, not on the official
// openai-go SDK (DESIGN §11.1): rein must control and record the exact bytes it sends, validate
// them before sending, and own retries and error classification; the SDK re-serialises requests,
// retries on its own, and pulls in a large dependency tree. The SDK remains the reference for
// field names and event shapes. OpenAI has no API-version header; the wire shapes here are those
// of /v1/chat/completions and /v1/responses as documented, and the decoders accept unknown fields
// and event types so that additions to either API do not break a stream.
//
// What is deliberately not carried across:
//
//   - Reasoning. Chat-compatible servers stream unsigned reasoning (delta.reasoning or
//     delta.reasoning_content); the Responses API streams reasoning summaries. Both are published
//     as ThinkingDelta events (Index -1: they belong to no part) and are not kept in the Reply.
//     They cannot be replayed to any other provider, and keeping them would make a reasoning-only
//     reply look non-empty to admission, which must instead see it empty and nudge. The encoders
//     drop thinking and redacted-thinking parts for the same reason. Requests use store:false and
//     do not ask for encrypted reasoning, so a Responses reasoning model starts each request
//     without its earlier reasoning items: always accepted, at some cost in continuity.
//   - Multiple choices: only choice 0 of a Chat stream is read (rein never asks for n > 1).
//
// Usage is normalised to rein's convention, where Input excludes cache reads: OpenAI's
// prompt_tokens / input_tokens include cached_tokens, which are reported as CacheRead and
// subtracted from Input.
package openai
