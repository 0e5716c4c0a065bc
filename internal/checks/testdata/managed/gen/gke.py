import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

c = Cluster("gke", "2026-11-25T08:00:00Z")
c.pod_cidr = "10.52.1"
for ns in ("default", "kube-node-lease", "kube-public"):
    c.namespace(ns)
c.namespace("kube-system", {"addonmanager.kubernetes.io/mode": "Reconcile"})

# A regional Standard cluster on the Regular channel's default version of
# 2026-09-17 (1.35.8-gke.1036000), default-pool of one e2-standard-4 node
# per zone on Container-Optimized OS, no taints.
VER = "v1.35.8-gke.1036000"
nodes = []
for i, zone in enumerate(("us-central1-a", "us-central1-b", "us-central1-c")):
    grp = hexid(8, "gke", "mig", zone)
    name = f"gke-prod-default-pool-{grp}-{podsuffix(4, 'gke', zone)}"
    labels = {
        "cloud.google.com/gke-nodepool": "default-pool", "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/gke-boot-disk": "pd-balanced", "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-cpu-scaling-level": "4", "cloud.google.com/gke-logging-variant": "DEFAULT",
        "cloud.google.com/gke-max-pods-per-node": "110", "cloud.google.com/gke-provisioning": "standard",
        "cloud.google.com/gke-stack-type": "IPV4", "cloud.google.com/machine-family": "e2",
        "cloud.google.com/private-node": "false",
        "node.kubernetes.io/instance-type": "e2-standard-4", "beta.kubernetes.io/instance-type": "e2-standard-4",
        "topology.kubernetes.io/region": "us-central1", "failure-domain.beta.kubernetes.io/region": "us-central1",
        "topology.kubernetes.io/zone": zone, "failure-domain.beta.kubernetes.io/zone": zone,
        "topology.gke.io/zone": zone,
        "iam.gke.io/gke-metadata-server-enabled": "true",
    }
    c.node(name, labels, f"gce://prod-project-4711/{zone}/{name}",
           {"osImage": "Container-Optimized OS from Google", "kernelVersion": "6.6.97+",
            "containerRuntimeVersion": "containerd://2.0.6", "kubeletVersion": VER},
           f"10.128.0.{11 + i}", capacity={"cpu": "4", "memory": "16375800Ki", "pods": "110", "ephemeral-storage": "98831908Ki"}, reserved_memory_ki=gke_reserved_ki)
    nodes.append(c.nodes[-1])

REG = "gke.gcr.io"
LINUX_NOT_VK = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                          {"key": "cloud.google.com/gke-os-distribution", "operator": "In", "values": ["cos", "ubuntu"]}]}]}}}
TOL_ALL = [{"operator": "Exists", "effect": "NoExecute"}, {"operator": "Exists", "effect": "NoSchedule"},
           {"key": "components.gke.io/gke-managed-components", "operator": "Exists"}]

# kube-proxy runs as a static pod on each GKE Standard node: mirror pods
# owned by the Node, no DaemonSet.
for nd in nodes:
    tmpl = {"metadata": {"labels": {"component": "kube-proxy", "tier": "node"}},
            "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "priority": 2000001000,
                     "tolerations": [{"operator": "Exists", "effect": "NoExecute"}, {"operator": "Exists", "effect": "NoSchedule"}],
                     "containers": [ctr("kube-proxy", f"{REG}/kube-proxy-amd64:{VER}",
                                        command=["/bin/sh", "-c",
                                                 "exec kube-proxy --master=https://34.118.0.2 --kubeconfig=/var/lib/kube-proxy/kubeconfig "
                                                 "--cluster-cidr=10.52.0.0/14 --oom-score-adj=-998 --v=2 "
                                                 "--conntrack-max-per-core=32768 --conntrack-min=131072"],
                                        resources={"requests": {"cpu": "100m"}}, securityContext={"privileged": True},
                                        volumeMounts=[{"name": "varlog", "mountPath": "/var/log"},
                                                      {"name": "kubeconfig", "mountPath": "/var/lib/kube-proxy/kubeconfig"},
                                                      {"name": "iptableslock", "mountPath": "/run/xtables.lock"},
                                                      {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True}])],
                     "volumes": [hp("varlog", "/var/log"), hp("kubeconfig", "/var/lib/kube-proxy/kubeconfig", "FileOrCreate"),
                                 hp("iptableslock", "/run/xtables.lock", "FileOrCreate"), hp("lib-modules", "/lib/modules")]}}
    c.pod(f"kube-proxy-{nd['name']}", "kube-system", tmpl, nd, host_network=True, mirror=True,
          owner={"apiVersion": "v1", "kind": "Node", "name": nd["name"], "uid": uid("gke", "Node", "", nd["name"]), "controller": True},
          extra_tolerations=[])

