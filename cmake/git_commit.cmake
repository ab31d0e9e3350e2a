# Run at build time (cmake -P): writes OUTPUT with the source tree's commit, "-dirty" when tracked files
# differ from it, "unknown" outside a git checkout. The file is rewritten only when the text changes, so
# that a build after a commit relinks with the new commit and a build without one rebuilds nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
elseif(dirty)
  string(APPEND commit "-dirty")
endif()
set(text "// Written at build time by cmake/git_commit.cmake.\n#include \"core/version.hpp\"\n\nnamespace inferbench {\n\nconst std::string_view kGitCommit = \"${commit}\";\n\n}  // namespace inferbench\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
