# Sourced by the scripts that fetch Debian's armhf packages (fetch-debian-linux.sh,
# fetch-debian-xen.sh): an apt index of their own under $1, for armhf only, never the host's.
# Sets APT, the options every apt-get call of theirs takes.
armhf_apt_setup() {
  local dir="$1"
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" "$dir/extract"
  touch "$dir/apt/status"
  APT=(-q -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
       -o "Dir::State::status=$dir/apt/status" -o APT::Architecture=armhf
       -o APT::Architectures::=armhf -o Debug::NoLocking=1)
}
