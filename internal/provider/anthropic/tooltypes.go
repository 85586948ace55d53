package anthropic

// The client tool types Anthropic defines for Claude (its text editor and bash tools), and the
// name each must be offered under. The model was trained on them: it knows their input without a
// schema, and the application runs them (rein maps them onto its own file and shell tools).
//
//   - text_editor_20250728 (str_replace_based_edit_tool): Claude 4 models and later; commands
//     view, create, str_replace, insert (its text in insert_text); max_characters optional.
//   - text_editor_20250429 (str_replace_based_edit_tool): the first Claude 4 version.
//   - text_editor_20250124 (str_replace_editor): Claude Sonnet 3.7, with undo_edit.
//   - bash_20250124 (bash): Claude 4 models and Sonnet 3.7; input command, or restart.
const (
	TextEditorType = "text_editor_20250728"
	TextEditorName = "str_replace_based_edit_tool"
	BashType       = "bash_20250124"
	BashName       = "bash"
)

// ClientToolNames maps each client tool type rein knows to the name it must be offered under.
var ClientToolNames = map[string]string{
	"text_editor_20250728": "str_replace_based_edit_tool",
	"text_editor_20250429": "str_replace_based_edit_tool",
	"text_editor_20250124": "str_replace_editor",
	"bash_20250124":        "bash",
}
