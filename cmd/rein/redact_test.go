package main

import (
	"os"
	"testing"
)

const testSecret = "zq9-unit-test-secret-abc"

// The environment's secrets are held and taken out of the environment, still readable through
// environ; credentials in a proxy URL are held; short values are not.
func TestTakeSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testSecret)
	t.Setenv("OPENROUTER_API_KEY", "ollama")
	t.Setenv("HTTPS_PROXY", "http://proxyuser:proxy-password-123@proxy:3128")
	takeSecrets()
	if v, ok := os.LookupEnv("OPENAI_API_KEY"); ok {
		t.Errorf("OPENAI_API_KEY is still in the environment: %q", v)
	}
	if environ("OPENAI_API_KEY") != testSecret || environ("OPENROUTER_API_KEY") != "ollama" {
		t.Errorf("environ lost the keys")
	}
	got := secrets.Redact("a " + testSecret + " b ollama c proxy-password-123 d proxyuser")
	if want := "a [REDACTED:OPENAI_API_KEY] b ollama c [REDACTED:HTTPS_PROXY password] d [REDACTED:HTTPS_PROXY user]"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
