# Timekeeper API / worker / migrations image. One image, three roles (docker-compose.yml):
#   tsx bin/api.ts | node -r ./bin/tsx-main-thread.cjs bin/worker.ts | npm run migrate
# (the bodies of the api / worker / migrate scripts in package.json). There is no build
# step: tsx is a runtime dependency and runs the TypeScript directly (in the worker, in its
# main thread only: bin/tsx-main-thread.cjs).
FROM node:20-bookworm-slim

# node_modules/.bin on PATH so the package.json script bodies (`tsx bin/api.ts`) run as
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
COPY bin ./bin
COPY integrations ./integrations
# SQL migrations, read from disk by lib/migrate.ts (the migrate job and the worker).
COPY schema ./schema

# The code stays root-owned and read-only to the process; tsx writes its cache to /tmp.
USER node

EXPOSE 8000
# `npm run api` without npm: npm exits on SIGTERM without passing it on, so the api would
# be killed instead of closing its connections. tsx relays the signal and waits.
CMD ["tsx", "bin/api.ts"]
