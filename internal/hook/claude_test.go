package hook

import (
	"strings"
	"testing"
)

func TestImportClaude(t *testing.T) {
	settings := `{"hooks":{
		"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh","timeout":30}]},
		              {"matcher":"Edit|Write|MultiEdit","hooks":[{"type":"command","command":"./fmt.sh"}]},
		              {"matcher":"mcp__.*","hooks":[{"type":"command","command":"x"}]},
		              {"matcher":"WebFetch","hooks":[{"type":"command","command":"y"}]}],
		"PostToolUse":[{"matcher":"","hooks":[{"type":"command","command":"./after.sh","timeout":99999}]}],
		"Notification":[{"hooks":[{"type":"command","command":"notify-send hi"}]}],
		"UserPromptSubmit":[{"hooks":[{"type":"prompt","command":""}]}],
		"Stop":[{"hooks":[{"type":"command","command":"./check.sh"}]}]}}`
	c, skipped, err := ImportClaude([]byte(settings))
	if err != nil {
		t.Fatal(err)
	}
	got := func(specs []Spec) string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Match+"="+s.Command)
		}
		return strings.Join(out, " ")
	}
	if g := got(c.PreTool); g != "bash=./guard.sh edit_file=./fmt.sh write_file=./fmt.sh" {
		t.Errorf("pre_tool %s", g)
	}
	if g := got(c.PostTool); g != "=./after.sh" || c.PostTool[0].TimeoutSec != 600 {
		t.Errorf("post_tool %s %+v", g, c.PostTool)
	}
	if g := got(c.Stop); g != "=./check.sh" || len(c.Prompt) != 0 {
		t.Errorf("stop %s, prompt %+v", g, c.Prompt)
	}
	want := []string{"Notification: rein has no such event", `"mcp__.*": a regular expression`, `"WebFetch": rein has no tool like WebFetch`, `UserPromptSubmit: a hook of type "prompt"`}
	all := strings.Join(skipped, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("skipped does not say %q:\n%s", w, all)
		}
	}
	if _, err := Compile(c, "imported"); err != nil {
		t.Errorf("the import does not compile: %v", err)
	}
	if _, _, err := ImportClaude([]byte(`{"permissions":{}}`)); err == nil || !strings.Contains(err.Error(), `no "hooks"`) {
		t.Errorf("settings without hooks: %v", err)
	}
}
