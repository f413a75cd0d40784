#!/usr/bin/env python3
"""gen_k8s_fields.py - writes data/k8s-fields.txt, the field tree of every
kind the manifest reader accepts, from Kubernetes' own definitions:

  * the Kubernetes v1.35 OpenAPI v3 document for api/v1 (Pod, PodSpec,
    Container, ObjectMeta, ... ) in ../shared/k8s/schemas,
  * the PodGroup CRDs of scheduler-plugins and Volcano in ../shared/k8s,
  * data/k8s-fields-extra.txt: the kinds those do not cover (batch/v1 Job,
    apps/v1 Deployment, scheduling.k8s.io/v1 PriorityClass, Volcano's and
    gpuplane's Queue), written by hand from the API reference.

Only the types reachable from the kinds are written. The output is
committed: the build (cmake/k8s_fields.cmake) compiles it into C and
needs neither python nor ../shared. Run after changing an input:

    python3 scripts/gen_k8s_fields.py            # rewrite data/k8s-fields.txt
    python3 scripts/gen_k8s_fields.py --check    # exit 1 if it is stale
"""
import argparse
import hashlib
import json
import os
import sys

import yaml  # PyYAML, for the CRDs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE_DOC = "k8s/schemas/api__v1_openapi.json"
CRDS = [
    # (file, apiVersion, type-name prefix)
    ("k8s/scheduling.x-k8s.io_podgroups.yaml", "scheduling.x-k8s.io/v1alpha1", "x-k8s"),
    ("k8s/scheduling.volcano.sh_podgroups.yaml", "scheduling.volcano.sh/v1beta1", "volcano"),
]
CORE_PREFIXES = ("io.k8s.api.core.v1.", "io.k8s.apimachinery.pkg.apis.meta.v1.")
KINDS = ("scalar", "scalars", "object", "list", "map", "mapof", "any")


class Tree:
    """Types (name -> {field: (kind, type or None)}) and kinds (kind, api, type)."""

    def __init__(self):
        self.types = {}
        self.kinds = []

    def add_type(self, name, fields, where):
        if name in self.types:
            sys.exit(f"gen_k8s_fields: type {name} defined twice ({where})")
        self.types[name] = fields


def short_name(ref):
    for p in CORE_PREFIXES:
        if ref.startswith(p):
            return ref[len(p):]
    return None


def read_core(path, tree):
    """The core/v1 and meta/v1 types, named without their package."""
    schemas = json.load(open(path))["components"]["schemas"]
    owner = {}
    for ref in schemas:
        name = short_name(ref)
        if name is None:
            continue
        if name in owner:
            sys.exit(f"gen_k8s_fields: {ref} and {owner[name]} share the name {name}")
        owner[name] = ref

    def ref_of(p):
        if "$ref" in p:
            return p["$ref"].rsplit("/", 1)[1]
        all_of = p.get("allOf")
        if all_of and len(all_of) == 1 and "$ref" in all_of[0]:
            return all_of[0]["$ref"].rsplit("/", 1)[1]
        return None

    def kind_of(p):
        ref = ref_of(p)
        if ref:
            s = schemas[ref]
            if s.get("properties"):
                name = short_name(ref)
                if name is None:
                    sys.exit(f"gen_k8s_fields: {ref} is outside core/v1 and meta/v1")
                return ("object", name)
            if s.get("type") == "object":
                return ("any", None)  # FieldsV1, RawExtension: free-form
            return ("scalar", None)  # Quantity, Time, IntOrString
        if p.get("x-kubernetes-preserve-unknown-fields"):
            return ("any", None)
        t = p.get("type")
        if t == "array":
            k, ty = kind_of(p.get("items", {}))
            return ("list", ty) if k == "object" else ("scalars", None) if k == "scalar" else ("any", None)
        if t == "object":
            ap = p.get("additionalProperties")
            if isinstance(ap, dict):
                k, ty = kind_of(ap)
                return ("mapof", ty) if k == "object" else ("map", None)
            return ("any", None)
        return ("scalar", None)

    for ref, s in schemas.items():
        name = short_name(ref)
        if name is None or not s.get("properties"):
            continue
        tree.add_type(name, {f: kind_of(p) for f, p in s["properties"].items()}, path)


def read_crd(path, api, prefix, tree):
    """A CRD's served version: its inline objects named by their path."""
    crd = yaml.safe_load(open(path))
    kind = crd["spec"]["names"]["kind"]
    version = api.split("/", 1)[1]
    schema = None
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            schema = v["schema"]["openAPIV3Schema"]
    if schema is None:
        sys.exit(f"gen_k8s_fields: {path} has no version {version}")

    def kind_of(p, name):
        if p.get("x-kubernetes-preserve-unknown-fields"):
            return ("any", None)
        t = p.get("type")
        if t == "array":
            k, ty = kind_of(p.get("items", {}), name)
            return ("list", ty) if k == "object" else ("scalars", None) if k == "scalar" else ("any", None)
        if t == "object" or "properties" in p:
            if p.get("properties"):
                obj(p, name)
                return ("object", name)
            ap = p.get("additionalProperties")
            if isinstance(ap, dict):
                k, ty = kind_of(ap, name)
                return ("mapof", ty) if k == "object" else ("map", None)
            return ("any", None)
        return ("scalar", None)

    def obj(s, name):
        fields = {}
        for f, p in s["properties"].items():
            if name == root and f == "metadata":
                fields[f] = ("object", "ObjectMeta")  # the API server's, for every CRD
            else:
                fields[f] = kind_of(p, f"{name}.{f}")
        tree.add_type(name, fields, path)

    root = f"{prefix}.{kind}"
    obj(schema, root)
    tree.kinds.append((kind, api, root))


