package codex

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Known lists the Codex release series (major.minor) whose app-server protocol rein speaks: the
// methods, fields and behaviour this package was written and tested against. A series is added
// here only after schema_test.go and the real-CLI tests pass with it.
var Known = []string{"0.169"}

// Pin is the release rein's docs and CI install.
const Pin = "0.169.0"

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)(?:-[0-9A-Za-z.-]+)?`)

// parseVersion finds the version in what `codex --version` prints ("codex-cli 0.169.0") or in
// the user agent initialize answers ("rein/0.169.0 (Debian 12; x86_64) ...").
func parseVersion(s string) (string, error) {
	v := versionRE.FindString(s)
	if v == "" {
		return "", fmt.Errorf("no version in %.80q", strings.TrimSpace(s))
	}
	return v, nil
}

// known refuses, saying why and what to install, a version whose protocol rein does not know.
func known(version string) error {
	m := versionRE.FindStringSubmatch(version)
	if m != nil && slices.Contains(Known, m[1]+"."+m[2]) {
		return nil
	}
	return fmt.Errorf("codex %s speaks an app-server protocol rein does not know (rein knows the %s.x releases); "+
		"install one, e.g. npm install -g @openai/codex@%s, or point rein at one", version, strings.Join(Known, ".x, "), Pin)
}
