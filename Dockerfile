# syntax=docker/dockerfile:1
# One image, three functions: NEOSET_FUNCTION=reconcile|readiness|admission selects which one runs
# (knative/*.yaml set it; README "Deploy to Knative"). Each function is one esbuild bundle holding
# all of its production dependencies, so the runtime stage has no node_modules at all.
#   docker build -t ghcr.io/neoset/neoset:0.1.0 .
ARG NODE_IMAGE=node:24-slim

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

FROM ${NODE_IMAGE}
# npm and corepack are not needed to run a bundle: less to patch, less to exploit.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
 && install -d -o node -g node /app/compile-cache
WORKDIR /app
COPY --from=build /src/dist/*.mjs /src/dist/*.LEGAL.txt /app/
ENV NODE_ENV=production \
    NODE_COMPILE_CACHE=/app/compile-cache \
    PORT=8080
# The uid of the `node` user; the manifests run as it (runAsUser: 1000, runAsNonRoot: true).
USER 1000:1000
# Node's compile cache, baked at build time: each function is started once (against a kubeconfig that
# points nowhere: nothing is contacted at start) and stopped with SIGTERM, which writes the V8 code
# cache of its bundle. At run time the root filesystem may be read-only: Node reads the cache and,
# finding it current, writes nothing. The cache is per uid, hence the USER above before warming it.
RUN printf 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n' > /tmp/warmup.kubeconfig \
 && for fn in reconcile readiness admission; do \
      NEOSET_FUNCTION=$fn PORT=0 HOST=127.0.0.1 LOG_LEVEL=silent KUBECONFIG=/tmp/warmup.kubeconfig timeout -s TERM 3 node main.mjs || [ $? -eq 124 ]; \
    done \
 && rm /tmp/warmup.kubeconfig \
 && test -n "$(ls -A /app/compile-cache)"
EXPOSE 8080
ENTRYPOINT ["node", "/app/main.mjs"]
