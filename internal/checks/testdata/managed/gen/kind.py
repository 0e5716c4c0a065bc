import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

c = Cluster("kind", "2026-11-28T10:05:00Z")
c.pod_cidr = "10.244.0"
for ns in ("default", "kube-node-lease", "kube-public", "kube-system", "local-path-storage"):
    c.namespace(ns)

# kind v0.32.0's default node image kindest/node:v1.36.1 on its base image
# (Debian trixie, containerd v2.3.1): one control plane, two workers. The
# kernel is the host's.
VER = "v1.36.1"
nodes = []
for name, ip, cp in (("kind-control-plane", "172.18.0.3", True), ("kind-worker", "172.18.0.2", False),
                     ("kind-worker2", "172.18.0.4", False)):
    labels = {}
    taints = None
    if cp:
        labels = {"node-role.kubernetes.io/control-plane": "", "node.kubernetes.io/exclude-from-external-load-balancers": ""}
        taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    c.node(name, labels, f"kind://docker/kind/{name}",
           {"osImage": "Debian GNU/Linux 13 (trixie)", "kernelVersion": "6.8.0-88-generic",
            "containerRuntimeVersion": "containerd://2.3.1", "kubeletVersion": VER},
           ip, taints=taints, capacity={"cpu": "8", "memory": "32589268Ki", "pods": "110", "ephemeral-storage": "490617784Ki"})
    nodes.append(c.nodes[-1])
cp_node, workers = nodes[0], nodes[1:]

# Control-plane static pods (kubeadm): mirror pods owned by the Node.
CP_TOL = [{"operator": "Exists", "effect": "NoExecute"}]
for comp, image, cmd in (
        ("etcd", "registry.k8s.io/etcd:3.6.6-0", ["etcd", "--advertise-client-urls=https://172.18.0.3:2379",
                                                   "--data-dir=/var/lib/etcd", "--listen-client-urls=https://127.0.0.1:2379,https://172.18.0.3:2379"]),
        ("kube-apiserver", f"registry.k8s.io/kube-apiserver:{VER}", ["kube-apiserver", "--advertise-address=172.18.0.3",
                                                                     "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
                                                                     "--secure-port=6443", "--service-cluster-ip-range=10.96.0.0/16"]),
        ("kube-controller-manager", f"registry.k8s.io/kube-controller-manager:{VER}",
         ["kube-controller-manager", "--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16", "--leader-elect=true"]),
        ("kube-scheduler", f"registry.k8s.io/kube-scheduler:{VER}", ["kube-scheduler", "--leader-elect=true"])):
    probe = {}
    if comp == "etcd":
        # kubeadm's etcd liveness probe since kubernetes/kubernetes#124465
        # (kubernetes/kubeadm#3039): HTTP /livez on the localhost metrics
        # port, with the thresholds of etcd-io/etcd#13340's manifest.
        probe = {"livenessProbe": {"httpGet": {"host": "127.0.0.1", "path": "/livez", "port": 2381, "scheme": "HTTP"},
                                   "failureThreshold": 8, "initialDelaySeconds": 10, "periodSeconds": 10,
                                   "timeoutSeconds": 15}}
    tmpl = {"metadata": {"labels": {"component": comp, "tier": "control-plane"}},
            "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "priority": 2000001000,
                     "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}, "tolerations": CP_TOL,
                     "containers": [ctr(comp, image, command=cmd, resources={"requests": {"cpu": "100m"}}, **probe)]}}
    c.pod(f"{comp}-{cp_node['name']}", "kube-system", tmpl, cp_node, host_network=True, mirror=True,
          owner={"apiVersion": "v1", "kind": "Node", "name": cp_node["name"], "uid": uid("kind", "Node", "", cp_node["name"]),
                 "controller": True}, extra_tolerations=[])

# kindnet, as pkg/build/nodeimage/const_cni.go writes it.
kindnet = {"metadata": {"labels": {"app": "kindnet", "k8s-app": "kindnet", "tier": "node"}},
           "spec": {"hostNetwork": True, "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": [{"operator": "Exists"}],
                    "priorityClassName": "system-node-critical", "serviceAccountName": "kindnet",
                    "containers": [ctr("kindnet-cni", "docker.io/kindest/kindnetd:v20260528-9350166c",
                                       env=[{"name": "HOST_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.hostIP"}}},
                                            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
                                            {"name": "POD_SUBNET", "value": "10.244.0.0/16"}],
                                       resources={"requests": {"cpu": "100m", "memory": "50Mi"}},
                                       securityContext={"privileged": False, "capabilities": {"add": ["NET_RAW", "NET_ADMIN"]}},
                                       volumeMounts=[{"name": "cni-cfg", "mountPath": "/etc/cni/net.d"},
                                                     {"name": "xtables-lock", "mountPath": "/run/xtables.lock"},
                                                     {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True},
                                                     {"name": "nri-plugin", "mountPath": "/var/run/nri"}])],
                    "volumes": [hp("cni-cfg", "/etc/cni/net.d"), hp("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
                                hp("lib-modules", "/lib/modules"), hp("nri-plugin", "/var/run/nri")]}}
