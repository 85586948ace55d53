#!/usr/bin/env bash
# Regenerates the session files `rein import` is tested on (internal/importer/testdata): real
# sessions written by the current Claude Code and Codex releases, each run against rein's simulator
# with a throwaway HOME, for each breakage import must repair — a kill mid-tool, a Stop mid-tool, a
# tool input that is not an object (and the API error the peer then writes into its transcript), a
# compaction — and a plain session.
#
# Needs node and npm (the CLIs are installed from npm into a temporary directory), jq, and Go.
# The files are sanitised as they are copied: the peers' own prompts (system prompts, developer
# instructions, request dumps) are replaced by a placeholder or dropped, so no third party's prompt
# is kept; what the simulator said and the tools' output stay as written.
#
#   bash scripts/import-fixtures.sh            # CLAUDE_VERSION / CODEX_VERSION override the pins
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/internal/importer/testdata"
claude_version=${CLAUDE_VERSION:-2.1.328}
codex_version=${CODEX_VERSION:-0.169.0}

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
# PEERS names a directory where the CLIs are installed already (npm install --prefix PEERS ...).
peers=${PEERS:-$work/npm}
if [ -z "${PEERS:-}" ]; then
  echo "== installing @anthropic-ai/claude-code@$claude_version and @openai/codex@$codex_version"
  npm install --prefix "$peers" --no-audit --no-fund --silent \
    "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version" >/dev/null
fi
claude="$peers/node_modules/.bin/claude"
codex="$peers/node_modules/.bin/codex"
go build -o "$work/rein" ./cmd/rein
port=18791

# sim starts the simulator on $port with the script $1, replacing any before it.
sim() {
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  "$work/rein" sim serve --addr "127.0.0.1:$port" --script "$1" >"$work/sim.log" 2>&1 &
  for _ in $(seq 100); do
    curl -s "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && return
    sleep 0.05
  done
  echo "the simulator did not start"; cat "$work/sim.log"; exit 1
}

# fresh makes a throwaway HOME and workspace for one run.
fresh() {
  rm -rf "$work/home" "$work/ws"
  mkdir -p "$work/home/.codex" "$work/ws"
  echo "hello" >"$work/ws/a.txt"
  cat >"$work/home/.codex/config.toml" <<EOF
model = "sim-1"
model_provider = "sim"
model_auto_compact_token_limit = ${COMPACT_AT:-1000000}
[model_providers.sim]
name = "sim"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
env_key = "SIM_KEY"
EOF
}

cc() { # claude with the throwaway HOME, against the simulator
  (cd "$work/ws" && HOME="$work/home" ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=sim-key \
    IS_SANDBOX=1 MAX_THINKING_TOKENS=${MAX_THINKING_TOKENS:-0} DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    "$claude" --model claude-sonnet-4-5 --permission-mode bypassPermissions --output-format json "$@")
}
cx() { # codex with the throwaway HOME, against the simulator
  (cd "$work/ws" && HOME="$work/home" CODEX_HOME="$work/home/.codex" SIM_KEY=sim-key \
    "$codex" exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "$@")
}
ccfile() { find "$work/home/.claude/projects" -name '*.jsonl' -not -path '*/subagents/*' | head -1; }
cxfile() { find "$work/home/.codex/sessions" -name 'rollout-*.jsonl' | head -1; }

# await waits until file pattern $1 exists and holds $2.
await() {
  for _ in $(seq 600); do
    f=$(eval "$1" 2>/dev/null || true)
    if [ -n "$f" ] && grep -q "$2" "$f" 2>/dev/null; then return; fi
    sleep 0.05
  done
  echo "timed out waiting for $2"; exit 1
}

