package shell

// Restart starts the shell afresh, as Anthropic's bash tool type asks with restart: the next
// command starts in the workspace root. No process outlives a call, so nothing else is left to
// end. It returns the directory the shell had been in.
func (t *Tool) Restart() (was string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	was, t.dir = t.dir, t.root
	return was
}

// Root is the workspace directory the shell starts in.
func (t *Tool) Root() string { return t.root }
