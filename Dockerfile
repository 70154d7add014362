# Build exactly as `make build` does, then ship the binary alone.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN make build VERSION=${VERSION}

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 sqlfork
COPY --from=build /src/bin/sqlfork-proxy /usr/local/bin/sqlfork-proxy
USER sqlfork
EXPOSE 3307 9104
ENTRYPOINT ["/usr/local/bin/sqlfork-proxy"]
CMD ["serve", "--listen", "0.0.0.0:3307", "--metrics-listen", "0.0.0.0:9104"]
