# Quarry over Streamable HTTP in a container (docs/OPERATIONS.md, "Container").
#
#   docker build -t quarry .
#   docker run --rm -p 8765:8765 -v "$PWD/data:/data:ro" \
#     -e QUARRY_AUTH_TOKENS="$(openssl rand -hex 32)" quarry
#
# The data is mounted read-only at /data; results go to /var/cache/quarry
# (a volume). The server listens on 0.0.0.0, so it refuses to start
# without a bearer token (QUARRY_AUTH_TOKENS, or --auth-token-file on a
# mounted secret). Lint: e2e TestDockerfileRules; build steps: e2e
# TestContainerBuildSteps runs scripts/container-build.sh.

FROM golang:1.26-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libhdf5-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN VERSION=${VERSION} scripts/container-build.sh /out/quarry

FROM debian:bookworm-slim
# The MCP registry checks this label against server.json's name.
LABEL io.modelcontextprotocol.server.name="io.github.quarrydb/quarry"
RUN apt-get update \
 && apt-get install -y --no-install-recommends libhdf5-103-1 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/cache/quarry --create-home quarry \
 && mkdir -p /data
COPY --from=build /out/quarry /usr/local/bin/quarry
USER 10001:10001
ENV XDG_CACHE_HOME=/var/cache/quarry
VOLUME ["/data", "/var/cache/quarry"]
EXPOSE 8765
ENTRYPOINT ["/usr/local/bin/quarry"]
CMD ["serve", "--transport", "http", "--addr", "0.0.0.0:8765", "--data", "/data"]
