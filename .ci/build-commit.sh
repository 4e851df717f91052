#!/usr/bin/env bash
# Writes Sources/CBuildInfo/GitCommit.h, the commit `twobits --version` names, for the Makefile's builds:
# TWOBITS_GIT_COMMIT when set (a copy without .git, such as the mutation runner's), else this checkout's HEAD
# (with -dirty when Sources or Package.swift differ from it), else "unknown". A header of BuildInfo.c's own
# rather than a -Xcc define: a define reaches every module, so each new commit would rebuild them all, while
# the header recompiles one C file. Rewritten only when its text changes, so a build with nothing new stays
# a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."

commit=${TWOBITS_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
if [[ -z ${TWOBITS_GIT_COMMIT:-} && $commit != unknown ]] && ! git diff --quiet HEAD -- Sources Package.swift 2>/dev/null; then commit="$commit-dirty"; fi
# It becomes a C string literal: keep only what a commit name holds.
commit=${commit//[^A-Za-z0-9._+-]/}
[[ -n $commit ]] || commit=unknown

header=Sources/CBuildInfo/GitCommit.h
text="// Written by .ci/build-commit.sh; not in git.
#ifndef TWOBITS_GIT_COMMIT
#define TWOBITS_GIT_COMMIT \"$commit\"
#endif"
if [[ ! -f $header ]]; then
    printf '%s\n' "$text" > "$header"
    # A build made before the header existed does not know that BuildInfo.c includes it.
    touch Sources/CBuildInfo/BuildInfo.c
elif [[ $(cat "$header") != "$text" ]]; then
    printf '%s\n' "$text" > "$header.tmp" && mv "$header.tmp" "$header"
fi