# Claude Code: lines that carry its prompts or request dumps are dropped; the rest kept as written.
sanitize_claude() {
  jq -c 'select(.type != "api-request-blob" and .type != "api-request-shape" and .type != "api-request")
         | if .type == "attachment" then .attachment = {type: .attachment.type, removed: "from the fixture"} | del(.rendered) else . end
         | if .isCompactSummary == true then .message.content = ("[Claude Code'"'"'s compaction preamble removed from the fixture]\n" + (.message.content | split("\n") | map(select(startswith("The session so far"))) | join("\n"))) else . end
         | if .isMeta == true and (.message.content|type) == "string" then .message.content = "[a Claude Code caveat removed from the fixture]" else . end
         | if .type == "assistant" and (.message.content|type) == "array" then .message.content |= map(if .type == "text" and (.text|contains("<system-reminder>")) then .text = "[the simulator'"'"'s echo of a Claude Code reminder removed from the fixture]" else . end) else . end
         | if .type == "system" and (.content|type) == "string" and (.content|length) > 200 then .content = "[removed from the fixture]" else . end' \
    "$1" | sed "s#$work#/fixture#g" >"$2"
}
# Codex: developer messages (also in a compaction's replacement history), the instructions in
# session_meta and turn_context, world_state, and the preamble of its compaction summaries are
# Codex's prompts: replaced by a placeholder or dropped.
sanitize_codex() {
  jq -c 'def dev: if .role == "developer" then .content = [{"type":"input_text","text":"[developer instructions removed from the fixture]"}] else . end;
         def preamble: if type == "string" and startswith("Another language model") then "[Codex'"'"'s summary preamble removed from the fixture]\n" + (split("\n") | last) else . end;
         if .type == "response_item" then .payload |= dev
         elif .type == "compacted" then .payload.message |= preamble | .payload.replacement_history |= map(dev | if .content then .content |= map(.text |= preamble) else . end)
         elif .type == "session_meta" then .payload |= (del(.base_instructions) | del(.instructions))
         elif .type == "turn_context" then .payload |= (del(.base_instructions) | del(.user_instructions) | del(.developer_instructions))
         elif .type == "world_state" then empty
         else . end' "$1" | sed "s#$work#/fixture#g" >"$2"
}

mkdir -p "$out/claude" "$out/codex"
tool='{"name":"Bash","arguments":{"command":"ls","description":"list the files"}}'
slow='{"name":"Bash","arguments":{"command":"ls; sleep 60; ls","description":"wait"}}'
xtool='{"name":"exec_command","arguments":{"cmd":"ls"}}'
xslow='{"name":"exec_command","arguments":{"cmd":"sleep 60","yield_time_ms":120000}}'

echo "== claude: a plain session with a tool call"
fresh; echo "{\"steps\":[{\"text\":\"Let me look.\",\"tool_calls\":[$tool]},{\"text\":\"One file, a.txt.\"}]}" >"$work/s.json"; sim "$work/s.json"
cc -p "list the files" >/dev/null; sanitize_claude "$(ccfile)" "$out/claude/plain.jsonl"

echo "== claude: killed mid-tool"
fresh; echo "{\"steps\":[{\"tool_calls\":[$slow]}]}" >"$work/s.json"; sim "$work/s.json"
cc -p "wait a minute" >/dev/null 2>&1 & pid=$!
await ccfile '"tool_use"'; sleep 1; pkill -KILL -P $pid 2>/dev/null || true; kill -KILL $pid 2>/dev/null || true; pkill -KILL -f "$claude" || true; wait $pid 2>/dev/null || true
sanitize_claude "$(ccfile)" "$out/claude/killed.jsonl"

echo "== claude: stopped mid-tool (SIGINT)"
fresh; echo "{\"steps\":[{\"tool_calls\":[$slow]}]}" >"$work/s.json"; sim "$work/s.json"
cc -p "wait a minute" >/dev/null 2>&1 & pid=$!
await ccfile '"tool_use"'; sleep 1; pkill -INT -f "$claude" || true; wait $pid 2>/dev/null || true
sanitize_claude "$(ccfile)" "$out/claude/stopped.jsonl"