fluentbit = {"metadata": {"labels": {"component": "fluentbit-gke", "k8s-app": "fluentbit-gke"},
                          "annotations": {"EnableNodeJournal": "false", "EnablePodSecurityPolicy": "false",
                                          "SystemOnlyLogging": "false", "components.gke.io/component-name": "fluentbit",
                                          "monitoring.gke.io/path": "/api/v1/metrics/prometheus"}},
             "spec": {"hostNetwork": True, "dnsPolicy": "Default", "priorityClassName": "system-node-critical",
                      "serviceAccountName": "fluentbit-gke", "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": TOL_ALL,
                      "terminationGracePeriodSeconds": 120,
                      "containers": [
                          ctr("fluentbit", f"{REG}/fluent-bit:v1.8.12-gke.38",
                              resources={"limits": {"memory": "250Mi"}, "requests": {"cpu": "50m", "memory": "100Mi"}},
                              volumeMounts=[{"name": "varrun", "mountPath": "/var/run/google-fluentbit/pos-files"},
                                            {"name": "varlog", "mountPath": "/var/log"},
                                            {"name": "varlibkubeletpods", "mountPath": "/var/lib/kubelet/pods"},
                                            {"name": "varlibdockercontainers", "mountPath": "/var/lib/docker/containers", "readOnly": True},
                                            {"name": "config-volume", "mountPath": "/fluent-bit/etc/"}]),
                          ctr("fluentbit-gke", f"{REG}/fluent-bit-gke-exporter:v0.29.0-gke.4",
                              command=["/fluent-bit-gke-exporter", "--kubernetes-separator=_", "--stackdriver-resource-model=k8s",
                                       "--enable-pod-label-discovery", "--pod-label-dot-replacement=_",
                                       "--split-stdout-stderr", "--logtostderr"],
                              resources={"limits": {"memory": "250Mi"}, "requests": {"cpu": "50m", "memory": "100Mi"}})],
                      "volumes": [hp("varrun", "/var/run/google-fluentbit/pos-files"), hp("varlog", "/var/log"),
                                  hp("varlibkubeletpods", "/var/lib/kubelet/pods"),
                                  hp("varlibdockercontainers", "/var/lib/docker/containers"),
                                  {"name": "config-volume", "configMap": {"name": "fluentbit-gke-config-v1.4.0", "defaultMode": 420}}]}}
c.daemonset("fluentbit-gke", "kube-system", {"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": "fluentbit-gke"},
            dict(fluentbit, selectorKeys=["component", "k8s-app"]), nodes, host_network=True,
            update={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})

gms = {"metadata": {"labels": {"k8s-app": "gke-metadata-server"},
                    "annotations": {"components.gke.io/component-name": "gke-metadata-server"}},
       "spec": {"hostNetwork": True, "dnsPolicy": "Default", "priorityClassName": "system-node-critical",
                "serviceAccountName": "gke-metadata-server", "tolerations": TOL_ALL,
                "nodeSelector": {"beta.kubernetes.io/os": "linux", "iam.gke.io/gke-metadata-server-enabled": "true"},
                "containers": [ctr("gke-metadata-server", f"{REG}/gke-metadata-server:gke_metadata_server_20260812.00_p0",
                                   command=["/gke-metadata-server", "--logtostderr", "--token-exchange-endpoint=https://securetoken.googleapis.com/v1/identitybindingtoken",
                                            "--identity-namespace=prod-project-4711.svc.id.goog", "--passthrough-ksa-list=kube-system:gke-metadata-server"],
                                   resources={"limits": {"memory": "100Mi"}, "requests": {"cpu": "100m", "memory": "100Mi"}},
                                   securityContext={"privileged": True},
                                   volumeMounts=[{"name": "kubelet-credentials", "mountPath": "/var/lib/kubelet/pki", "readOnly": True}])],
                "volumes": [hp("kubelet-credentials", "/var/lib/kubelet/pki", "Directory")]}}
