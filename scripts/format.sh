#!/usr/bin/env bash
# clang-format (.clang-format: Google, 100 columns) over the project's own C++ files.
#   scripts/format.sh           rewrite them in place
#   scripts/format.sh --check   change nothing; list the files that are not formatted, exit 1 if any
# CI runs the check (scripts/test.sh). clang-format comes from Debian (scripts/setup.sh).
# Files: tracked ones and new ones not yet added (not those .gitignore excludes), so a new file is
# formatted before its first commit.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' | sort -u)
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "format: ${#bad[@]} of ${#files[@]} files are not clang-formatted (run scripts/format.sh):"
    printf '  %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format: ${#files[@]} files clang-formatted"
  exit 0
fi
clang-format -i "${files[@]}"
echo "format: ${#files[@]} files formatted"
