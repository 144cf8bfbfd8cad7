#!/usr/bin/env python3
"""kube-spec-check.py FILE.json...: the objects kube_spec builds (one
object, or a v1 List of them, per file) checked as Kubernetes would take
them, for tests/kube-spec.test.  Prints one line per problem, "FILE:
problem", and exits 1 when there is one.

- Debian's python3-kubernetes deserialises each object into its model
  (V1Pod, V1NetworkPolicy, ...; the client's own checks of required
  fields run) and serialises it back: nothing may be dropped, or every
  field paddock sent is one this client does not know.  The one exception
  is a field newer than the client (NEWER), named.
- Names are DNS-1123 labels (a Pod's too), label keys and values are
  valid, quantities parse (kubernetes.utils.parse_quantity), CIDRs are
  CIDRs.
- A Pod meets the Pod Security Standards, profile "restricted" (it
  includes "baseline"), as kubernetes.io/docs/concepts/security/
  pod-security-standards/ writes them out, control by control below.
"""
import ipaddress
import json
import re
import sys

import kubernetes.client
from kubernetes.utils import parse_quantity

# Fields of the objects kube_spec builds that python3-kubernetes 22.6
# (Kubernetes 1.22) predates; the npm schemas (1.27) check them.
NEWER = {("Pod", "spec.hostUsers"): "1.25"}

MODELS = {
    ("v1", "Pod"): "V1Pod",
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "ServiceAccount"): "V1ServiceAccount",
    ("v1", "ResourceQuota"): "V1ResourceQuota",
    ("v1", "LimitRange"): "V1LimitRange",
    ("networking.k8s.io/v1", "NetworkPolicy"): "V1NetworkPolicy",
}

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

problems = []


def bad(where, what):
    problems.append("%s: %s" % (where, what))


class Answer:
    def __init__(self, data):
        self.data = data


def diff(a, b, path, out):
    """Paths in a that b lacks or has otherwise."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k, v in a.items():
            p = path + "." + k if path else k
            if k not in b:
                out.append(p)
            else:
                diff(v, b[k], p, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, "%s.%d" % (path, i), out)
    elif a != b:
        out.append(path + " (%r became %r)" % (a, b))


def roundtrip(where, obj):
    key = (obj.get("apiVersion"), obj.get("kind"))
    model = MODELS.get(key)
    if not model:
        return bad(where, "no model for %s %s" % key)
    api = kubernetes.client.ApiClient()
    try:
        m = api.deserialize(Answer(json.dumps(obj)), model)
    except (ValueError, TypeError) as e:
        return bad(where, "python3-kubernetes refuses it as %s: %s" % (model, e))
    back = api.sanitize_for_serialization(m)
    lost = []
    diff(obj, back, "", lost)
    for p in lost:
        if (obj["kind"], p) in NEWER:
            continue
        bad(where, "python3-kubernetes dropped or changed %s (%s)" % (p, model))


def check_meta(where, obj):
    md = obj.get("metadata") or {}
    name = md.get("name", "")
    if not (DNS_LABEL.match(name) and len(name) <= 63):
        bad(where, "metadata.name %r is not a DNS-1123 label" % name)
    ns = md.get("namespace")
    if ns is not None and not (DNS_LABEL.match(ns) and len(ns) <= 63):
        bad(where, "metadata.namespace %r is not a DNS-1123 label" % ns)
    for k, v in (md.get("labels") or {}).items():
        prefix, _, nm = k.rpartition("/")
        if prefix and not (DNS_SUBDOMAIN.match(prefix) and len(prefix) <= 253):
            bad(where, "label key %r: bad prefix" % k)
        if not (LABEL_NAME.match(nm) and len(nm) <= 63):
            bad(where, "label key %r: bad name" % k)
        if not (isinstance(v, str) and LABEL_VALUE.match(v) and len(v) <= 63):
            bad(where, "label %s: bad value %r" % (k, v))


def quantities(where, obj, path=""):
    """Every resources, sizeLimit, hard, default, max ... value parses."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = path + "." + k if path else k
            if k in ("limits", "requests", "hard", "default", "defaultRequest", "max", "min") and isinstance(v, dict):
                for r, q in v.items():
                    if r == "pods" or r.startswith(("services", "count/")):
                        if not (isinstance(q, str) and q.isdigit()):
                            bad(where, "%s.%s: %r is not a count" % (p, r, q))
                        continue
                    try:
                        if parse_quantity(q) < 0:
                            raise ValueError("negative")
                    except (ValueError, TypeError) as e:
                        bad(where, "%s.%s: %r is not a quantity (%s)" % (p, r, q, e))
            elif k == "sizeLimit":
                try:
                    parse_quantity(v)
                except (ValueError, TypeError) as e:
                    bad(where, "%s: %r is not a quantity (%s)" % (p, v, e))
            elif k == "cidr":
                try:
                    ipaddress.ip_network(v, strict=False)
                    if not re.match(r"^[0-9a-fA-F.:]+/[0-9]+$", v):
                        raise ValueError("not ADDRESS/LENGTH")
                except ValueError as e:
                    bad(where, "%s: %r is not a CIDR (%s)" % (p, v, e))
            else:
                quantities(where, v, p)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            quantities(where, v, "%s.%d" % (path, i))


# ---- the Pod Security Standards, as written on kubernetes.io ----

BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                 "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}