c.daemonset("gke-metadata-server", "kube-system", {"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": "gke-metadata-server"},
            gms, nodes, host_network=True)

# gke-metrics-agent: a DaemonSet without node selector, listed with the
# others in GoogleCloudPlatform/kubeflow-distribution#379.
gma = {"metadata": {"labels": {"component": "gke-metrics-agent", "k8s-app": "gke-metrics-agent"},
                    "annotations": {"components.gke.io/component-name": "gke-metrics-agent"}},
       "spec": {"priorityClassName": "system-node-critical", "serviceAccountName": "gke-metrics-agent",
                "affinity": LINUX_NOT_VK, "tolerations": TOL_ALL,
                "containers": [ctr("gke-metrics-agent", f"{REG}/gke-metrics-agent:1.15.9-gke.0",
                                   command=["/otelsvc", "--config=/conf/gke-metrics-agent-config.yaml",
                                            "--metrics-level=NONE", "--metrics-prefix="],
                                   env=[{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                                   resources={"limits": {"memory": "50Mi"}, "requests": {"cpu": "8m", "memory": "50Mi"}},
                                   volumeMounts=[{"name": "gke-metrics-agent-config-vol", "mountPath": "/conf"}])],
                "volumes": [{"name": "gke-metrics-agent-config-vol", "configMap": {"name": "gke-metrics-agent-conf", "defaultMode": 420}}]}}
c.daemonset("gke-metrics-agent", "kube-system", {"addonmanager.kubernetes.io/mode": "Reconcile", "component": "gke-metrics-agent",
                                                 "k8s-app": "gke-metrics-agent"}, dict(gma, selectorKeys=["component"]), nodes)

netd = {"metadata": {"labels": {"app": "netd"}},
        "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "serviceAccountName": "netd",
                 "affinity": LINUX_NOT_VK, "tolerations": TOL_ALL,
                 "initContainers": [ctr("install-cni", f"{REG}/netd:v0.10.2-gke.1",
                                        command=["sh", "/install-cni.sh"],
                                        env=[{"name": "CNI_SPEC_TEMPLATE", "valueFrom": {"configMapKeyRef": {"name": "netd-config", "key": "cni_spec_template"}}},
                                             {"name": "CNI_SPEC_NAME", "value": "10-gke-ptp.conflist"}],
                                        securityContext={"privileged": True},
                                        volumeMounts=[{"name": "cni-net-dir", "mountPath": "/host/etc/cni/net.d"}])],
                 "containers": [ctr("netd", f"{REG}/netd:v0.10.2-gke.1", args=["--enable-policy-routing=true", "--v=3"],
                                    securityContext={"privileged": True, "capabilities": {"add": ["NET_ADMIN", "SYS_ADMIN"]}})],
                 "volumes": [hp("cni-net-dir", "/etc/cni/net.d")]}}
c.daemonset("netd", "kube-system", {"addonmanager.kubernetes.io/mode": "Reconcile", "app": "netd"}, netd, nodes, host_network=True)

pdcsi = {"metadata": {"labels": {"app": "gcp-compute-persistent-disk-csi-driver"},
                      "annotations": {"components.gke.io/component-name": "pdcsi"}},
         "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical", "serviceAccountName": "csi-gce-pd-node-sa",
                  "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": [{"operator": "Exists"}],
                  "containers": [
                      ctr("csi-driver-registrar", f"{REG}/csi-node-driver-registrar:v2.14.0-gke.6",
                          args=["--v=5", "--csi-address=/csi/csi.sock",
                                "--kubelet-registration-path=/var/lib/kubelet/plugins/pd.csi.storage.gke.io/csi.sock"],
                          volumeMounts=[{"name": "plugin-dir", "mountPath": "/csi"}, {"name": "registration-dir", "mountPath": "/registration"}]),
                      ctr("gce-pd-driver", f"{REG}/gcp-compute-persistent-disk-csi-driver:v1.20.3-gke.0",
                          args=["--v=5", "--endpoint=unix:/csi/csi.sock", "--run-controller-service=false"],
                          securityContext={"privileged": True},
                          volumeMounts=[{"name": "kubelet-dir", "mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional"},
                                        {"name": "plugin-dir", "mountPath": "/csi"}, {"name": "device-dir", "mountPath": "/dev"},
                                        {"name": "udev-rules-etc", "mountPath": "/etc/udev"},
                                        {"name": "udev-rules-lib", "mountPath": "/lib/udev"},
                                        {"name": "udev-socket", "mountPath": "/run/udev"}, {"name": "sys", "mountPath": "/sys"}])],
                  "volumes": [hp("registration-dir", "/var/lib/kubelet/plugins_registry", "Directory"),
                              hp("kubelet-dir", "/var/lib/kubelet", "Directory"),
                              hp("plugin-dir", "/var/lib/kubelet/plugins/pd.csi.storage.gke.io", "DirectoryOrCreate"),
                              hp("device-dir", "/dev", "Directory"), hp("udev-rules-etc", "/etc/udev", "Directory"),
                              hp("udev-rules-lib", "/lib/udev", "Directory"), hp("udev-socket", "/run/udev", "Directory"),
                              hp("sys", "/sys", "Directory")]}}
