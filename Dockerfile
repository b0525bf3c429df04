# Timekeeper API / worker / migrations image. One image, three commands:
#   npm run api | npm run worker | npm run migrate   (see docker-compose.yml)
# There is no build step: tsx is a runtime dependency and runs the TypeScript directly.
FROM node:20-bookworm-slim

# npm is only a script runner here: no update checks or funding notices at start-up.
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false

WORKDIR /app

# Dependencies first, so source edits don't invalidate the npm ci layer.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY tsconfig.json ./
COPY lib ./lib
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY api ./api
COPY bin ./bin
# SQL migrations, read from disk by `npm run migrate`.
COPY schema ./schema

# The code stays root-owned and read-only to the process; tsx writes its cache to /tmp.
USER node

EXPOSE 8000
CMD ["npm", "run", "api"]
