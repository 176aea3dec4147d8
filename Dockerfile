FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV NODE_ENV=production PORT=8080
EXPOSE 8080
STOPSIGNAL SIGTERM
CMD ["node", "--import", "tsx", "layers/main/node.ts"]
