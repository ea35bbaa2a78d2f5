# syntax=docker/dockerfile:1
# streamgate ingest worker: /healthz, /readyz, /metrics on INGEST_PORT.
# Build from the repository root (the workspace is the build context):
#   docker build -f deploy/docker/ingest.Dockerfile -t ghcr.io/streamgate/ingest:$VERSION .
# test/deploy/dockerfiles.test.ts checks this file's shape (stages, pins, user, exec-form CMD).

# Node 24 on Debian 13 by exact version (the relay's uWS build for Node 24 needs glibc >= 2.38;
# one base for every app); the release pipeline may pin the digest too (deploy/README.md).
FROM node:24.22.3-trixie-slim AS build
WORKDIR /src
RUN npm install --global pnpm@10.34.8
# Dependencies from the lockfile alone first, so a source change reuses this layer.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile
# Compile @streamgate/ingest and the workspace packages it depends on to dist/.
RUN pnpm --filter "@streamgate/ingest..." run build
# A self-contained copy: its dist/ and production dependencies only (workspace packages copied
# with their dist/), no dev dependencies, no sources of other apps.
RUN pnpm --filter "@streamgate/ingest" deploy --prod --legacy /out

FROM node:24.22.3-trixie-slim
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and not writable by the user that runs it.
COPY --from=build /out/ ./
# The image's numeric non-root user: Kubernetes' runAsNonRoot can verify a number, not a name.
USER 10001:10001
EXPOSE 8090
# Exec form: node is PID 1 and receives SIGTERM itself (a shell in between would swallow it, and
# the graceful shutdown would never start before the kubelet's SIGKILL).
CMD ["node", "dist/main.js"]
