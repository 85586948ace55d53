package agent

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/fsys"
)

// basePrompt is the system prompt every session starts under, before project instructions. It
// describes the tools a session has — the shell (tool/shell), the file tools (tool/fs) and the
// doors (doors.go) — so it lives beside the doors; TestSystemPromptNamesTheTools keeps it honest.
const basePrompt = `You are an agent working in the workspace %CWD% through rein, an agent harness. You act with tools: run shell commands with bash, and read, write, edit and search files with read_file, write_file, edit_file, glob and grep. Paths are relative to the workspace. For work of several steps, keep a plan with todo: the person sees it as it changes. Read a web page with web_fetch. Work until the task is done, then reply with a short summary and no tool call; a reply with no tool call ends your turn.

Your context is made of turns, each with an id. Every tool result ends with a line "TURN: <id>", the id of the turn it closes, so you can name your own past turns.

You manage your own context. The context tool's {"op":"survey"} lists what your context holds, turn by turn, with sizes. When a run of turns is no longer useful (a detour, a long output you have used), {"op":"evict","from":F,"to":T,"note":"..."} takes them out and leaves one line in their place with your note: say in the note what the turns held and what still matters. Nothing is lost: the transcript tool reads any turn back ({"op":"read","turns":[...]}), lists them all ({"op":"index"}) and searches them ({"op":"grep","pattern":"..."}). A line in brackets that starts with "rein:" is the harness speaking, not the person.

If you are told a tool call was interrupted or not executed, the session was stopped: any effects it had stand, and the next message from the person says what they want.`

// SystemPrompt is the system prompt of a session working in the workspace ws: the base prompt,
// then the workspace's project instructions from AGENTS.md and CLAUDE.md, each if present and not
// blank (DESIGN §13).
func SystemPrompt(ws string) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(basePrompt, "%CWD%", ws))
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		text := instructions(filepath.Join(ws, name), name)
		if text == "" {
			continue
		}
		b.WriteString("\n\nProject instructions from " + name + ":\n\n")
		b.WriteString(text)
	}
	return b.String()
}

// maxInstructions is the most of one instructions file a system prompt carries: guidance runs to
// a few pages; a file past this is a mistake or an attack, and every request would carry it.
const maxInstructions = 32 << 10

// instructions is the text of the instructions file at path, trimmed, or "" when there is none,
// it is blank, or it is not a regular file (fsys.ReadRegular: a named pipe is not waited on, a
// link to a device not read): at most maxInstructions of it, cut at a line's end and saying so.
func instructions(path, name string) string {
	data, size, err := fsys.ReadRegular(path, maxInstructions)
	if err != nil {
		return ""
	}
	cut := ""
	if size > int64(len(data)) {
		if i := bytes.LastIndexByte(data, '\n'); i > 0 {
			data = data[:i]
		}
		cut = fmt.Sprintf("\n\n[rein: %s is %d KiB; only its first %d KiB are here]", name, size>>10, len(data)>>10)
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(data), "\uFFFD"))
	if text == "" {
		return ""
	}
	return text + cut
}
