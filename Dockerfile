# Timekeeper API / worker / migrations image. One image, three roles (docker-compose.yml):
#   node bin/launch.cjs api | node bin/launch.cjs worker | npm run migrate
# (the bodies of the api / worker / migrate scripts in package.json). The image is built with
# `npm run build` (bin/build.mjs): api and worker run the compiled bundles in dist/ and the
# prebuilt workflow bundle; the launcher finds the build current (same sources) and runs it.
# The one-shot migrate job runs its TypeScript with tsx.
FROM node:20-bookworm-slim

# node_modules/.bin on PATH so the package.json script bodies (`tsx bin/migrate.ts`) run as
# they are; npm itself is only used for one-shot jobs: no update checks or funding notices.
ENV NODE_ENV=production \
    PATH=/app/node_modules/.bin:$PATH \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false

WORKDIR /app

# Dependencies first, so source edits don't invalidate the npm ci layer.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY tsconfig.json ./
COPY lib ./lib
COPY clients ./clients
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY api ./api
COPY sdk ./sdk
COPY bin ./bin
COPY integrations ./integrations
# SQL migrations, read from disk by lib/migrate.ts (the migrate job and the worker).
COPY schema ./schema
# The compiled runtime (dist/, owned by root like the rest).
RUN node bin/build.mjs

# The code stays root-owned and read-only to the process; tsx (migrate) writes its cache to /tmp.
USER node

EXPOSE 8000
# `npm run api` without npm: npm exits on SIGTERM without passing it on, so the api would
# be killed instead of closing its connections. The launcher runs the api in its own process.
CMD ["node", "bin/launch.cjs", "api"]
