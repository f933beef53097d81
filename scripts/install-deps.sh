#!/usr/bin/env bash
# Installs what vtoe needs on Debian/Ubuntu, only if something is missing (fast when all is there).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libsystemc-dev libyaml-cpp-dev libpcap-dev
          libcli11-dev libgtest-dev nlohmann-json3-dev tshark python3-venv iproute2 iputils-ping
          netcat-openbsd ethtool clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The ISS's reference check (tests/iss) builds ARM programs and runs them on qemu-arm as well.
# Optional: where they cannot be installed, those tests are skipped and say so.
iss_packages=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user)
iss_missing=()
for p in "${iss_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || iss_missing+=("$p")
done
if [ ${#iss_missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${iss_missing[*]} (ISS differential tests)"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q --no-install-recommends "${iss_missing[@]}" ||
    { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends "${iss_missing[@]}"; } ||
    echo "install-deps: could not install ${iss_missing[*]}; tests/iss will be skipped"
fi
