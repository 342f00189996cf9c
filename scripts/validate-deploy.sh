#!/usr/bin/env bash
# Validates the deployment files in deploy/ (for CI, and before a release):
#
#  1. every Kubernetes object in deploy/kubernetes/*.yaml against the Kubernetes API's schemas
#     in strict mode (unknown fields are errors), with kubernetes-validate;
#  2. the same objects for consistency with each other: the Service selects the DaemonSet's
#     pods and names one of their ports, the ServiceMonitor selects the Service and names its
#     port, the DaemonSet's service account exists, the probes name a container port;
#  3. the kustomization's output (`kubectl kustomize`, where kubectl is installed) and the Helm
#     chart's output (`helm lint` and `helm template` with its defaults and with every option
#     on, where helm is installed), through 1 and 2.
#
# kubernetes-validate is installed from PyPI, at a pinned version, into a virtualenv under
# target/ (made once, reused). Its schemas cover the core API only: the ServiceMonitor (a
# Prometheus Operator CRD) has none there, so its schema check is skipped with a message and
# step 2 checks it instead. Any other object without a schema (a misspelt apiVersion or kind)
# fails.
#
#   bash scripts/validate-deploy.sh
#   K8S_VERSIONS="1.33.0" bash scripts/validate-deploy.sh     # other Kubernetes versions
#   DEPLOY_DIR=/tmp/copy/deploy bash scripts/validate-deploy.sh   # another copy of deploy/
#
# Exit status: 0 when everything checked is valid, 1 when something is not (or a tool failed).
set -euo pipefail
cd "$(dirname "$0")/.."

KV_VERSION=1.37.0                       # kubernetes-validate; bundles schemas 1.25 ... 1.37
K8S_VERSIONS=${K8S_VERSIONS:-"1.32.0 1.37.0"}  # oldest minor we support, newest bundled
DEPLOY_DIR=${DEPLOY_DIR:-deploy}
VENV=${DEPLOY_VENV:-target/deploy-venv}
CRD_KINDS="ServiceMonitor"              # kinds without a schema in kubernetes-validate

passed=0
failed=0
skipped=0
inputs=0
pass() { passed=$((passed + 1)); echo "ok      $*"; }
fail() { failed=$((failed + 1)); echo "FAILED  $*"; }
skip() { skipped=$((skipped + 1)); echo "SKIPPED $*"; }

# --- the validator ------------------------------------------------------------------------------
if [ "$("$VENV/bin/kubernetes-validate" --version 2>/dev/null)" != "$KV_VERSION" ]; then
    echo "# installing kubernetes-validate $KV_VERSION into $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    if ! "$VENV/bin/pip" install --quiet --disable-pip-version-check \
        "kubernetes-validate==$KV_VERSION"; then
        echo "validate-deploy: cannot install kubernetes-validate $KV_VERSION from PyPI" >&2
        exit 1
    fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Schema check of one YAML file (any number of documents), against every K8S_VERSIONS.
# kubernetes-validate exits non-zero on an invalid object and only warns about a missing
# schema; here a missing schema fails too, except for the CRD kinds.
schema_check() {
    local file=$1 label=$2 args=() v out rc=0
    for v in $K8S_VERSIONS; do args+=(-k "$v"); done
    out=$("$VENV/bin/kubernetes-validate" --strict --quiet "${args[@]}" "$file" 2>&1) || rc=$?
    local crd_re
    crd_re="Couldn't find schema for kind ($(echo "$CRD_KINDS" | tr ' ' '|')) with"
    local crd_warnings other
    crd_warnings=$(grep -E "^WARN .*$crd_re" <<<"$out" || true)
    other=$(grep -vE "^WARN .*$crd_re" <<<"$out" | grep -v '^$' || true)
    if [ -n "$crd_warnings" ]; then
        skip "schema of $label: $(grep -oE "kind ($(echo "$CRD_KINDS" | tr ' ' '|'))" \
            <<<"$crd_warnings" | sort -u | sed 's/^kind //' | paste -sd, -) is a CRD" \
            "(no schema in kubernetes-validate; checked in the consistency step)"
    fi
    if [ "$rc" -ne 0 ] || [ -n "$other" ]; then
        [ -n "$other" ] && sed 's/^/        /' <<<"$other"
        fail "schema of $label (Kubernetes $K8S_VERSIONS, strict)"
    else
        pass "schema of $label (Kubernetes $K8S_VERSIONS, strict)"
    fi
}