def read_extra(path, tree):
    """Types and kinds in the format of the output, written by hand."""
    fields = None
    for n, line in enumerate(open(path), 1):
        text = line.split("#", 1)[0].rstrip()
        if not text:
            continue
        words = text.split()
        where = f"{path}:{n}"
        if text.startswith("  ") and fields is not None and len(words) in (2, 3):
            if words[1] not in KINDS or (len(words) == 3) != (words[1] in ("object", "list", "mapof")):
                sys.exit(f"gen_k8s_fields: {where}: bad field line")
            fields[words[0]] = (words[1], words[2] if len(words) == 3 else None)
        elif words[0] == "kind" and len(words) == 4:
            tree.kinds.append(tuple(words[1:]))
        elif words[0] == "type" and len(words) == 2:
            fields = {}
            tree.add_type(words[1], fields, where)
        else:
            sys.exit(f"gen_k8s_fields: {where}: expected kind, type or an indented field")


def reachable(tree):
    seen, todo = set(), [t for _, _, t in tree.kinds]
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        if t not in tree.types:
            sys.exit(f"gen_k8s_fields: type {t} is used but not defined")
        seen.add(t)
        todo.extend(ty for _, ty in tree.types[t].values() if ty)
    return sorted(seen)


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def render(tree, inputs):
    out = [
        "# k8s-fields.txt - the fields Kubernetes defines for every kind gpuplane's",
        "# manifest reader accepts: the walk of src/io/k8s_schema.c rejects any other",
        "# (the API server's fieldValidation=Strict). Generated by",
        "# scripts/gen_k8s_fields.py; do not edit (edit k8s-fields-extra.txt or the",
        "# inputs and rerun it). Compiled into C by cmake/k8s_fields.cmake.",
        "#",
        "# Sources: Kubernetes v1.35 OpenAPI v3 (kubernetes/kubernetes",
        "# api/openapi-spec/v3, release-1.35), the PodGroup CRDs of",
        "# kubernetes-sigs/scheduler-plugins and volcano-sh/volcano, and the",
        "# hand-written k8s-fields-extra.txt (its header names its sources).",
        "# Licence: Apache License 2.0, Copyright The Kubernetes Authors and the",
        "# Volcano Authors (data/licenses/Apache-2.0.txt, data/README.md). Inputs (sha256):",
    ]
    for name, path in inputs:
        out.append(f"#   {name} {sha256(path)}")
    out += [
        "#",
        "# kind KIND API-VERSION TYPE: the root type of an object",
        "# type NAME, then its fields, one a line: NAME KIND [TYPE], KIND one of",
        "# scalar, scalars (a list of scalars), object TYPE, list TYPE, map (free-form",
        "# keys to scalars), mapof TYPE, any (not checked). Fields are sorted bytewise.",
        "",
    ]
    for kind, api, ty in sorted(tree.kinds):
        out.append(f"kind {kind} {api} {ty}")
    for t in reachable(tree):
        out.append("")
        out.append(f"type {t}")
        for f in sorted(tree.types[t]):
            k, ty = tree.types[t][f]
            out.append(f"  {f} {k}" + (f" {ty}" if ty else ""))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"),
                    help="the shared reference data (default: ../shared beside the repository)")
    ap.add_argument("--out", default=os.path.join(ROOT, "data", "k8s-fields.txt"))
    ap.add_argument("--check", action="store_true", help="exit 1 if --out is not up to date")
    args = ap.parse_args()

    tree = Tree()
    core = os.path.join(args.shared, CORE_DOC)
    extra = os.path.join(ROOT, "data", "k8s-fields-extra.txt")
    read_core(core, tree)
    inputs = [("shared/" + CORE_DOC, core)]
    tree.kinds.append(("Pod", "v1", "Pod"))
    for rel, api, prefix in CRDS:
        path = os.path.join(args.shared, rel)
        read_crd(path, api, prefix, tree)
        inputs.append(("shared/" + rel, path))
    read_extra(extra, tree)
    inputs.append(("data/k8s-fields-extra.txt", extra))
    text = render(tree, inputs)
    if args.check:
        current = open(args.out).read() if os.path.exists(args.out) else ""
        if current != text:
            sys.exit(f"{args.out} is stale: run scripts/gen_k8s_fields.py")
        return
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}: {len(tree.kinds)} kinds, {len(reachable(tree))} types")


if __name__ == "__main__":
    main()
