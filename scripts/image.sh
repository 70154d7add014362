#!/usr/bin/env bash
# scripts/image.sh CONTEXT - build the container image from the Containerfile
# (`make image` calls it once it has built the static binary into CONTEXT,
# bin/image/). It copies the host's CA bundle beside the binary (installing
# ca-certificates with apt-get if it is missing) and builds with podman or
# Docker (scripts/container.sh, CONTAINER_ENGINE).
#
# Environment: IMAGE (default sqlfork-proxy:dev), VERSION and COMMIT (the
# image's org.opencontainers.image labels), CONTAINER_ENGINE.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/container.sh
source "$ROOT/scripts/container.sh"

CONTEXT=${1:?usage: scripts/image.sh CONTEXT_DIR}
IMAGE=${IMAGE:-sqlfork-proxy:dev}
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

[[ -x $CONTEXT/sqlfork-proxy ]] ||
	die "$CONTEXT/sqlfork-proxy is missing: build it with 'make image', which builds it first"
[[ -s $CA_BUNDLE ]] || apt_install ca-certificates
[[ -s $CA_BUNDLE ]] || die "$CA_BUNDLE is missing: install the CA roots (Debian: ca-certificates)"
cp "$CA_BUNDLE" "$CONTEXT/ca-certificates.crt"

container_init
old_id=$("${CTR[@]}" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
log "building $IMAGE with $ENGINE from Containerfile (context $CONTEXT)"
container_build "$CONTEXT" "$IMAGE" \
	--label "org.opencontainers.image.title=sqlfork-proxy" \
	--label "org.opencontainers.image.version=${VERSION:-dev}" \
	--label "org.opencontainers.image.revision=${COMMIT:-unknown}"
# The image this one replaced under $IMAGE would stay behind untagged: remove
# it, unless a container or another tag still uses it.
new_id=$("${CTR[@]}" image inspect --format '{{.Id}}' "$IMAGE")
if [[ -n $old_id && $old_id != "$new_id" ]]; then
	"${CTR[@]}" image rm "$old_id" >/dev/null 2>&1 || true
fi
size=$(image_size "$IMAGE")
log "built $IMAGE: $size bytes ($((size / 1000000)) MB)"
