package codex

// macOS has no subreaper: an orphan goes to launchd, and gone sees only what is still below.
func adoptOrphans() {}
func reapOrphans()  {}