def pss_restricted(where, pod):
    spec = pod.get("spec") or {}
    psc = spec.get("securityContext") or {}
    conts = []
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(kind) or []):
            conts.append(("spec.%s[%d]" % (kind, i), c, c.get("securityContext") or {}))

    def fail(control, what):
        bad(where, "PSS %s: %s" % (control, what))

    # Baseline: HostProcess
    if (psc.get("windowsOptions") or {}).get("hostProcess") not in (None, False):
        fail("HostProcess", "spec.securityContext.windowsOptions.hostProcess")
    for p, c, sc in conts:
        if (sc.get("windowsOptions") or {}).get("hostProcess") not in (None, False):
            fail("HostProcess", p + ".securityContext.windowsOptions.hostProcess")
    # Baseline: Host Namespaces
    for f in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(f) not in (None, False):
            fail("Host Namespaces", "spec." + f)
    # Baseline: Privileged Containers
    for p, c, sc in conts:
        if sc.get("privileged") not in (None, False):
            fail("Privileged Containers", p)
    # Baseline: Capabilities (only the default set added)
    for p, c, sc in conts:
        for cap in (sc.get("capabilities") or {}).get("add") or []:
            if cap not in BASELINE_CAPS:
                fail("Capabilities", "%s adds %s" % (p, cap))
    # Baseline: HostPath Volumes
    for v in spec.get("volumes") or []:
        if "hostPath" in v:
            fail("HostPath Volumes", v.get("name"))
    # Baseline: Host Ports
    for p, c, sc in conts:
        for port in c.get("ports") or []:
            if port.get("hostPort") not in (None, 0):
                fail("Host Ports", p)
    # Baseline: AppArmor
    if (psc.get("appArmorProfile") or {}).get("type") not in (None, "RuntimeDefault", "Localhost"):
        fail("AppArmor", "spec.securityContext.appArmorProfile")
    for p, c, sc in conts:
        if (sc.get("appArmorProfile") or {}).get("type") not in (None, "RuntimeDefault", "Localhost"):
            fail("AppArmor", p)
    for k, v in ((pod.get("metadata") or {}).get("annotations") or {}).items():
        if k.startswith("container.apparmor.security.beta.kubernetes.io/") and not (
                v == "runtime/default" or v.startswith("localhost/")):
            fail("AppArmor", k)
    # Baseline: SELinux
    for p, sc in [("spec", psc)] + [(p, sc) for p, c, sc in conts]:
        se = sc.get("seLinuxOptions") or {}
        if se.get("type", "") not in SELINUX_TYPES or se.get("user", "") or se.get("role", ""):
            fail("SELinux", p)
    # Baseline: /proc Mount Type
    for p, c, sc in conts:
        if sc.get("procMount") not in (None, "Default"):
            fail("/proc Mount Type", p)
    # Baseline: Seccomp (never Unconfined)
    for p, sc in [("spec", psc)] + [(p, sc) for p, c, sc in conts]:
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            fail("Seccomp", p)
    # Baseline: Sysctls
    for s in psc.get("sysctls") or []:
        if s.get("name") not in SAFE_SYSCTLS:
            fail("Sysctls", s.get("name"))
    # Restricted: Volume Types
    for v in spec.get("volumes") or []:
        kinds = [k for k in v if k != "name"]
        if not kinds or any(k not in RESTRICTED_VOLUMES for k in kinds):
            fail("Volume Types", "%s: %s" % (v.get("name"), kinds))
    # Restricted: Privilege Escalation (false, set on every container)
    for p, c, sc in conts:
        if sc.get("allowPrivilegeEscalation") is not False:
            fail("Privilege Escalation", p)
    # Restricted: Running as Non-root
    pod_nonroot = psc.get("runAsNonRoot") is True
    for p, c, sc in conts:
        v = sc.get("runAsNonRoot")
        if v is False or (v is None and not pod_nonroot):
            fail("Running as Non-root", p)
    # Restricted: Running as Non-root user
    if psc.get("runAsUser") == 0:
        fail("Running as Non-root user", "spec.securityContext.runAsUser")
    for p, c, sc in conts:
        if sc.get("runAsUser") == 0:
            fail("Running as Non-root user", p)
    # Restricted: Seccomp (RuntimeDefault or Localhost, on the pod or on each)
    ok_types = ("RuntimeDefault", "Localhost")
    pod_seccomp = (psc.get("seccompProfile") or {}).get("type") in ok_types
    for p, c, sc in conts:
        t = (sc.get("seccompProfile") or {}).get("type")
        if t is None and not pod_seccomp or t is not None and t not in ok_types:
            fail("Seccomp", p)
    # Restricted: Capabilities (drop ALL; add only NET_BIND_SERVICE)
    for p, c, sc in conts:
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            fail("Capabilities", p + " does not drop ALL")
        for cap in caps.get("add") or []:
            if cap != "NET_BIND_SERVICE":
                fail("Capabilities", "%s adds %s" % (p, cap))


def check(where, obj):
    if obj.get("kind") == "List" and obj.get("apiVersion") == "v1":
        for i, it in enumerate(obj.get("items") or []):
            check("%s items.%d" % (where, i), it)
        return
    roundtrip(where, obj)
    check_meta(where, obj)
    quantities(where, obj)
    if obj.get("kind") == "Pod":
        pss_restricted(where, obj)


def main():
    for f in sys.argv[1:]:
        with open(f) as fh:
            check(f.rsplit("/", 1)[-1], json.load(fh))
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