c.daemonset("pdcsi-node", "kube-system", {"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": "gcp-compute-persistent-disk-csi-driver"},
            pdcsi, nodes, host_network=True, update={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})

ADDON = {"addonmanager.kubernetes.io/mode": "Reconcile"}
GKE_TOL = [{"key": "CriticalAddonsOnly", "operator": "Exists"},
           {"key": "components.gke.io/gke-managed-components", "operator": "Exists"},
           {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"}]
kd = {"metadata": {"labels": {"k8s-app": "kube-dns"},
                   "annotations": {"components.gke.io/component-name": "kubedns", "prometheus.io/port": "10054",
                                   "prometheus.io/scrape": "true", "scheduler.alpha.kubernetes.io/critical-pod": ""}},
      "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "kube-dns", "dnsPolicy": "Default",
               "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": GKE_TOL,
               "securityContext": {"fsGroup": 65534, "supplementalGroups": [65534]},
               "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                   "labelSelector": {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]},
                   "topologyKey": "kubernetes.io/hostname"}}]}},
               "containers": [
                   ctr("kubedns", f"{REG}/k8s-dns-kube-dns:1.26.4-gke.2",
                       args=["--domain=cluster.local.", "--dns-port=10053", "--config-dir=/kube-dns-config", "--v=2"],
                       ports=[{"containerPort": 10053, "name": "dns-local", "protocol": "UDP"},
                              {"containerPort": 10053, "name": "dns-tcp-local", "protocol": "TCP"},
                              {"containerPort": 10055, "name": "metrics", "protocol": "TCP"}],
                       resources={"limits": {"memory": "210Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                       readinessProbe={"httpGet": {"path": "/readiness", "port": 8081, "scheme": "HTTP"}, "initialDelaySeconds": 3},
                       volumeMounts=[{"name": "kube-dns-config", "mountPath": "/kube-dns-config"}]),
                   ctr("dnsmasq", f"{REG}/k8s-dns-dnsmasq-nanny:1.26.4-gke.2",
                       args=["-v=2", "-logtostderr", "-configDir=/etc/k8s/dns/dnsmasq-nanny", "-restartDnsmasq=true", "--",
                             "-k", "--cache-size=1000", "--no-negcache", "--dns-forward-max=1500", "--log-facility=-",
                             "--server=/cluster.local/127.0.0.1#10053"],
                       ports=[{"containerPort": 53, "name": "dns", "protocol": "UDP"}, {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"}],
                       resources={"requests": {"cpu": "150m", "memory": "20Mi"}},
                       securityContext={"capabilities": {"add": ["NET_BIND_SERVICE", "SETGID"], "drop": ["all"]}}),
                   ctr("sidecar", f"{REG}/k8s-dns-sidecar:1.26.4-gke.2",
                       args=["--v=2", "--logtostderr", "--probe=kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,SRV",
                             "--probe=dnsmasq,127.0.0.1:53,kubernetes.default.svc.cluster.local,5,SRV"],
                       ports=[{"containerPort": 10054, "name": "metrics", "protocol": "TCP"}],
                       resources={"requests": {"cpu": "10m", "memory": "20Mi"}})],
               "volumes": [{"name": "kube-dns-config", "configMap": {"name": "kube-dns", "optional": True, "defaultMode": 420}}]}}
_, dns_pods = c.deployment("kube-dns", "kube-system", dict(ADDON, **{"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true"}),
                           kd, 2, nodes, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}})
