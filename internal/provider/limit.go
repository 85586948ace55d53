package provider

import (
	"regexp"
	"strconv"
)

// statedLimits are the ways providers and OpenAI-compatible servers state a context limit in a
// prompt-too-long refusal; the first group is the limit in tokens.
var statedLimits = []*regexp.Regexp{
	regexp.MustCompile(`\d+\s+tokens?\s*>\s*(\d+)\s*maximum`),                    // Anthropic: "prompt is too long: 213000 tokens > 200000 maximum"
	regexp.MustCompile(`(?i)maximum context length is\s+(\d+)\s+tokens`),         // OpenAI, vLLM, OpenRouter
	regexp.MustCompile(`(?i)available context size\s*\((\d+)\s+tokens?\)`),       // llama.cpp server
	regexp.MustCompile(`(?i)context (?:window|length|size) (?:of|is)\s+(\d+)\b`), // other servers
}

// StatedLimit reads the context limit, in tokens, that a prompt-too-long refusal states (e.g.
// "This model's maximum context length is 8192 tokens"), or 0 when it states none.
func StatedLimit(message string) int64 {
	for _, re := range statedLimits {
		if m := re.FindStringSubmatch(message); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}
