# syncd's container image: `syncd run` on the bundled config and the embedded
# SQLite store under /data, serving /metrics, /healthz and /readyz on :8000.
#
#   podman build -t syncd .                      # or: docker build -t syncd .
#   podman run -d -p 8000:8000 -v syncd-data:/data syncd
#
# Every stage starts from BASE_IMAGE, so the image builds from a local base
# where no registry is reachable: --build-arg BASE_IMAGE=localhost/my-python.
# The base needs python3 (>= 3.11) with venv, and Debian's apt for tini.
ARG BASE_IMAGE=python:3.12-slim

# ---- builder: the project and its dependencies, installed into one venv ----
FROM ${BASE_IMAGE} AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONDONTWRITEBYTECODE=1

# tini is the init: PID 1 forwards SIGTERM to syncd and reaps zombies. The
# static build is copied alone into the runtime stage, which so needs no apt.
# The base image is a build argument, hence so is the Debian release and the
# package's version: pinning one would break every other base.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && /usr/bin/tini-static --version

RUN python3 -m venv /opt/syncd
WORKDIR /src
COPY pyproject.toml README.md ./
COPY syncd ./syncd
# pip and setuptools only build: the runtime venv goes without them (~25 MB).
# The apprise extra (~25 MB) is in: [[notify]] works without an image of one's own.
RUN /opt/syncd/bin/pip install --no-cache-dir '.[apprise]' \
 && /opt/syncd/bin/python -m pip uninstall --yes --quiet pip setuptools \
 && /opt/syncd/bin/syncd --help >/dev/null

# ---- runtime: the venv, the config and the seeds; nothing to build with ----
FROM ${BASE_IMAGE} AS runtime

ARG SYNCD_UID=10001
RUN groupadd --system --gid "${SYNCD_UID}" syncd \
 && useradd --system --uid "${SYNCD_UID}" --gid syncd --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin syncd \
 && mkdir -p /data \
 && chown "${SYNCD_UID}:${SYNCD_UID}" /data

COPY --from=builder /usr/bin/tini-static /usr/bin/tini
COPY --from=builder /opt/syncd /opt/syncd
WORKDIR /app
COPY config/ ./config/
COPY seeds/ ./seeds/

# Everything else is configured by environment: SYNCD_<SECTION>_<KEY> overrides
# the file, e.g. SYNCD_DATABASE_URL=postgresql://..., SYNCD_LOG_LEVEL=debug.
# Nothing writes outside /data and /tmp, so a read-only root filesystem works.
ENV PATH=/opt/syncd/bin:$PATH \
    SYNCD_CONFIG=/app/config/container.toml \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp

VOLUME ["/data", "/app/config"]
EXPOSE 8000
USER ${SYNCD_UID}:${SYNCD_UID}

# /healthz answers 200 while the process lives; no curl in the image, so the
# venv's python asks (on SYNCD_HTTP_PORT if set, bypassing any HTTP proxy).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/opt/syncd/bin/python", "-c", "import os, urllib.request as u; u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:%s/healthz' % os.environ.get('SYNCD_HTTP_PORT', '8000'), timeout=4)"]

STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/syncd/bin/syncd"]
CMD ["run"]
