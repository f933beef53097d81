#!/usr/bin/env bash
# Installs what vtoe needs on Debian/Ubuntu, only if something is missing (fast when all is there).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

# The packages of the list that are not installed yet.
missing() {
  local p out=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
  done
  echo "${out[@]}"
}

required=(build-essential cmake ninja-build pkg-config libsystemc-dev libyaml-cpp-dev libpcap-dev
          libcli11-dev libgtest-dev nlohmann-json3-dev tshark python3-venv iproute2 iputils-ping
          netcat-openbsd iperf iperf3 ethtool nftables clang libclang-rt-14-dev libfdt-dev)
read -r -a need <<<"$(missing "${required[@]}")"
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# make builds SystemC itself from the distribution's source package with scripts/build-systemc.sh
# (static and -O3 for the release build, pthread processes for the sanitizer build; nothing to
# install here).

# The ISS's reference check (tests/iss) builds ARM programs and runs them on qemu-arm as well.
# Optional: where they cannot be installed, those tests are skipped and say so.
read -r -a need <<<"$(missing gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user)"
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]} (ISS differential tests)"
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" ||
    { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"; } ||
    echo "install-deps: could not install ${need[*]}; tests/iss will be skipped"
fi

# The system platform's checks (tests/system) run bare-metal programs on qemu-system-arm as well,
# debug with gdb-multiarch, and build a Linux initramfs (cpio; dtc to read device trees).
# Optional: where they cannot be installed, those tests are skipped and say so.
read -r -a need <<<"$(missing qemu-system-arm gdb-multiarch device-tree-compiler cpio)"
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]} (system platform tests)"
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" ||
    { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"; } ||
    echo "install-deps: could not install ${need[*]}; tests/system will be skipped"
fi

# The report page's browser test (tests/scripts/test_report.py) loads the page in headless
# Chromium. Optional: where it cannot be installed, that test is skipped and says so.
read -r -a need <<<"$(missing chromium)"
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]} (report page browser test)"
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" ||
    { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"; } ||
    echo "install-deps: could not install ${need[*]}; the report page's browser test will be skipped"
fi