# Cross-object checks of a set of YAML files taken together.
consistency_check() {
    local label=$1
    shift
    if "$VENV/bin/python" - "$@" <<'PY'; then
import re
import sys

import yaml

docs = []
for path in sys.argv[1:]:
    with open(path) as f:
        docs += [d for d in yaml.safe_load_all(f) if d]

errors = []
def err(msg):
    errors.append(msg)

def ns(o):
    return o.get("metadata", {}).get("namespace", "default")

def name(o):
    return "%s/%s" % (o.get("kind"), o.get("metadata", {}).get("name"))

by_kind = {}
for d in docs:
    by_kind.setdefault(d.get("kind"), []).append(d)
    if not d.get("metadata", {}).get("name"):
        err("%s has no metadata.name" % d.get("kind"))

namespaces = {n["metadata"]["name"] for n in by_kind.get("Namespace", [])}
workloads = by_kind.get("DaemonSet", [])
accounts = {(ns(a), a["metadata"]["name"]) for a in by_kind.get("ServiceAccount", [])}
services = by_kind.get("Service", [])

CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
for o in docs:
    if o.get("kind") not in CLUSTER_SCOPED and namespaces and ns(o) not in namespaces:
        err("%s is in namespace %s, which these files do not create" % (name(o), ns(o)))

# A binding names a role of these files and binds accounts they define.
roles = {r["metadata"]["name"] for r in by_kind.get("ClusterRole", [])}
for b in by_kind.get("ClusterRoleBinding", []):
    ref = b.get("roleRef", {})
    if ref.get("kind") == "ClusterRole" and ref.get("name") not in roles:
        err("%s: roleRef names ClusterRole %s, which these files do not define" % (name(b), ref.get("name")))
    for sub in b.get("subjects", []):
        key = (sub.get("namespace", "default"), sub.get("name"))
        if sub.get("kind") == "ServiceAccount" and by_kind.get("ServiceAccount") is not None \
                and key not in accounts:
            err("%s: binds service account %s/%s, which these files do not define" % ((name(b),) + key))

def container_ports(w):
    return {p.get("name"): p.get("containerPort")
            for c in w["spec"]["template"]["spec"].get("containers", [])
            for p in c.get("ports", [])}

for w in workloads:
    spec = w["spec"]
    pod_labels = spec["template"]["metadata"].get("labels", {})
    sel = spec["selector"].get("matchLabels", {})
    if any(pod_labels.get(k) != v for k, v in sel.items()):
        err("%s: selector %s does not match its pod labels" % (name(w), sel))
    sa = spec["template"]["spec"].get("serviceAccountName")
    if sa and by_kind.get("ServiceAccount") is not None and (ns(w), sa) not in accounts:
        err("%s: service account %s is not defined" % (name(w), sa))
    ports = container_ports(w)
    for c in spec["template"]["spec"].get("containers", []):
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            p = c.get(probe) or {}
            for how in ("httpGet", "tcpSocket"):
                port = (p.get(how) or {}).get("port")
                if isinstance(port, str) and port not in ports:
                    err("%s: %s names port %r, which the container lacks" % (name(w), probe, port))

for s in services:
    sel = s["spec"].get("selector", {})
    targets = [w for w in workloads if ns(w) == ns(s) and all(
        w["spec"]["template"]["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())]
    if workloads and not targets:
        err("%s: selector %s matches no pod template" % (name(s), sel))
    for p in s["spec"].get("ports", []):
        t = p.get("targetPort", p.get("port"))
        for w in targets:
            ports = container_ports(w)
            if isinstance(t, str) and t not in ports:
                err("%s: targetPort %r is not a port of %s" % (name(s), t, name(w)))
            if isinstance(t, int) and t not in ports.values():
                err("%s: targetPort %d is not a port of %s" % (name(s), t, name(w)))

DURATION = re.compile(r"^([0-9]+(ms|s|m|h))+$")
for m in by_kind.get("ServiceMonitor", []):
    if m.get("apiVersion") != "monitoring.coreos.com/v1":
        err("%s: apiVersion %r, not monitoring.coreos.com/v1" % (name(m), m.get("apiVersion")))
    spec = m.get("spec", {})
    sel = spec.get("selector", {}).get("matchLabels", {})
    wanted = spec.get("namespaceSelector", {}).get("matchNames") or [ns(m)]
    matched = [s for s in services if ns(s) in wanted and all(
        s["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())]
    if not matched:
        err("%s: selector %s matches no Service in %s" % (name(m), sel, wanted))
    if not spec.get("endpoints"):
        err("%s: no endpoints" % name(m))
    for e in spec.get("endpoints", []):
        for s in matched:
            names = [p.get("name") for p in s["spec"].get("ports", [])]
            if e.get("port") not in names:
                err("%s: endpoint port %r is not a port name of %s" % (name(m), e.get("port"), name(s)))
        for key in ("interval", "scrapeTimeout"):
            if key in e and not DURATION.match(str(e[key])):
                err("%s: %s %r is not a Prometheus duration" % (name(m), key, e[key]))

for e in errors:
    print("        " + e)
sys.exit(1 if errors else 0)
PY
        pass "consistency of $label"
    else
        fail "consistency of $label"
    fi
}

# Checks one input: a list of files taken together.
check() {
    local label=$1
    shift
    inputs=$((inputs + 1))
    local all="$work/input-$inputs.yaml" f
    for f in "$@"; do
        cat "$f"
        printf '\n---\n'
    done >"$all"
    local objects
    objects=$(grep -c '^kind:' "$all" || true)
    if [ "$objects" -eq 0 ]; then
        fail "$label: no Kubernetes objects"
        return
    fi
    schema_check "$all" "$label ($objects objects)"
    consistency_check "$label ($objects objects)" "$all"
}

# --- 1, 2: the plain manifests ------------------------------------------------------------------
manifests=()
for f in "$DEPLOY_DIR"/kubernetes/*.yaml; do
    case "$(basename "$f")" in
        kustomization.yaml) echo "# $f: not a Kubernetes object (its output is checked below)" ;;
        *) manifests+=("$f") ;;
    esac
done
if [ ${#manifests[@]} -eq 0 ]; then
    fail "no manifests in $DEPLOY_DIR/kubernetes"
else
    check "$DEPLOY_DIR/kubernetes/*.yaml" "${manifests[@]}"
fi

# --- 3: kustomize -------------------------------------------------------------------------------
if command -v kubectl >/dev/null; then
    if kubectl kustomize "$DEPLOY_DIR/kubernetes" >"$work/kustomize.yaml" 2>"$work/kustomize.err"; then
        check "kubectl kustomize $DEPLOY_DIR/kubernetes" "$work/kustomize.yaml"
    else
        sed 's/^/        /' "$work/kustomize.err"
        fail "kubectl kustomize $DEPLOY_DIR/kubernetes"
    fi
else
    skip "kustomize: kubectl not installed"
fi

# --- 3: helm ------------------------------------------------------------------------------------
chart="$DEPLOY_DIR/helm/dcgm-exporter"
if command -v helm >/dev/null; then
    if helm lint --strict "$chart" >"$work/lint.out" 2>&1; then
        pass "helm lint --strict $chart"
    else
        sed 's/^/        /' "$work/lint.out"
        fail "helm lint --strict $chart"
    fi
    # The defaults, and every optional part switched on.
    all_on=(--set serviceMonitor.enabled=true --set remoteHostengine=nv-hostengine:5555
        --set kubernetes.draResourceSlices=true --set hostnameLabel=Hostname
        --set kubernetes.podLabels=true --set 'kubernetes.podLabelAllowlist={^app\\.,team}'
        --set runtimeClassName=nvidia --set priorityClassName=system-node-critical
        --set 'extraArgs={--collectors,/etc/dcgm-exporter/counters.csv}'
        --set 'podAnnotations.example\.com/note=x')
    for variant in defaults all-on; do
        set_args=()
        [ "$variant" = all-on ] && set_args=("${all_on[@]}")
        if helm template dcgm-exporter "$chart" --namespace gpu-monitoring "${set_args[@]}" \
            >"$work/helm-$variant.yaml" 2>"$work/helm.err"; then
            check "helm template ($variant)" "$work/helm-$variant.yaml"
        else
            sed 's/^/        /' "$work/helm.err"
            fail "helm template ($variant)"
        fi
    done
else
    skip "helm: not installed"
fi

echo "validate-deploy: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