kda = {"metadata": {"labels": {"k8s-app": "kube-dns-autoscaler"}},
       "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "kube-dns-autoscaler",
                "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": GKE_TOL,
                "securityContext": {"fsGroup": 65534, "supplementalGroups": [65534], "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [ctr("autoscaler", f"{REG}/cluster-proportional-autoscaler:v1.8.11-gke.31",
                                   command=["/cluster-proportional-autoscaler", "--namespace=kube-system",
                                            "--configmap=kube-dns-autoscaler", "--target=Deployment/kube-dns",
                                            "--default-params={\"linear\":{\"coresPerReplica\":256,\"nodesPerReplica\":16,\"preventSinglePointFailure\":true,\"includeUnschedulableNodes\":true}}",
                                            "--logtostderr=true", "--v=2"])]}}
c.deployment("kube-dns-autoscaler", "kube-system", dict(ADDON, **{"k8s-app": "kube-dns-autoscaler"}), kda, 1, nodes)
ka = {"metadata": {"labels": {"k8s-app": "konnectivity-agent"},
                   "annotations": {"components.gke.io/component-name": "konnectivitynetworkproxy-combined"}},
      "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "konnectivity-agent",
               "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": GKE_TOL,
               "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"k8s-app": "konnectivity-agent"}}},
                                             {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                              "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"k8s-app": "konnectivity-agent"}}}],
               "containers": [ctr("konnectivity-agent", f"{REG}/proxy-agent:v0.33.0-gke.4",
                                  command=["/proxy-agent"],
                                  args=["--logtostderr=true", "--ca-cert=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                                        "--proxy-server-host=34.118.0.2", "--proxy-server-port=8132", "--health-server-port=8093",
                                        "--admin-server-port=8094", "--sync-forever=true", "--keepalive-time=60s"],
                                  livenessProbe={"httpGet": {"path": "/healthz", "port": 8093, "scheme": "HTTP"}, "initialDelaySeconds": 15})]}}
c.deployment("konnectivity-agent", "kube-system", dict(ADDON, **{"k8s-app": "konnectivity-agent"}), ka, 3, nodes)
ms = {"metadata": {"labels": {"k8s-app": "metrics-server", "version": "v1.35.0"},
                   "annotations": {"components.gke.io/component-name": "metrics-server"}},
      "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "metrics-server",
               "nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": GKE_TOL,
               "containers": [ctr("metrics-server", f"{REG}/metrics-server:v0.8.0-gke.12",
                                  command=["/metrics-server", "--metric-resolution=30s", "--kubelet-port=10250",
                                           "--kubelet-preferred-address-types=InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP",
                                           "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
                                  ports=[{"containerPort": 10250, "name": "https", "protocol": "TCP"}],
                                  readinessProbe={"httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"}})]}}
_, ms_pods = c.deployment("metrics-server-v1.35.0", "kube-system", dict(ADDON, **{"k8s-app": "metrics-server", "version": "v1.35.0"}),
                          ms, 1, nodes)

c.service("kube-dns", "kube-system", {"k8s-app": "kube-dns"},
          [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
           {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53}],
          "34.118.224.10", labels=dict(ADDON, **{"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true",
                                                 "kubernetes.io/name": "KubeDNS"}), pods=dns_pods)
c.service("metrics-server", "kube-system", {"k8s-app": "metrics-server"},
          [{"port": 443, "protocol": "TCP", "targetPort": "https"}],
          "34.118.237.45", labels=dict(ADDON, **{"k8s-app": "metrics-server", "kubernetes.io/cluster-service": "true",
                                                 "kubernetes.io/name": "Metrics-server"}), pods=ms_pods)

