# Build exactly as `make build` does (a static binary), then ship it alone
# in an empty image, as an unprivileged user.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN make build VERSION=${VERSION}

FROM scratch
# CA roots for --upstream-tls verify-ca/verify-identity with system roots.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /src/bin/sqlfork-proxy /sqlfork-proxy
USER 10001:10001
EXPOSE 3307 9104
ENTRYPOINT ["/sqlfork-proxy"]
CMD ["serve", "--listen", "0.0.0.0:3307", "--metrics-listen", "0.0.0.0:9104"]
