// Package tui is rein's terminal UI, `rein chat` (DESIGN §12.6): a client of the host API, with
// the same semantics as the web chat. It owns the screen — a scrollback of the conversation, a
// panel for a call waiting for approval, a composer with history, a status line — and the keys;
// it owns nothing of the conversation.
//
// What it shows is a projection of the conversation's event stream: records in seq order (a
// resume replays them from the start, so a resumed conversation draws exactly as it did live) and
// the live material of the exchange in hand. Working is api.Working on the published state, plus
// this client's outbox, so Stop works from the moment a message is sent. Everything it does to a
// conversation goes through Host; mutations run one at a time, in the order the person asked for
// them, each with its own operation id.
//
// The model (Model) is a plain Bubble Tea model: tests drive it with messages and read its View,
// with no terminal.
package tui
