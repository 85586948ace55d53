package tool

import (
	"context"
	"io"
)

// A running call's output as it is written, for the person watching. It is never what the model
// reads: the Result a tool returns stays the one truth, recorded and sent; what a tool writes to
// its live output is shown and forgotten. Whoever runs the call (the agent) decides how much of it
// is shown and how often; a tool only writes.

type liveKey struct{}

// WithLiveOutput returns a ctx under which a tool that can show its output as it comes writes it
// to w. w must not block for long: the tool writes from the goroutine that reads its output.
func WithLiveOutput(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, liveKey{}, w)
}

// LiveOutput is the writer WithLiveOutput put in ctx, or nil when no one is watching.
func LiveOutput(ctx context.Context) io.Writer {
	w, _ := ctx.Value(liveKey{}).(io.Writer)
	return w
}
