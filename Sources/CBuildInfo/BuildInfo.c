// See include/CBuildInfo.h.
#include "CBuildInfo.h"

// The Makefile's builds write GitCommit.h (.ci/build-commit.sh); `make package` defines the macro with -Xcc,
// which wins (the header defines it only when undefined).
#if __has_include("GitCommit.h")
#include "GitCommit.h"
#endif

#ifndef TWOBITS_GIT_COMMIT
#define TWOBITS_GIT_COMMIT "unknown"
#endif

const char *twobits_git_commit(void) { return TWOBITS_GIT_COMMIT; }
