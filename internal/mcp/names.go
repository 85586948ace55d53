package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxName is the longest tool name every provider takes (^[a-zA-Z0-9_-]{1,64}$).
const maxName = 64

// ToolName is the name a server's tool has in a session: mcp__<server>__<tool>. When that breaks
// the providers' rule — a byte outside [a-zA-Z0-9_-], or more than 64 bytes — each such byte
// becomes _, the name is cut to fit, and a suffix hashed from the whole original name keeps two
// such names apart.
func ToolName(server, tool string) string {
	full := "mcp__" + server + "__" + tool
	clean := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, full)
	if clean == full && len(clean) <= maxName {
		return clean
	}
	sum := sha256.Sum256([]byte(full))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	if len(clean)+len(suffix) > maxName {
		clean = clean[:maxName-len(suffix)]
	}
	return clean + suffix
}
