#!/usr/bin/env bash
# deps.sh - installs what gpuplane needs to build and test on Debian
# bookworm (run as root, or it uses sudo).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libfyaml-dev libjansson-dev libcmocka-dev libglpk-dev
      libcurl4-openssl-dev libmicrohttpd-dev libgnutls28-dev openssl
      libgrpc-dev libprotobuf-c-dev protobuf-c-compiler
      clang libclang-rt-14-dev clang-format valgrind python3)
# python3 for the CLI tests that talk to the API double and for
# bench/philly_orders.sh (tests/cli/philly_results.sh)
# Node.js and npm for the kubelet stand-in: Debian's, unless a Node.js with
# its own npm is installed already (NodeSource's nodejs conflicts with
# Debian's npm package, and apt-get would refuse the whole list)
command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null
# the kubelet stand-in's modules (tests/kubelet: @grpc/grpc-js, @grpc/proto-loader)
if command -v npm >/dev/null; then
    (cd "$(dirname "$0")/../tests/kubelet" && npm ci --no-audit --no-fund >/dev/null)
fi
