# SPDX-License-Identifier: Apache-2.0
# Which files are "ours" for the licence line, defined once: sourced by scripts/add-spdx.sh (which
# inserts the line) and scripts/check-license.sh (which fails on a file without it), so the two
# can never disagree about a file.
#
# Ours: every file git tracks or would track (untracked files not ignored, so a new file is
# checked before its first commit) whose kind has a comment syntax below. Not ours: the fuzz
# corpora (inputs, byte for byte), and the kinds left out on purpose: Markdown and man pages
# (documentation), JSON (no comments), linker version scripts, suppression and dictionary files,
# Maven poms (the pom's <licenses> says it) and ServiceLoader files.

SPDX_LINE_TEXT='SPDX-License-Identifier: Apache-2.0'

# Prints the comment that carries the line in file $1, or nothing when the file is not ours.
spdx_comment_for() {
  local path=$1 base=${1##*/}
  case "$path" in
    tests/fuzz/corpus/*) return 0 ;;
  esac
  case "$base" in
    *.cc | *.h | *.c | *.h.in | *.java | *.go) echo "// $SPDX_LINE_TEXT" ;;
    CMakeLists.txt | *.cmake | *.cmake.in | *.pc.in | *.sh | *.py | *.yaml | *.yml)
      echo "# $SPDX_LINE_TEXT" ;;
    *.*) ;;
    *)  # no extension: a script is ours when its first line is a shell or Python shebang
      if head -n 1 "$path" 2>/dev/null | grep -qE '^#!.*(sh|bash|python3?)$'; then
        echo "# $SPDX_LINE_TEXT"
      fi
      ;;
  esac
}

# Prints every candidate path (relative to the repository root, NUL-separated), ours or not.
spdx_candidates() {
  git ls-files -z --cached --others --exclude-standard
}
