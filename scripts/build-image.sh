#!/usr/bin/env bash
# Build the riskgrid image and check it: start a container, wait for /_stcore/health, and let
# headless Chromium see the Learn page draw its figures on built-in data. Prints one JSON line
# (builder, tag, base, seconds to make the base and to build, image size in bytes).
#
#   scripts/build-image.sh [--base IMAGE] [--new-base] [--mirror URL] [--ca-bundle FILE]
#                          [--tag NAME] [--pip-index URL] [--no-check]
#
# The builder is podman (run with runc and cgroupfs through scripts/containers.conf, unless
# CONTAINERS_CONF names another file), else docker. No container registry is needed: without
# --base the Python base is made here from Debian's packages (mmdebstrap, Debian 12 "bookworm",
# from the Debian mirror apt uses on this machine unless --mirror), imported as
# localhost/riskgrid-base:bookworm and reused by later builds (--new-base makes it again).
# --base IMAGE: a Python base image instead (Dockerfile ARG BASE), e.g. python:3.12-slim.
# --ca-bundle FILE (default: $PIP_CERT if that is a file): PEM certificates pip trusts while it
# installs the dependencies, for an HTTPS proxy that re-signs them; a build secret, in no layer.
# The check needs /usr/bin/chromium and a Python with Playwright ($PYTHON, .venv or python3).
set -euo pipefail
cd "$(dirname "$0")/.."

base="" new_base=0 mirror="" ca_bundle="" tag="riskgrid:local" pip_index="" check=1
while [ $# -gt 0 ]; do
    case "$1" in
        --base) base="$2"; shift 2 ;;
        --new-base) new_base=1; shift ;;
        --mirror) mirror="$2"; shift 2 ;;
        --ca-bundle) ca_bundle="$2"; shift 2 ;;
        --tag) tag="$2"; shift 2 ;;
        --pip-index) pip_index="$2"; shift 2 ;;
        --no-check) check=0; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done
[ -z "$ca_bundle" ] && [ -f "${PIP_CERT:-}" ] && ca_bundle=$PIP_CERT
if [ -n "$ca_bundle" ] && [ ! -s "$ca_bundle" ]; then
    echo "--ca-bundle: $ca_bundle is not a non-empty file" >&2
    exit 2
fi

if command -v podman >/dev/null 2>&1; then
    builder=podman
    export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/scripts/containers.conf}"
elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    builder=docker
    export DOCKER_BUILDKIT=1  # build secrets (--ca-bundle) need BuildKit
else
    echo "no container builder: apt-get install -y podman mmdebstrap runc (docs/OPERATIONS.md," \
         "\"Container\"), or docker with its daemon running" >&2
    exit 3
fi

debian_mirror() {  # the URI of the first apt source of this machine that carries the suite $1
    local files=() file
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
            /etc/apt/sources.list.d/*.sources; do
        if [ -f "$file" ]; then files+=("$file"); fi
    done
    [ "${#files[@]}" -gt 0 ] || return 0
    awk -v suite="$1" '
        function found(uri) { print uri; exit }
        /^[[:space:]]*deb[[:space:]]/ {            # one-line style: deb [options] URI SUITE ...
            i = 2
            if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
            if ($(i + 1) == suite) found($i) }
        FNR == 1 || /^[[:space:]]*$/ || /^Types:/ { uris = ""; ok = 0 }  # deb822: paragraphs
        /^URIs:/ { uris = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
        uris != "" && ok { found(uris) }' "${files[@]}"
}

base_seconds=null
if [ -z "$base" ]; then
    base=localhost/riskgrid-base:bookworm
    if [ "$new_base" -eq 1 ] || ! "$builder" image inspect "$base" >/dev/null 2>&1; then
        if ! command -v mmdebstrap >/dev/null 2>&1; then
            echo "making the Debian base needs mmdebstrap (apt-get install -y mmdebstrap);" \
                 "or pass --base IMAGE (e.g. python:3.12-slim from a registry)" >&2
            exit 3
        fi
        [ -z "$mirror" ] && mirror=$(debian_mirror bookworm)
        if [ -z "$mirror" ]; then
            echo "no apt source of this machine carries Debian bookworm: pass --mirror URL" \
                 "(e.g. http://deb.debian.org/debian)" >&2
            exit 2
        fi
        echo "making $base from $mirror (mmdebstrap)" >&2
        start=$(date +%s)
        workdir=$(mktemp -d)
        trap 'rm -rf "$workdir"' EXIT
        mmdebstrap --quiet --variant=apt --include=python3,python3-venv,ca-certificates \
            bookworm "$workdir/base.tar" "$mirror"
        "$builder" import "$workdir/base.tar" "$base" >/dev/null
        rm -rf "$workdir"
        trap - EXIT
        base_seconds=$(( $(date +%s) - start ))
    fi
fi

args=(-t "$tag" -f Dockerfile --build-arg "BASE=$base")
[ -n "$pip_index" ] && args+=(--build-arg "PIP_INDEX=$pip_index")
[ -n "$ca_bundle" ] && args+=(--secret "id=ca_bundle,src=$ca_bundle")
[ "$builder" = podman ] && args+=(--format docker)  # podman keeps HEALTHCHECK in this format only
echo "building $tag on $base with $builder" >&2
start=$(date +%s)
"$builder" build "${args[@]}" . >&2
build_seconds=$(( $(date +%s) - start ))
size=$("$builder" image inspect --format '{{.Size}}' "$tag")
echo "{\"builder\": \"$builder\", \"tag\": \"$tag\", \"base\": \"$base\"," \
     "\"base_seconds\": $base_seconds, \"build_seconds\": $build_seconds, \"size_bytes\": $size}"
[ "$check" -eq 1 ] || exit 0

python=${PYTHON:-python3}
[ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ] && python=.venv/bin/python
port=$("$python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
container=$("$builder" run -d --rm -p "127.0.0.1:$port:8501" "$tag")
trap '"$builder" stop -t 5 "$container" >/dev/null 2>&1 || true' EXIT
"$python" scripts/check_dashboard.py "http://127.0.0.1:$port" --timeout 240
