# syntax=docker/dockerfile:1
# Kassir's image: the production install path of docs/operations.md, in two stages.
#   build:   every dependency (dev ones too), `npm run build` (the server's dist/ and the built
#            console), then `npm pack`: the release, as test/production-install.test.ts makes it.
#   runtime: the release installed by scripts/install-production.sh (npm ci --omit=dev with the
#            lockfile), the same script that test runs, as a non-root user.
# Build:  docker build -t kassir .        Run:  compose.yaml, or docker run with DATABASE_URL.
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
# Dependencies first, so that a change of the sources alone reuses this layer. --ignore-scripts:
# the project's own prepare would build before the sources are here; the dependencies' install
# scripts (native binaries) run in the rebuild.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild
COPY . .
RUN npm run build && mkdir /release && npm pack --pack-destination /release && cp package-lock.json scripts/install-production.sh /release/

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# pg_dump and pg_restore for `kassir backup` / `kassir restore` inside the container: they must be
# at least as new as the server (compose.yaml runs PostgreSQL 16; Debian 12 ships 15), so from
# PostgreSQL's own apt repository. Build with --build-arg PG_CLIENT_MAJOR=<major> for another server.
ARG PG_CLIENT_MAJOR=16
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && install -d /usr/share/postgresql-common/pgdg \
 && curl -fsSL -o /usr/share/postgresql-common/pgdg/apt.postgresql.org.asc https://www.postgresql.org/media/keys/ACCC4CF8.asc \
 && echo "deb [signed-by=/usr/share/postgresql-common/pgdg/apt.postgresql.org.asc] https://apt.postgresql.org/pub/repos/apt bookworm-pgdg main" > /etc/apt/sources.list.d/pgdg.list \
 && apt-get update \
 && apt-get install -y --no-install-recommends "postgresql-client-${PG_CLIENT_MAJOR}" \
 && apt-get purge -y curl && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*

COPY --from=build /release/ /tmp/release/
RUN sh /tmp/release/install-production.sh /tmp/release/kassir-*.tgz /tmp/release/package-lock.json /opt/kassir \
 && rm -rf /tmp/release /root/.npm \
 && ln -s /opt/kassir/bin/kassir.js /usr/local/bin/kassir \
 && groupadd --system kassir \
 && useradd --system --gid kassir --home-dir /var/lib/kassir --no-create-home --shell /usr/sbin/nologin kassir \
 && install -d -o kassir -g kassir -m 750 /var/lib/kassir

WORKDIR /opt/kassir
# Receipts (and, without DATABASE_URL, the embedded database) live here: keep it on a volume.
ENV NODE_ENV=production KASSIR_DATA_DIR=/var/lib/kassir HOST=0.0.0.0 PORT=8080
VOLUME ["/var/lib/kassir"]
USER kassir
EXPOSE 8080
# Ready: the database answers and is migrated, and the job worker runs (GET /readyz).
HEALTHCHECK --interval=15s --timeout=5s --start-period=90s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself; it finishes requests in flight and exits
# 0 within 20 s (src/main.ts). Compose's stop_grace_period leaves it 30 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/main.js"]
