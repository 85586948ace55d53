// Package conformance is the shared conformance suite of provider.Model (STYLE rule 7): one table
// of scripted conversations, played by the simulator (provider/sim) in each wire format, that every
// client — Anthropic Messages, OpenAI Chat Completions (also in its compatibility shape) and OpenAI
// Responses — must encode into bytes its own validator passes, send, and turn into the same
// neutral provider.Reply, or the same error class. Where the
// providers themselves differ (reasoning is not kept in an OpenAI reply; a mid-stream error's own
// words), the table says so per format. The package has only tests.
package conformance
