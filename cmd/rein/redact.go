package main

// redactText is applied to tool output where records are written.
var redactText = func(s string) string { return s }
