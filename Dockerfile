# syntax=docker/dockerfile:1
#
# The mada API service (@mada/api). Build from the repository root:
#   docker build -t mada-api .
# Running it, the compose stack and the production settings: docs/deployment.md.

# Node 22, the maintained LTS line on which better-sqlite3 12 runs (Node 20 reached its end of life
# in April 2026; Node 24 from 24.19 on aborts with better-sqlite3 12, see README). The release
# workflow tests this same line before it builds the image.
ARG NODE_IMAGE=node:22-bookworm-slim

# ---------------------------------------------------------------------------------------------
# toolchain: the lockfile and every workspace manifest (npm ci checks the lockfile against all of
# them), plus what node-gyp needs in case better-sqlite3 or tree-sitter-bash has no prebuilt
# binary for this platform and is compiled from source.
FROM ${NODE_IMAGE} AS toolchain
RUN apt-get update \
 && apt-get install --yes --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/testkit/package.json packages/testkit/
COPY packages/api/package.json packages/api/
COPY packages/cli/package.json packages/cli/
COPY packages/web/package.json packages/web/

# ---------------------------------------------------------------------------------------------
# build: all dependencies (TypeScript is a dev dependency), then `npm run build`
# (tsc -b packages/api packages/cli, which builds packages/protocol through its reference, then
# the browser console, packages/web, with Vite).
FROM toolchain AS build
RUN --mount=type=cache,target=/root/.npm npm ci
COPY tsconfig.base.json ./
COPY packages/protocol packages/protocol
COPY packages/api packages/api
COPY packages/cli packages/cli
COPY packages/web packages/web
RUN npm run build

# ---------------------------------------------------------------------------------------------
# prod-deps: only what @mada/api needs at run time, native addons compiled here, where the
# toolchain is, for the same base image as the runtime stage. npm nests a dependency under a
# workspace only on a version conflict; mkdir makes those directories exist either way, so the
# runtime stage's COPY lines do not depend on the lockfile's shape.
FROM toolchain AS prod-deps
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --workspace @mada/api --include-workspace-root=false \
 && mkdir -p packages/api/node_modules packages/protocol/node_modules

# ---------------------------------------------------------------------------------------------
# runtime
FROM ${NODE_IMAGE} AS runtime
# ripgrep: grep_content; bubblewrap and util-linux (prlimit): the sandbox every tool process runs
# in; slirp4netns: bash's own network (the internet without this container's loopback); git: the
# agents' git commands; tini: PID 1 that forwards SIGTERM and reaps the grandchildren of agent
# shell commands. The sandbox needs user namespaces and a fresh /proc: see compose.yaml.
RUN apt-get update \
 && apt-get install --yes --no-install-recommends ripgrep bubblewrap util-linux slirp4netns git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 mada \
 && useradd --system --uid 10001 --gid mada --create-home --home-dir /home/mada --shell /usr/sbin/nologin mada \
 && mkdir -p /var/lib/mada /workspace \
 && chown mada:mada /var/lib/mada

# The code stays owned by root: the service (and any agent command) cannot rewrite itself.
WORKDIR /app
COPY --from=prod-deps /app/package.json ./
COPY --from=prod-deps /app/node_modules node_modules
COPY --from=prod-deps /app/packages/protocol/package.json packages/protocol/
COPY --from=prod-deps /app/packages/protocol/node_modules packages/protocol/node_modules
COPY --from=build /app/packages/protocol/dist packages/protocol/dist
COPY --from=prod-deps /app/packages/api/package.json packages/api/
COPY --from=prod-deps /app/packages/api/node_modules packages/api/node_modules
COPY --from=build /app/packages/api/dist packages/api/dist
# Applied at start-up (SQLite or PostgreSQL, whichever DATABASE_URL names).
COPY --from=build /app/packages/api/migrations packages/api/migrations
# The browser console the service serves at /app/ (static files only).
COPY --from=build /app/packages/web/dist packages/web/dist

# HOST=0.0.0.0 is not loopback, so the service refuses to start without API_KEYS: a published
# container never runs in keyless local mode by accident.
ENV NODE_ENV=production \
    PORT=8086 \
    HOST=0.0.0.0 \
    DATA_DIR=/var/lib/mada

# The default SQLite database (DATA_DIR/mada.db) lives here; use PostgreSQL (DATABASE_URL) for
# anything that must survive the volume or run as several replicas.
VOLUME ["/var/lib/mada"]

# Agents work here: mount each project below /workspace (/workspace/<name>), never on it. With
# ALLOWED_PATHS empty the tools are confined to the start directory, which is this one. It stays
# owned by root because the service reads .env from its start directory at start-up: nothing
# running as mada (an agent included) may create /workspace/.env and change the settings.
WORKDIR /workspace
USER 10001:10001
EXPOSE 8086

# /health answers 200 when the database answers (healthy or degraded: a missing model runtime
# or search engine does not make the container unhealthy) and 503 when it does not.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8086) + '/health', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "/app/packages/api/dist/main.js"]
