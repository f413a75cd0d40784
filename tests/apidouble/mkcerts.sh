#!/usr/bin/env bash
# mkcerts.sh DIR - a test CA and the certificates the TLS tests of
# src/kube/ use, made at run time with the openssl CLI (nothing secret is
# committed): ca.crt (the cluster's CA), server.crt for 127.0.0.1 and
# localhost, named.crt for the name kube-api.gpuplane.test alone (no IP:
# what tls-server-name is for), client.crt (a user, CN gpuplane), and
# other-ca.crt with other-client.crt (a CA the server does not trust).
# Keys are P-256, valid one day. Exit 77 when openssl is absent (the tests skip).
set -eu
dir=$1
command -v openssl >/dev/null || exit 77
mkdir -p "$dir"
cd "$dir"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() { # NAME CN
    key "$1.key"
    openssl req -x509 -new -key "$1.key" -out "$1.crt" -days 1 -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}
leaf() { # NAME CA SUBJECT EXTENSIONS
    key "$1.key"
    openssl req -new -key "$1.key" -out "$1.csr" -subj "$3" 2>/dev/null
    printf '%s\n' "$4" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -out "$1.crt" \
        -days 1 -extfile "$1.ext" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
ca ca gpuplane-test-ca
ca other-ca someone-elses-ca
leaf server ca /CN=kube-apiserver \
    "$(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE')"
leaf named ca /CN=kube-api \
    "$(printf 'subjectAltName=DNS:kube-api.gpuplane.test\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE')"
leaf client ca "/O=gpuplane/CN=gpuplane" \
    "$(printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE')"
leaf other-client other-ca "/CN=intruder" \
    "$(printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE')"
