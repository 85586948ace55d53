package main

import "github.com/reinhq/rein/internal/tool"

// rulesHelp is how permission rules match, for the help of the commands that take them.
const rulesHelp = `Permission rules (--allow, --deny, and the config file's allow and deny) name a
tool — bash, read_file, write_file, edit_file, glob, grep, todo, web_fetch, apply_patch,
str_replace_based_edit_tool, str_replace_editor, context, transcript or agents —
and may add a pattern: "bash(git push*)", "write_file(docs/*)", "context(evict)".
A name rein does not have is refused. A rule for read_file, write_file or
edit_file holds too for the tools that do their work in the tool set a model gets
(the text editor's view, create and str_replace; apply_patch's adds and updates).
In a pattern, * matches anything, ? one character. A bash pattern is matched against every simple command
of the parsed line (after ;, &&, |, inside $(...), sh -c '...' and eval), its
words unquoted, and against what wrappers run: env, sudo, xargs, nohup, time,
timeout, command, exec, find -exec, /usr/bin/git as git, git -C dir push as git
push. A line that cannot be read in full ($cmd push, an alias, eval "$x", source,
echo ... | sh) is refused by a deny rule whose first word appears anywhere in it,
and no pattern allows it, nor a line that writes to a file (but /dev/null). In
ask mode, a call runs unasked only if allow rules cover all of it.

Rules are a convenience that stops honest mistakes, not a security boundary: they
match what a line says, not what a script, a program or a git alias will do, and a
command built to evade them can. The boundary is the OS sandbox (--sandbox), and
beyond it the user rein runs as.`

// policyFrom judges a permission mode and its rules, and returns the policy they make.
func policyFrom(mode string, allow, deny []string) (tool.Policy, error) {
	m, err := tool.ParseMode(mode)
	if err != nil {
		return tool.Policy{}, err
	}
	pol := tool.Policy{Mode: m}
	for _, s := range allow {
		r, err := tool.ParseRule(s)
		if err != nil {
			return tool.Policy{}, err
		}
		pol.Allow = append(pol.Allow, r)
	}
	for _, s := range deny {
		r, err := tool.ParseRule(s)
		if err != nil {
			return tool.Policy{}, err
		}
		pol.Deny = append(pol.Deny, r)
	}
	return pol, nil
}

// allowHasEffect refuses --allow where it could change nothing, rather than accept it silently:
// in full mode every call runs unasked, and read-only mode is a promise no rule lifts. (Allow
// rules from the config file are left alone there: they serve the modes where they work.)
func allowHasEffect(f runFlags) error {
	if !f.set("allow") {
		return nil
	}
	switch tool.Mode(f.permission) {
	case tool.ModeFull:
		return exitf(exitUsage, "--allow has no effect in permission mode full, where every call runs unasked: drop it, or use it with --permission-mode ask or workspace")
	case tool.ModeReadOnly:
		return exitf(exitUsage, "--allow has no effect in permission mode read-only, which no rule lifts: use --permission-mode ask with --allow: what the rules cover runs unasked, and the rest is asked (rein run, with no one to ask, refuses it)")
	}
	return nil
}
