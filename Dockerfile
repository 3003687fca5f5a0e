# syntax=docker/dockerfile:1
# hostrelay as a container: the web app built with Node, embedded into a
# static Go binary, run as a non-root user on distroless (no shell, no libc).
#
#   docker build -t hostrelay .
#   docker run -p 8080:8080 -p 3478:3478/udp -p 3478:3478/tcp -p 50000-50099:50000-50099/udp \
#     hostrelay -public-ip 203.0.113.7 -turn-relay-ports 50000-50099
#
# -turn-relay-ports keeps TURN's relay sockets to the published range
# (deploy/compose.yaml does the same; docs/operations.md#in-a-container); with
# --network host nothing needs publishing.

FROM node:20-bookworm-slim AS web
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund && npm run build

FROM golang:1.26-bookworm AS server
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=web /src/static/dist/ static/dist/
COPY --from=web /src/static/sdk/ static/sdk/
# CGO off: a static binary, which is what distroless/static (and scratch) need.
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/hostrelay ./server/cmd/hostrelay
# The state directory (the ACME certificate cache): owned by nonroot in the
# image, so a volume mounted on it starts out writable by the server.
RUN mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=server /out/hostrelay /hostrelay
COPY --from=server --chown=nonroot:nonroot /out/state /var/lib/hostrelay
USER nonroot:nonroot
WORKDIR /var/lib/hostrelay
# HTTP (lobby page, /ws), TURN over UDP and TCP, TURN over TLS (with TLS on;
# HTTPS then on -http, the redirect and ACME's HTTP-01 on 80).
EXPOSE 8080/tcp 3478/udp 3478/tcp 5349/tcp
ENTRYPOINT ["/hostrelay"]
