package tui

// meter is the Context meter of the status line: the tokens the context holds.
//
// Two measures exist. The provider's usage of the last request is exact, but only for the context
// as it was sent. The survey's bytes/4 is an estimate of the context as it is now, but it leaves
// out what the provider counts beyond the messages (tool definitions, framing), so alone it reads
// far lower than the usage: after an eviction the meter used to fall from the usage (2.1k) to the
// bare estimate (479) and jump back with the next usage (2.2k). The meter instead learns that
// overhead — the usage minus the estimate of the same context — and after an edit shows the
// estimate plus the overhead, so it moves by what the edit removed and no more.
type meter struct {
	used        int64 // tokens, exact or estimated
	exact       bool  // used is the provider's usage of the context as it is
	overhead    int64 // usage minus estimate, learned from a survey of the context a usage measured
	calibrating bool  // a usage arrived and no survey of that context has been read yet
}

// usage takes the provider's count of the last request (its input, cached or not, and output).
func (c *meter) usage(tokens int64) {
	c.used, c.exact, c.calibrating = tokens, true, true
}

// changed says the context changed under the usage (an eviction, a rewind, a clear): the next
// survey measures it, and the usage no longer calibrates against it.
func (c *meter) changed() {
	c.exact, c.calibrating = false, false
}

// survey takes an estimate of the context as it is now, in tokens.
func (c *meter) survey(estimate int64) {
	switch {
	case c.calibrating:
		c.overhead = max(0, c.used-estimate)
		c.calibrating = false
	case !c.exact:
		c.used = estimate + c.overhead
	}
}

// edited takes the estimate of the context after a person's edit.
func (c *meter) edited(estimate int64) {
	c.changed()
	c.used = estimate + c.overhead
}

// reset forgets everything: another conversation, or a cleared one.
func (c *meter) reset() { *c = meter{} }
