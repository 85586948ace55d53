// Package console prints sessions for a person at a terminal, or a program at the end of a pipe:
// rein run's exchange as it happens (human lines, or one JSON object a line), rein show's context
// and survey, and rein sessions' list. It reads sessions and folded states and writes text; it
// decides nothing.
package console
