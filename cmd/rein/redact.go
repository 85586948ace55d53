package main

import "github.com/reinhq/rein/internal/redact"

// redactText is applied to tool output at the one place records are written.
var redactText = redact.Redact
