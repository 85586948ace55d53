package main

import (
	"io"
	"net/url"
	"os"

	"github.com/reinhq/rein/internal/redact"
)

// secrets holds every secret this process has: the provider keys and REIN_TOKEN taken from the
// environment at start, credentials in a proxy or base URL, and the host's bearer token once it
// is made. Their exact values, in every form redact.Secrets knows, never reach a record (it is
// every session's redactor), stdout or stderr (main wraps them), a log or the host's HTTP
// answers.
var secrets redact.Secrets

// redactText is the sessions' redactor: the secrets, then well-known key shapes.
var redactText = &secrets

// secretEnv names the variables whose values are secrets. The provider keys are also taken out of
// rein's environment, so no process rein starts inherits them; REIN_TOKEN is read by chat.
var secretEnv = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "REIN_TOKEN"}

// proxyEnv names the variables that may hold a proxy URL with credentials in it.
var proxyEnv = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}

// heldEnv is what takeSecrets took out of the environment; environ reads it.
var heldEnv = map[string]string{}

// takeSecrets adds the environment's secrets to secrets and takes them out of the environment.
// Taking them out keeps them from every process rein starts; it does not take them out of
// /proc/<pid>/environ, which shows the environment rein started with whatever rein does after:
// being non-dumpable (harden) is what keeps a tool from reading that.
func takeSecrets() {
	for _, name := range secretEnv {
		v, ok := os.LookupEnv(name)
		if !ok {
			continue
		}
		heldEnv[name] = v
		secrets.Add(name, v)
		os.Unsetenv(name)
	}
	for _, name := range proxyEnv {
		addURLSecrets(name, os.Getenv(name))
	}
}

// environ is os.Getenv, with the variables takeSecrets took out still readable.
func environ(name string) string {
	if v, ok := heldEnv[name]; ok {
		return v
	}
	return os.Getenv(name)
}

// addURLSecrets adds the credentials a URL carries (https://user:password@host) as secrets.
func addURLSecrets(name, raw string) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return
	}
	secrets.Add(name+" user", u.User.Username())
	if pw, ok := u.User.Password(); ok {
		secrets.Add(name+" password", pw)
	}
}

// redacting wraps w so that every secret this process holds is redacted from what is written.
func redacting(w io.Writer) io.Writer { return redact.Writer{W: w, Secrets: &secrets} }
