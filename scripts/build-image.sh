#!/usr/bin/env bash
# Build the riskgrid image with whichever builder is present (docker with a running daemon,
# podman, or buildah), then check it: start a container, wait for /_stcore/health, and let
# headless Chromium see the Learn page draw a figure on built-in data. Reports build time and
# image size.
#
#   scripts/build-image.sh [--base IMAGE] [--tag NAME] [--pip-index URL] [--no-check]
#
# --base: the Python base image (Dockerfile ARG BASE), e.g. one from a local registry mirror.
# The check needs /usr/bin/chromium and the project's Python with Playwright (.venv or python3).
set -euo pipefail
cd "$(dirname "$0")/.."

base="" tag="riskgrid:local" pip_index="" check=1
while [ $# -gt 0 ]; do
    case "$1" in
        --base) base="$2"; shift 2 ;;
        --tag) tag="$2"; shift 2 ;;
        --pip-index) pip_index="$2"; shift 2 ;;
        --no-check) check=0; shift ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    builder=docker
elif command -v podman >/dev/null 2>&1; then
    builder=podman
elif command -v buildah >/dev/null 2>&1; then
    builder=buildah
else
    echo "no container builder: install docker (with its daemon running), podman or buildah" >&2
    exit 3
fi

args=(-t "$tag" -f Dockerfile)
[ -n "$base" ] && args+=(--build-arg "BASE=$base")
[ -n "$pip_index" ] && args+=(--build-arg "PIP_INDEX=$pip_index")
echo "building $tag with $builder" >&2
start=$(date +%s)
case "$builder" in  # podman and buildah keep HEALTHCHECK only in the docker image format
    buildah) buildah bud --layers --format docker "${args[@]}" . ;;
    podman) podman build --format docker "${args[@]}" . ;;
    *) docker build "${args[@]}" . ;;
esac
seconds=$(( $(date +%s) - start ))
case "$builder" in
    buildah) size=$(buildah images --format '{{.Size}}' "$tag" | head -n 1) ;;
    *) size=$("$builder" image inspect --format '{{.Size}}' "$tag") ;;
esac
echo "{\"builder\": \"$builder\", \"tag\": \"$tag\", \"build_seconds\": $seconds, \"size\": \"$size\"}"
[ "$check" -eq 1 ] || exit 0

python=python3
[ -x .venv/bin/python ] && python=.venv/bin/python
port=$("$python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
url="http://127.0.0.1:$port"
run_with_buildah() {  # a working container sharing the host's network (no OCI runtime needed)
    container=$(buildah from "$tag")
    buildah run --network host "$container" -- riskgrid dashboard --headless \
        --address 127.0.0.1 --port "$port" >/dev/null 2>&1 &
    runner=$!
    cleanup() { kill "$runner" 2>/dev/null || true; wait "$runner" 2>/dev/null || true
                buildah rm "$container" >/dev/null; }
}
if [ "$builder" = buildah ]; then
    run_with_buildah
elif container=$("$builder" run -d --rm -p "127.0.0.1:$port:8501" "$tag"); then
    cleanup() { "$builder" stop -t 5 "$container" >/dev/null 2>&1 || true; }
elif command -v buildah >/dev/null 2>&1; then
    echo "$builder cannot run containers here; checking with buildah instead" >&2
    run_with_buildah
else
    exit 4
fi
trap cleanup EXIT
"$python" scripts/check_dashboard.py "$url" --timeout 240
