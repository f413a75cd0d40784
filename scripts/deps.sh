#!/usr/bin/env bash
# deps.sh - installs what gpuplane needs to build and test on Debian
# bookworm (run as root, or it uses sudo).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libfyaml-dev libjansson-dev libcmocka-dev libglpk-dev
      libcurl4-openssl-dev libmicrohttpd-dev libgnutls28-dev openssl
      libgrpc-dev libprotobuf-c-dev protobuf-c-compiler nodejs npm
      clang libclang-rt-14-dev clang-format valgrind)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null
# the kubelet stand-in's modules (tests/kubelet: @grpc/grpc-js, @grpc/proto-loader)
if command -v npm >/dev/null; then
    (cd "$(dirname "$0")/../tests/kubelet" && npm ci --no-audit --no-fund >/dev/null)
fi