echo "== claude: a tool input that is not an object, then the API error it causes"
fresh; echo '{"steps":[{"tool_calls":[{"name":"Bash","arguments":"ls -la"}]},{"text":"Done."}]}' >"$work/s.json"; sim "$work/s.json"
cc -p "list the files" >/dev/null || true; sanitize_claude "$(ccfile)" "$out/claude/nonobject.jsonl"

echo "== claude: a provider error it writes into the transcript as an assistant line"
# With thinking on, Claude Code sends back a reply that lacks a thinking block; the simulator's
# validator refuses it as Anthropic does, and Claude Code records the error as an assistant line.
fresh; echo "{\"steps\":[{\"text\":\"Let me look.\",\"tool_calls\":[$tool]}]}" >"$work/s.json"; sim "$work/s.json"
MAX_THINKING_TOKENS=4000 cc -p "list the files" >/dev/null || true
sanitize_claude "$(ccfile)" "$out/claude/apierror.jsonl"

echo "== claude: compacted, then continued"
fresh; echo "{\"steps\":[{\"text\":\"Looking.\",\"tool_calls\":[$tool]},{\"text\":\"One file.\"},{\"text\":\"The session so far: the person asked for the files; there is one, a.txt.\"},{\"text\":\"Still one file.\"}]}" >"$work/s.json"; sim "$work/s.json"
id=$(cc -p "list the files" | jq -r .session_id)
cc -p --resume "$id" "/compact" >/dev/null || true
cc -p --resume "$id" "and now?" >/dev/null || true
sanitize_claude "$(ccfile)" "$out/claude/compacted.jsonl"

echo "== codex: a plain session with a tool call"
fresh; echo "{\"steps\":[{\"text\":\"Let me look.\",\"tool_calls\":[$xtool]},{\"text\":\"One file, a.txt.\"}]}" >"$work/s.json"; sim "$work/s.json"
cx "list the files" >/dev/null 2>&1; sanitize_codex "$(cxfile)" "$out/codex/plain.jsonl"

echo "== codex: killed mid-tool"
fresh; echo "{\"steps\":[{\"tool_calls\":[$xslow]}]}" >"$work/s.json"; sim "$work/s.json"
cx "wait a minute" >/dev/null 2>&1 & pid=$!
await cxfile '"function_call"'; sleep 1; pkill -KILL -f "codex" || true; wait $pid 2>/dev/null || true
sanitize_codex "$(cxfile)" "$out/codex/killed.jsonl"

echo "== codex: stopped mid-tool (SIGINT)"
fresh; echo "{\"steps\":[{\"tool_calls\":[$xslow]}]}" >"$work/s.json"; sim "$work/s.json"
cx "wait a minute" >/dev/null 2>&1 & pid=$!
await cxfile '"function_call"'; sleep 1; pkill -INT -f "codex" || true; wait $pid 2>/dev/null || true
sanitize_codex "$(cxfile)" "$out/codex/stopped.jsonl"

echo "== codex: a tool input that is not an object"
fresh; echo '{"steps":[{"tool_calls":[{"name":"exec_command","arguments":"ls -la"}]},{"text":"Done."}]}' >"$work/s.json"; sim "$work/s.json"
cx "list the files" >/dev/null 2>&1 || true; sanitize_codex "$(cxfile)" "$out/codex/nonobject.jsonl"

echo "== codex: compacted (automatically, at a low limit), then continued"
COMPACT_AT=2000 fresh; echo "{\"steps\":[{\"text\":\"Looking.\",\"tool_calls\":[$xtool]},{\"text\":\"One file.\"},{\"text\":\"Summary: the person asked for the files; there is one, a.txt.\"},{\"text\":\"Still one file.\"}]}" >"$work/s.json"; sim "$work/s.json"
cx "list the files" >/dev/null 2>&1 || true
id=$(jq -r 'select(.type=="session_meta") | .payload.id' "$(cxfile)")
cx resume "$id" "and now?" >/dev/null 2>&1 || true
sanitize_codex "$(cxfile)" "$out/codex/compacted.jsonl"

echo "== written:"
wc -l "$out"/claude/*.jsonl "$out"/codex/*.jsonl
