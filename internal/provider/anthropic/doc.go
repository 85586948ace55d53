// Package anthropic is rein's adapter for the Anthropic Messages API: it encodes a neutral
// provider.Request into the exact request bytes (Encode), judges those bytes by the rules the API
// refuses requests for (Validate, DESIGN §6), and streams a reply over server-sent events into a
// neutral provider.Reply (Client).
//
// The API version is pinned deliberately: every request carries anthropic-version: 2023-06-01
// (Version), the version the request and event shapes here were written against. A newer version
// is adopted by changing the constant and the tests together, never by following a library.
//
// rein does not use Anthropic's SDK (DESIGN §11.1). rein must control and record the exact bytes it
// sends and validate them before they leave, and it owns retries itself (provider.Policy); the SDK
// hides the body, retries on its own, pulls in dozens of modules, and its newest releases force an
// API version that refuses sampling parameters. The client is written on net/http and the shared
// provider.SSEReader; the SDK remains the reference for field names and event shapes.
package anthropic
