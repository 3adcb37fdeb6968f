# The relay on the official Bun image: `docker build -t sponsor-relay . && docker run -p 3000:3000 sponsor-relay`
FROM oven/bun:1.4.5-slim
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production
COPY src ./src
COPY actors ./actors
COPY drizzle ./drizzle
COPY tsconfig.json bunfig.toml ./
ENV NODE_ENV=production PORT=3000 DATA_DIR=/data
RUN mkdir -p /data && chown bun:bun /data
VOLUME /data
EXPOSE 3000
USER bun
CMD ["bun", "run", "start"]
