# stamp_version.cmake: writes generated/emprism_version.hpp from version.hpp.in with the current git hash, on every
# build (run by the target emprism_version; configure_file rewrites the header only when its text changes, so an
# unchanged hash rebuilds nothing). "-dirty" marks a tree with uncommitted changes to tracked files.
# Inputs (-D): SOURCE_DIR, BINARY_DIR, PROJECT_VERSION, EMPRISM_BACKEND.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE EMPRISM_GIT_HASH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT EMPRISM_GIT_HASH)
  set(EMPRISM_GIT_HASH "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE dirty
                  ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND EMPRISM_GIT_HASH "-dirty")
  endif()
endif()
configure_file(${SOURCE_DIR}/cmake/version.hpp.in ${BINARY_DIR}/generated/emprism_version.hpp @ONLY)
