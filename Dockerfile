# syntax=docker/dockerfile:1
# case-read-service: a multi-stage image on Node 24 LTS (supported until 2028-04-30; see
# docs/runtimes.md). The build stage compiles the TypeScript; the one native module
# (better-sqlite3) comes prebuilt for Node-API inside its package, so nothing is compiled for
# it and no compiler is needed. The runtime stage holds production dependencies only, runs
# as the unprivileged `node` user, and needs nothing written to its root file system (mount
# the certificates read-only; keep state in PostgreSQL and Redis, or mount a volume for SQLite).
# test/e2e/production-install.test.ts checks what this image runs: `npm ci --omit=dev` and
# `serve` from that install, with no devDependency reachable.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: the project's own `prepare` (the build) runs below, once the sources are in.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build
# Production dependencies only.
RUN rm -rf node_modules \
 && npm ci --omit=dev --ignore-scripts \
 && npm cache clean --force

FROM node:24-bookworm-slim
# NODE_OPTIONS: V8's young generation held to Node 20's 2 x 16 MiB. Node 24 grows it to
# 2 x 64 MiB under load: 293 MiB resident against 202 MiB with this, for the same CPU per
# request within the bench's noise (docs/performance.md, "Node 24"). Drop it to trade memory
# for fewer scavenges.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=16 \
    HOST=0.0.0.0 \
    PORT=8443 \
    MANAGEMENT_PORT=9464
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY fixtures ./fixtures
# The subject access template (decisions §22), answered as its bytes by GET /subject-access-request/template.
COPY templates ./templates
# The commit /info names (docs/operations/health-and-metrics.md): docker build --build-arg GIT_COMMIT=$(git rev-parse HEAD).
ARG GIT_COMMIT
ENV GIT_COMMIT=${GIT_COMMIT}
# The image's files belong to root and cannot be changed by the process, which runs as `node`.
USER node
EXPOSE 8443 9464
# The management listener is plain HTTP on MANAGEMENT_PORT; liveness only (readiness is the
# orchestrator's: it turns 503 first on SIGTERM).
HEALTHCHECK --interval=10s --timeout=2s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.MANAGEMENT_PORT||9464)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `serve` is PID 1 (no shell in between): SIGTERM reaches it and starts the graceful drain.
ENTRYPOINT ["node", "bin/case-read.js"]
CMD ["serve"]