c.daemonset("kindnet", "kube-system", {"app": "kindnet", "k8s-app": "kindnet", "tier": "node"},
            dict(kindnet, selectorKeys=["app"]), nodes, host_network=True)

kp = {"metadata": {"labels": {"k8s-app": "kube-proxy"}},
      "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "serviceAccountName": "kube-proxy",
               "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": [{"operator": "Exists"}],
               "containers": [ctr("kube-proxy", f"registry.k8s.io/kube-proxy:{VER}",
                                  command=["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                                           "--hostname-override=$(NODE_NAME)"],
                                  env=[{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                                  resources={}, securityContext={"privileged": True},
                                  volumeMounts=[{"name": "kube-proxy", "mountPath": "/var/lib/kube-proxy"},
                                                {"name": "xtables-lock", "mountPath": "/run/xtables.lock"},
                                                {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True}])],
               "volumes": [{"name": "kube-proxy", "configMap": {"name": "kube-proxy", "defaultMode": 420}},
                           hp("xtables-lock", "/run/xtables.lock", "FileOrCreate"), hp("lib-modules", "/lib/modules")]}}
c.daemonset("kube-proxy", "kube-system", {"k8s-app": "kube-proxy"}, kp, nodes, host_network=True)

dns = {"metadata": {"labels": {"k8s-app": "kube-dns"}},
       "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "coredns", "dnsPolicy": "Default",
                "nodeSelector": {"kubernetes.io/os": "linux"},
                "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                                {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
                "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                    "labelSelector": {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]},
                    "topologyKey": "kubernetes.io/hostname"}}]}},
                "containers": [ctr("coredns", "registry.k8s.io/coredns/coredns:v1.12.1", args=["-conf", "/etc/coredns/Corefile"],
                                   ports=[{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                          {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                          {"containerPort": 9153, "name": "metrics", "protocol": "TCP"}],
                                   resources={"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                                   livenessProbe={"httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 60},
                                   readinessProbe={"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"}},
                                   securityContext={"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                                    "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}},
                                   volumeMounts=[{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}])],
                "volumes": [{"name": "config-volume", "configMap": {"name": "coredns", "defaultMode": 420,
                                                                     "items": [{"key": "Corefile", "path": "Corefile"}]}}]}}
# kubeadm schedules CoreDNS before the workers join: both replicas on the
# control plane (they tolerate its taint).
_, dns_pods = c.deployment("coredns", "kube-system", {"k8s-app": "kube-dns"}, dns, 2, [cp_node],
                           strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}})
c.service("kube-dns", "kube-system", {"k8s-app": "kube-dns"},
          [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
           {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
           {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}],
          "10.96.0.10", labels={"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
          annotations={"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}, pods=dns_pods)

# local-path-provisioner, as pkg/build/nodeimage/const_storage.go writes it.
lpp = {"metadata": {"labels": {"app": "local-path-provisioner"}},
       "spec": {"nodeSelector": {"kubernetes.io/os": "linux"}, "serviceAccountName": "local-path-provisioner-service-account",
                "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "effect": "NoSchedule"},
                                {"key": "node-role.kubernetes.io/master", "operator": "Equal", "effect": "NoSchedule"}],
                "containers": [ctr("local-path-provisioner", "docker.io/kindest/local-path-provisioner:v20260521-9fb22683",
                                   command=["local-path-provisioner", "--debug", "start", "--helper-image",
                                            "docker.io/kindest/local-path-helper:v20260131-7181c60a", "--config", "/etc/config/config.json"],
                                   env=[{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
                                        {"name": "CONFIG_MOUNT_PATH", "value": "/etc/config/"}],
                                   resources={}, volumeMounts=[{"name": "config-volume", "mountPath": "/etc/config/"}])],
                "volumes": [{"name": "config-volume", "configMap": {"name": "local-path-config", "defaultMode": 420}}]}}
c.deployment("local-path-provisioner", "local-path-storage", {}, lpp, 1, [cp_node])

# CoreDNS could not be scheduled until the control-plane node was Ready.
c.event(dns_pods[0], "FailedScheduling",
        "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        1, "2026-11-28T10:05:21Z", "2026-11-28T10:05:21Z", "default-scheduler")

# kind's local-path class.
c.storageclass("standard", "rancher.io/local-path", default=True)

# kubeadm's kube-proxy ConfigMap, mounted at /var/lib/kube-proxy; kind's
# default kubeProxyMode is iptables (kind.sigs.k8s.io/docs/user/configuration,
# "kube-proxy mode"). Only the fields kubegap reads are written.
c.configmap("kube-system", "kube-proxy", {"config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                                                          "kind: KubeProxyConfiguration\nmode: iptables\n"})

c.write(sys.argv[1], BUILTIN_API_RESOURCES,
        version_doc(VER, hexid(40, "kind", "commit"), "2026-05-20T10:00:00Z", "go1.26.2"))
