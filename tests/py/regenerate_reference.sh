#!/usr/bin/env bash
# Regenerates tests/data/reference (prometheus_client's reading of every page) with the
# pinned version, then fails if anything differs from the committed files.
# Usage: tests/py/regenerate_reference.sh [--write]   (--write keeps the new files)
set -euo pipefail
cd "$(dirname "$0")/../.."
pinned=$(sed -n "s/^prometheus_client==//p" tests/py/requirements.txt)
have=$(python3 -c 'from importlib.metadata import version; print(version("prometheus_client"))' 2>/dev/null || true)
if [ "$have" != "$pinned" ]; then
  echo "need prometheus_client==$pinned (have: ${have:-none}): pip install prometheus_client==$pinned" >&2
  exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 tests/py/dump_samples.py "$out" tests/data/corpus/*.txt tests/data/vllm/*.txt tests/data/vllm/*.prom
if [ "${1:-}" = "--write" ]; then
  rm -rf tests/data/reference
  cp -r "$out" tests/data/reference
  echo "wrote $(ls tests/data/reference | wc -l) golden files"
else
  diff -r "$out" tests/data/reference
  echo "reference golden files: $(ls "$out" | wc -l) pages identical to prometheus_client $pinned"
fi
