# riskgrid dashboard: docker build -t riskgrid . && docker run --rm -p 8501:8501 riskgrid
# With the SEG table (not shipped): add -v /path/to/RiskPairData.csv.gz:/data/seg.csv.gz:ro
#   -e SEG_TABLE=/data/seg.csv.gz ; keep saved records across containers with
#   -v riskgrid-data:/home/riskgrid/.local/share/riskgrid (or -e RISKGRID_DATABASE_URL=...)
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN useradd --create-home --uid 10001 riskgrid
WORKDIR /app
COPY pyproject.toml README.md ./
COPY ranking_core ./ranking_core
COPY dashboard ./dashboard
RUN pip install . && rm -rf /app/build

USER riskgrid
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status != 200)"
CMD ["riskgrid", "dashboard", "--headless", "--port", "8501"]
