# scripts/container.sh - sourced by scripts/image.sh and scripts/image-test.sh:
# picks the container engine and makes it work on this machine.
#
#   CONTAINER_ENGINE=podman|docker  the engine (default: podman if installed,
#                                   else docker if it reaches a daemon, else
#                                   podman, installed with apt-get)
#
# podman runs with scripts/containers.conf (runc, cgroupfs, no default
# ulimits: what a cgroup v1 host without systemd needs; CONTAINERS_CONF set
# by the caller wins) and builds with --isolation chroot. On Debian, podman,
# runc and podman-compose are installed with apt-get when missing.
#
# After container_init: ENGINE (podman or docker) and the array CTR, the
# command line to run it with (e.g. "${CTR[@]}" run ...).

[[ -n ${ROOT:-} ]] || ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# as_root CMD... - run as root (directly, or through sudo).
as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run '$*' and sudo is not installed"
	fi
}

# have NAME - true if NAME is in $PATH, /usr/sbin or /usr/bin.
have() {
	command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 || -x /usr/bin/$1 ]]
}

# apt_install PKG... - install Debian packages (without recommends).
apt_install() {
	command -v apt-get >/dev/null 2>&1 ||
		die "$* missing and apt-get is not available: install them (or set CONTAINER_ENGINE=docker)"
	log "installing $* with apt-get"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null ||
		die "apt-get update failed"
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
		die "apt-get install $* failed"
}

# container_init - set ENGINE and CTR; install podman's packages if needed.
container_init() {
	ENGINE=${CONTAINER_ENGINE:-}
	if [[ -z $ENGINE ]]; then
		if have podman; then
			ENGINE=podman
		elif have docker && docker info >/dev/null 2>&1; then
			ENGINE=docker # a docker CLI without a daemon it can reach does not count
		else
			ENGINE=podman
		fi
	fi
	case $ENGINE in
	podman)
		local missing=()
		have podman || missing+=(podman)
		have runc || missing+=(runc) # crun fails on cgroup v1 hosts (scripts/containers.conf)
		((${#missing[@]} == 0)) || apt_install "${missing[@]}"
		export CONTAINERS_CONF="${CONTAINERS_CONF:-$ROOT/scripts/containers.conf}"
		CTR=(podman)
		;;
	docker)
		have docker || die "CONTAINER_ENGINE=docker but docker is not installed"
		CTR=(docker)
		;;
	*) die "CONTAINER_ENGINE '$ENGINE' is neither podman nor docker" ;;
	esac
}

# container_build CONTEXT IMAGE [build flags...] - build the Containerfile.
container_build() {
	local context=$1 image=$2
	shift 2
	local flags=(-f "$ROOT/Containerfile" -t "$image" "$@")
	# chroot isolation needs no runtime for RUN steps (the file has none
	# today; it keeps a future one from depending on the host's cgroups).
	[[ $ENGINE == podman ]] && flags+=(--isolation chroot)
	"${CTR[@]}" build "${flags[@]}" "$context"
}

# image_size IMAGE - the image's size in bytes, as the engine counts it.
image_size() {
	"${CTR[@]}" image inspect --format '{{.Size}}' "$1"
}