# GKE's own webhooks, served by the control plane (URL clientConfig). Names
# from kubectl listings and audit-log annotations; rules, failurePolicy and
# selectors as described in the README (partly inferred).
CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
c.webhook_config("Mutating", "pod-ready.config.common-webhooks.networking.gke.io", [{
    "name": "pod-ready.common-webhooks.networking.gke.io", "admissionReviewVersions": ["v1"],
    "clientConfig": {"url": "https://gke-control-plane.invalid/pod-ready", "caBundle": CA},
    "failurePolicy": "Ignore", "matchPolicy": "Equivalent", "reinvocationPolicy": "Never",
    "namespaceSelector": {}, "objectSelector": {},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}],
    "sideEffects": "None", "timeoutSeconds": 2}], labels={"addonmanager.kubernetes.io/mode": "Reconcile"})
c.webhook_config("Mutating", "warden-mutating.config.common-webhooks.networking.gke.io", [{
    "name": "warden-mutating.common-webhooks.networking.gke.io", "admissionReviewVersions": ["v1"],
    "clientConfig": {"url": "https://gke-control-plane.invalid/warden-mutating", "caBundle": CA},
    "failurePolicy": "Fail", "matchPolicy": "Equivalent", "reinvocationPolicy": "Never",
    "namespaceSelector": {}, "objectSelector": {},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"], "scope": "*"}],
    "sideEffects": "None", "timeoutSeconds": 3}], labels={"addonmanager.kubernetes.io/mode": "Reconcile"})
c.webhook_config("Validating", "warden-validating.config.common-webhooks.networking.gke.io", [{
    "name": "warden-validating.common-webhooks.networking.gke.io", "admissionReviewVersions": ["v1"],
    "clientConfig": {"url": "https://gke-control-plane.invalid/warden-validating", "caBundle": CA},
    "failurePolicy": "Fail", "matchPolicy": "Equivalent",
    "namespaceSelector": {}, "objectSelector": {},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"], "scope": "*"}],
    "sideEffects": "None", "timeoutSeconds": 3}], labels={"addonmanager.kubernetes.io/mode": "Reconcile"})
c.webhook_config("Validating", "nodelimit.config.common-webhooks.networking.gke.io", [{
    "name": "nodelimit.common-webhooks.networking.gke.io", "admissionReviewVersions": ["v1"],
    "clientConfig": {"url": "https://gke-control-plane.invalid/nodelimit", "caBundle": CA},
    "failurePolicy": "Ignore", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["nodes"], "scope": "*"}],
    "sideEffects": "None", "timeoutSeconds": 3}], labels={"addonmanager.kubernetes.io/mode": "Reconcile"})

# metrics-server reports not ready while it scrapes the kubelets the first time.
c.event(ms_pods[0], "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500", 4,
        "2026-11-25T08:03:10Z", "2026-11-25T08:03:40Z", "kubelet", ms_pods[0]["spec"]["nodeName"])

api = BUILTIN_API_RESOURCES + """backendconfigs.cloud.google.com
frontendconfigs.networking.gke.io
managedcertificates.networking.gke.io
serviceattachments.networking.gke.io
servicenetworkendpointgroups.networking.gke.io
updateinfos.nodemanagement.gke.io
capacityrequests.internal.autoscaling.gke.io
volumesnapshotclasses.snapshot.storage.k8s.io
volumesnapshotcontents.snapshot.storage.k8s.io
volumesnapshots.snapshot.storage.k8s.io
nodes.metrics.k8s.io
pods.metrics.k8s.io""".split("\n")
# metrics-server registers the resource metrics API.
c.apiservice("metrics.k8s.io", "v1beta1", "kube-system", "metrics-server")

# GKE's Compute Engine persistent disk CSI driver and its standard-rwo class.
# Other built-in classes are left out.
c.storageclass("standard-rwo", "pd.csi.storage.gke.io", default=True, params={"type": "pd-balanced"})
c.csidriver("pd.csi.storage.gke.io")

c.write(sys.argv[1], api, version_doc(VER, hexid(40, "gke", "commit"), "2026-09-02T09:00:00Z", "go1.25.10 X:boringcrypto"))
