#!/usr/bin/env bash
# screens.sh refreshes docs/screens/: screenshots of the web chat's main screens (chromium, at
# 1280 and 390 px) and captures of rein chat in a terminal (tmux capture-pane). The same tests
# check the screens when run without -update-screens.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./internal/web -run 'TestWebScreens' -count=1 -update-screens
go test ./internal/tui -run 'TestEndToEndMarkdownAndScrollback|TestEndToEndHistoryAndCompletion|TestEndToEndModelsAndUsage' -count=1 -update-screens
git status --short docs/screens
