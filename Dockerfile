# riskgrid dashboard image. Build and check it with scripts/build-image.sh (podman or docker; with
# no container registry in reach it makes the Debian base from Debian's packages); run it with
# PostgreSQL with compose.yaml (docs/OPERATIONS.md, "Container").
#   BASE: any Debian-based image with Python >= 3.11 (python3 -m venv works) and CA certificates
#   PIP_INDEX: a package index to install from (e.g. a local mirror); empty = pip's default
# Build secret "ca_bundle" (optional): a PEM bundle pip trusts while building, for an HTTPS proxy
# that re-signs certificates. It is mounted for the two pip steps only and is in no layer.
ARG BASE=python:3.12-slim
FROM ${BASE}

ARG PIP_INDEX=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

RUN useradd --create-home --uid 10001 riskgrid \
    && mkdir -p /data && chown riskgrid:riskgrid /data
WORKDIR /app
# the dependencies first (their layer is rebuilt only when pyproject.toml changes), then the code
COPY pyproject.toml README.md ./
RUN --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export PIP_CERT=/run/secrets/ca_bundle; fi \
    && python3 -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['postgresql']))" > /tmp/requirements \
    && python3 -m venv /opt/riskgrid \
    && ${PIP_INDEX:+env PIP_INDEX_URL="$PIP_INDEX"} /opt/riskgrid/bin/pip install -r /tmp/requirements
COPY --chmod=755 scripts/container-entrypoint.sh /usr/local/bin/riskgrid-entrypoint
COPY ranking_core ./ranking_core
COPY dashboard ./dashboard
RUN --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export PIP_CERT=/run/secrets/ca_bundle; fi \
    && ${PIP_INDEX:+env PIP_INDEX_URL="$PIP_INDEX"} /opt/riskgrid/bin/pip install --no-deps . \
    && rm -rf /app/build /app/*.egg-info /tmp/requirements

# the records database (SQLite) lives on the volume unless RISKGRID_DATABASE_URL names another
# database (compose.yaml: PostgreSQL); the SEG table can be mounted read-only and named in SEG_TABLE
ENV PATH=/opt/riskgrid/bin:$PATH \
    RISKGRID_DATABASE_URL=sqlite:////data/riskgrid.sqlite3 \
    HOME=/home/riskgrid
VOLUME ["/data"]
USER riskgrid
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD python3 -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"
# the entrypoint refuses to start the dashboard when its SQLite folder is not writable (saying how
# to fix it); inside the container the server listens on all of the container's interfaces:
# publish the port on the host's loopback only (-p 127.0.0.1:8501:8501) unless it is to be reached
ENTRYPOINT ["riskgrid-entrypoint"]
CMD ["riskgrid", "dashboard", "--headless", "--address", "0.0.0.0", "--port", "8501"]
