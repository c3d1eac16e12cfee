# syntax=docker/dockerfile:1
# One image, three functions: NEOSET_FUNCTION=reconcile|readiness|admission selects which one runs
# (knative/*.yaml set it; README "Deploy to Knative"). Each function is one esbuild bundle holding
# all of its production dependencies, so the runtime has no node_modules at all.
#   docker build -t ghcr.io/neoset/neoset:0.3.0 .
#
# The base: a fixed Node release (24.21.0, the node@24.21.0 the tests run on), not the moving `24-slim`.
# Not by digest: the tag is rebuilt for Debian's security updates, and nothing here can ask a
# registry which digest is current (public Dockerfiles pin different ones for this same tag). To pin
# one: `docker buildx imagetools inspect node:24.21.0-bookworm-slim`, then
# `--build-arg NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:<digest>`.
# Distroless (gcr.io/distroless/nodejs24-debian12) was considered: smaller still and without a shell,
# but it publishes no version tags (it could be pinned only by a digest we cannot look up here) and its
# Node release would differ from the one the compile cache below is made with. The last stage gets
# most of its benefit: a single layer with no npm, corepack or yarn in it.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Everything the build needs (esbuild; the npm package node@24 that the scripts run on).
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY functions functions
COPY shared shared
COPY scripts/build.ts scripts/build.ts
RUN npm run build

# The runtime's file system, made in a stage of its own and copied whole into the last one: a file
# deleted in a later layer is still in the image (every layer ships), a file never copied is not.
FROM ${NODE_IMAGE} AS runtime
# npm, corepack and yarn are not needed to run a bundle: less to patch, less to exploit.
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
 && install -d -o node -g node /app/compile-cache
WORKDIR /app
# The bundles, their source maps (the entrypoint runs with --enable-source-maps: stack traces name the
# TypeScript files and lines) and the licences of what they bundle.
COPY --from=build /src/dist/*.mjs /src/dist/*.mjs.map /src/dist/*.LEGAL.txt /app/
# The uid of the `node` user; the manifests run as it (runAsUser: 1000, runAsNonRoot: true).
USER 1000:1000
# Node's compile cache, baked at build time: each function is started once (against a kubeconfig that
# points nowhere: nothing is contacted at start) and stopped with SIGTERM, which writes the V8 code
# cache of its bundle. At run time the root filesystem may be read-only: Node reads the cache and,
# finding it current, writes nothing. The cache is per uid, hence the USER above before warming it,
# and made with the flags the entrypoint uses.
RUN printf 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n' > /tmp/warmup.kubeconfig \
 && for fn in reconcile readiness admission; do \
      NEOSET_FUNCTION=$fn PORT=0 HOST=127.0.0.1 LOG_LEVEL=silent KUBECONFIG=/tmp/warmup.kubeconfig NODE_COMPILE_CACHE=/app/compile-cache \
        timeout -s TERM 3 node --enable-source-maps main.mjs || [ $? -eq 124 ]; \
    done \
 && rm /tmp/warmup.kubeconfig \
 && test -n "$(ls -A /app/compile-cache)"

FROM scratch
COPY --from=runtime / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    NODE_COMPILE_CACHE=/app/compile-cache \
    PORT=8080 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
# glibc's malloc: two arenas, not eight a core, and every block of 128 KiB or more mapped on its own, so
# that it goes back to the system when freed (left to itself, glibc raises that threshold to the largest
# block freed, up to 32 MiB, and keeps the freed blocks in its heap). In the sweep of 60 NeoSets with
# 1 MiB env values, reconcile's VmHWM: 268 MiB with these, 296–309 without (memory-bounded.test.ts).
WORKDIR /app
USER 1000:1000
EXPOSE 8080
# V8's heap at half the container's memory limit (Node reads the cgroup's: 128 MiB of a 256 Mi limit).
# Left to itself V8 sizes its heap from the limit at about the limit itself, so the cgroup's OOM killer
# ends the process before V8 would have collected; at half, the rest holds the process's native memory
# (answers' bytes in flight, sockets, code): README "Memory", test/integration/memory-bounded.test.ts.
# The young generation apart: V8 grows its semi-spaces up to 64 MiB each under a run of large
# allocations (128 MiB of new space seen in the sweep of NeoSets with 1 MiB env values), outside
# --max-old-space-size; 8 MiB each bounds it at 16 MiB.
ENTRYPOINT ["node", "--enable-source-maps", "--max-old-space-size-percentage=50", "--max-semi-space-size=8", "/app/main.mjs"]
